/**
 * The editors of `kw bench coedit`: a y-websocket client in Node, what a BlockNote editor's provider
 * does minus the editor — y-protocols' sync over a WebSocket (`ws`, the same package the server side
 * of transports/sync/ runs on, a runtime dependency of the package) on the document's collaboration
 * fragment (decisions.md, "Live co-editing"). No awareness: the bench measures edits, and the
 * server's awareness messages are read past. The test kit transports/sync/sync-kit.ts is not shipped
 * in the package, so `kw bench` (bundled into dist/kw.mjs) has this client of its own; the wire
 * format is transports/sync/codec.ts's, which is shipped.
 * @module
 */
import WebSocket from 'ws';
import * as Y from 'yjs';
import { EDITOR_FRAGMENT, readFragment, type EditorBlock } from '../../src/blocks/editor-fragment.ts';
export { plainTextOf } from '../../src/blocks/editor-fragment.ts';
import { encodeMessage, MESSAGE_SYNC, MessageReader, SYNC_STEP1, SYNC_STEP2, SYNC_UPDATE } from '../../transports/sync/codec.ts';

/** Origin of updates that came from the server (not sent back). */
const REMOTE = Symbol('kw-bench-remote');

/** The upgrade was answered with an HTTP error (its status and the error envelope's code). */
export class UpgradeRefused extends Error {
  override readonly name = 'UpgradeRefused';
  constructor(
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(`the sync upgrade answered ${status}${code ? ` ${code}` : ''}`);
  }
}

/** One editor: a Y.Doc kept in sync with the document's room over `/documents/{ref}/sync`. */
export class BenchEditor {
  readonly doc = new Y.Doc();
  readonly fragment = this.doc.getXmlFragment(EDITOR_FRAGMENT);
  /** Called after every update from the server has been applied. */
  onRemoteUpdate: (() => void) | null = null;
  /** Set when the connection ended (closed by the server, or an error) before {@link close}. */
  ended: string | null = null;
  private closing = false;
  private readonly texts = new Map<string, Y.XmlText>();

  private constructor(readonly socket: WebSocket) {}

  /**
   * Connect to `ws(s)://…/documents/{ref}/sync` with `Authorization: Bearer <token>` and resolve
   * once the first sync is done (the server's step 2 arrived).
   * @throws UpgradeRefused when the upgrade is answered with an HTTP error.
   */
  static connect(url: string, token: string, timeoutMs = 15_000): Promise<BenchEditor> {
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
    socket.binaryType = 'nodebuffer';
    const editor = new BenchEditor(socket);
    return new Promise((resolve, reject) => {
      let synced = false;
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error(`no first sync within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.on('open', () => socket.send(encodeMessage([MESSAGE_SYNC, SYNC_STEP1], Y.encodeStateVector(editor.doc))));
      socket.on('message', (data: Buffer) => {
        const reader = new MessageReader(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
        if (reader.varUint() !== MESSAGE_SYNC) return; // awareness and the rest: not measured
        const sub = reader.varUint();
        const payload = reader.varUint8Array();
        if (sub === SYNC_STEP1) {
          socket.send(encodeMessage([MESSAGE_SYNC, SYNC_STEP2], Y.encodeStateAsUpdate(editor.doc, payload)));
          return;
        }
        Y.applyUpdate(editor.doc, payload, REMOTE);
        if (sub === SYNC_STEP2 && !synced) {
          synced = true;
          clearTimeout(timer);
          resolve(editor);
        }
        editor.onRemoteUpdate?.();
      });
      socket.on('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let code: string | undefined;
          try {
            code = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { code?: string } }).error?.code;
          } catch {
            code = undefined;
          }
          clearTimeout(timer);
          socket.terminate();
          reject(new UpgradeRefused(res.statusCode ?? 0, code));
        });
      });
      socket.on('error', (error) => {
        editor.ended ??= (error as NodeJS.ErrnoException).code ?? error.message;
        if (!synced) {
          clearTimeout(timer);
          reject(error);
        }
      });
      socket.on('close', (code) => {
        if (!editor.closing) editor.ended ??= `the server closed the connection (${code})`;
        if (!synced) {
          clearTimeout(timer);
          reject(new Error(`the server closed the connection (${code}) before the first sync`));
        }
      });
      editor.doc.on('update', (update: Uint8Array, origin: unknown) => {
        if (origin === REMOTE || socket.readyState !== WebSocket.OPEN) return;
        socket.send(encodeMessage([MESSAGE_SYNC, SYNC_UPDATE], update));
      });
    });
  }

  /** The first text of block `id`'s content (cached while it stays in the document). */
  text(id: string): Y.XmlText | undefined {
    const cached = this.texts.get(id);
    if (cached && cached._item !== null && !cached._item.deleted && cached.parent?._item?.deleted === false) return cached;
    this.texts.delete(id);
    for (const node of this.fragment.createTreeWalker((n) => n instanceof Y.XmlElement && n.nodeName === 'blockContainer' && n.getAttribute('id') === id)) {
      const content = (node as Y.XmlElement).get(0);
      if (!(content instanceof Y.XmlElement)) return undefined;
      const t = content.toArray().find((c): c is Y.XmlText => c instanceof Y.XmlText);
      if (t) this.texts.set(id, t);
      return t;
    }
    return undefined;
  }

  /** Type `chars` at the end of block `id`'s text, as a person's keystroke; the text's new length. */
  type(id: string, chars: string): number {
    const t = this.text(id);
    if (!t) throw new Error(`no text in block ${id} of the editor's document`);
    t.insert(t.length, chars);
    return t.length;
  }

  /** The document's blocks as the editor holds them. */
  blocks(): EditorBlock[] {
    return readFragment(this.fragment);
  }

  /** Close the connection and wait for it to end. */
  close(): Promise<void> {
    this.closing = true;
    return new Promise<void>((resolve) => {
      if (this.socket.readyState === WebSocket.CLOSED) return resolve();
      const timer = setTimeout(() => {
        this.socket.terminate();
        resolve();
      }, 2000);
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.socket.close();
    });
  }
}

