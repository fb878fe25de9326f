/**
 * What the document page's editor and the server's live co-editing rooms must agree on, in one
 * place both import (this module has no imports: it is bundled into the browser code as it is).
 * @module
 */

/** The Y.XmlFragment a BlockNote editor collaborates on (its `collaboration.fragment`). */
export const EDITOR_FRAGMENT = 'document-store';

/**
 * The WebSocket close code of a peer whose Y.Doc holds another copy of the document (an earlier
 * room's, from before the room was freed or the server restarted), or of every peer of a room that
 * had to open again: y-websocket's providers take a 4400-4499 close as final and do not reconnect.
 * The peer must start over with an empty Y.Doc (the document page reloads).
 */
export const STALE_DOCUMENT_CLOSE = 4409;
