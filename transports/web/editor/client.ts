/**
 * The document page's editor (browser code, bundled by app/editor-bundle.ts with esbuild; never
 * imported by the server). The page's script imports this module lazily when the page has an
 * `#editor` element; until it has loaded and synced, the server-rendered document stays the page.
 * A BlockNote 0.55 editor joins the document's y-websocket room at `data-sync` (same origin: the
 * browser sends the session cookie), bound to the collaboration fragment `document-store`, with no
 * initial content: the server's fragment is the content.
 * @module
 */
import '@blocknote/core/style.css';
import { BlockNoteEditor } from '@blocknote/core';
import { withCollaboration } from '@blocknote/core/yjs';
import * as Y from 'yjs';
import { WebsocketProvider } from 'y-websocket';
import { EDITOR_FRAGMENT, STALE_DOCUMENT_CLOSE } from '../../../src/blocks/editor-protocol.ts';

/** What the page exposes once the editor runs (for the page's own status line and for tests). */
export interface PageEditor {
  editor: BlockNoteEditor;
  provider: WebsocketProvider;
  doc: Y.Doc;
}

const COLORS = ['#0b57d0', '#137333', '#a50e0e', '#8430ce', '#b06000'];

/** Mount the editor into `host` (the `#editor` element) and hide the rendered fallback once synced. */
export function mountEditor(host: HTMLElement): PageEditor {
  const sync = host.dataset.sync!; // `/documents/{ref}/sync`: the provider appends the room name `sync`
  const base = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${sync.replace(/\/sync$/, '')}`;
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(base, 'sync', doc);
  const name = host.dataset.person ?? 'Person';
  const color = COLORS[Math.abs([...name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 7)) % COLORS.length]!;
  const nonce = host.dataset.nonce;
  const editor = BlockNoteEditor.create(
    withCollaboration({
      collaboration: { provider, fragment: doc.getXmlFragment(EDITOR_FRAGMENT), user: { name, color } },
      ...(nonce ? { _tiptapOptions: { injectNonce: nonce } } : {}),
    }),
  );
  const status = document.getElementById('live-status'); // the page's one status line
  const fallback = document.getElementById('doc-body');
  provider.on('status', ({ status: s }: { status: string }) => {
    if (status) status.textContent = s === 'connected' ? 'Editing live with everyone on this document.' : 'Reconnecting the editor…';
  });
  // The server's room started afresh (the server restarted, or everyone had left) while this page
  // was away: its doc is another copy of the document, which the room refuses for good (4409)
  // rather than doubling every block. Load the page again: a new doc joins the room.
  provider.on('closed', ({ code }: { code: number }) => {
    if (code !== STALE_DOCUMENT_CLOSE) return;
    if (status) status.textContent = 'The document was reopened on the server; loading it again (edits made while disconnected are not kept)…';
    location.reload();
  });
  provider.on('sync', (synced: boolean) => {
    if (!synced) return;
    if (!host.hasChildNodes()) editor.mount(host);
    host.hidden = false;
    if (fallback) fallback.hidden = true;
    host.dataset.state = 'ready';
  });
  return { editor, provider, doc };
}

const host = document.getElementById('editor');
if (host && !host.dataset.state) {
  host.dataset.state = 'loading';
  (globalThis as { kwEditor?: PageEditor }).kwEditor = mountEditor(host);
}
