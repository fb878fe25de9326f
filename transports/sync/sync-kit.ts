/**
 * Test and benchmark helpers of live co-editing: a minimal y-websocket client in Node (y-protocols
 * sync and awareness over `ws`), editing helpers on BlockNote's fragment, and a refused-upgrade probe.
 * @module
 */
import WebSocket from 'ws';
import * as awarenessProtocol from 'y-protocols/awareness';
import * as Y from 'yjs';
import { EDITOR_FRAGMENT, readFragment, type EditorBlock } from '../../src/blocks/editor-fragment.ts';
export { plainTextOf as plainText } from '../../src/blocks/editor-fragment.ts';
import { encodeMessage, MESSAGE_AWARENESS, MESSAGE_SYNC, MessageReader, SYNC_STEP1, SYNC_STEP2, SYNC_UPDATE } from './codec.ts';

const REMOTE = Symbol('remote');

/** A y-websocket client of one document (what a BlockNote editor's provider does, minus the editor). */
export class SyncClient {
  readonly doc = new Y.Doc();
  readonly fragment = this.doc.getXmlFragment(EDITOR_FRAGMENT);
  readonly awareness = new awarenessProtocol.Awareness(this.doc);
  private listeners = new Set<() => void>();
  private constructor(readonly socket: WebSocket) {}

  /**
   * Connect to `ws://…/documents/{ref}/sync` and resolve once the first sync is done (the server's
   * step 2 arrived).
   */
  static connect(url: string, token?: string): Promise<SyncClient> {
    const socket = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, perMessageDeflate: false });
    const client = new SyncClient(socket);
    return new Promise((resolve, reject) => {
      let synced = false;
      socket.binaryType = 'nodebuffer';
      socket.on('open', () => socket.send(encodeMessage([MESSAGE_SYNC, SYNC_STEP1], Y.encodeStateVector(client.doc))));
      socket.on('message', (data: Buffer) => {
        const reader = new MessageReader(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
        const type = reader.varUint();
        if (type === MESSAGE_SYNC) {
          const sub = reader.varUint();
          const payload = reader.varUint8Array();
          if (sub === SYNC_STEP1) socket.send(encodeMessage([MESSAGE_SYNC, SYNC_STEP2], Y.encodeStateAsUpdate(client.doc, payload)));
          else Y.applyUpdate(client.doc, payload, REMOTE);
          if (sub === SYNC_STEP2 && !synced) {
            synced = true;
            resolve(client);
          }
        } else if (type === MESSAGE_AWARENESS) {
          awarenessProtocol.applyAwarenessUpdate(client.awareness, reader.varUint8Array(), REMOTE);
        }
        for (const l of [...client.listeners]) l();
      });
      socket.on('error', reject);
      socket.on('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      client.awareness.on('update', ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
        if (origin === REMOTE || socket.readyState !== WebSocket.OPEN) return;
        socket.send(encodeMessage([MESSAGE_AWARENESS], awarenessProtocol.encodeAwarenessUpdate(client.awareness, [...added, ...updated, ...removed])));
      });
      client.doc.on('update', (update: Uint8Array, origin: unknown) => {
        if (origin === REMOTE) return;
        socket.send(encodeMessage([MESSAGE_SYNC, SYNC_UPDATE], update));
      });
    });
  }

  /** The fragment's blocks. */
  blocks(): EditorBlock[] {
    return readFragment(this.fragment);
  }

  /** Resolve once `ready()` holds (checked after every message from the server); reject after `ms`. */
  until(ready: () => boolean, what: string, ms = 10_000): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`timed out waiting for ${what}`));
      }, ms);
      const check = () => {
        if (!ready()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
    });
  }

  /**
   * Resolve once the server has handled every message this client sent so far: a sync step 1 goes
   * out and its step 2 comes back on the same (ordered) connection.
   */
  roundTrip(): Promise<void> {
    return new Promise((resolve) => {
      const onMessage = (data: Buffer) => {
        if (data[0] === MESSAGE_SYNC && data[1] === SYNC_STEP2) {
          this.socket.off('message', onMessage);
          resolve();
        }
      };
      this.socket.on('message', onMessage);
      this.socket.send(encodeMessage([MESSAGE_SYNC, SYNC_STEP1], Y.encodeStateVector(this.doc)));
    });
  }

  /** Type `text` at `offset` of block `id`'s first text (as a person would in the editor). */
  type(id: string, text: string, offset = 0): void {
    const container = findContainer(this.fragment, id);
    if (!container) throw new Error(`no block ${id} in the fragment`);
    const content = container.get(0) as Y.XmlElement;
    let t = content.toArray().find((c): c is Y.XmlText => c instanceof Y.XmlText);
    this.doc.transact(() => {
      if (!t) {
        t = new Y.XmlText();
        content.insert(0, [t]);
      }
      t.insert(Math.min(offset, t.length), text);
    });
  }

  /**
   * Close the connection and wait for it to end. The awareness is destroyed too: its renewal
   * interval (y-protocols, every 3 s) would otherwise keep the process alive.
   */
  close(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.socket.readyState === WebSocket.CLOSED) return resolve();
      this.socket.once('close', () => resolve());
      this.socket.close();
    }).then(() => this.awareness.destroy());
  }
}

/** The `blockContainer` of block `id`, anywhere in the fragment. */
export function findContainer(fragment: Y.XmlFragment, id: string): Y.XmlElement | undefined {
  for (const node of fragment.createTreeWalker((n) => n instanceof Y.XmlElement && n.nodeName === 'blockContainer' && n.getAttribute('id') === id)) {
    return node as Y.XmlElement;
  }
  return undefined;
}

/** Plain text of a block list (every text, depth first), to compare what two sides hold. */

/** Try an upgrade and report the HTTP answer that refused it (status and JSON body). */
export function refusal(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on('open', () => {
      socket.terminate();
      reject(new Error('the upgrade was accepted'));
    });
    socket.on('error', () => {});
    socket.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const answered = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') answered.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: answered, body: text ? JSON.parse(text) : null });
      });
    });
  });
}
