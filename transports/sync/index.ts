/**
 * Live co-editing: the y-websocket protocol on a node:http server's `upgrade` event, one room per
 * open document, bridged to the document's API versions (docs/co-editing.md). What an embedder
 * mounts and configures; the rooms and the wire codec are inside, the rules are the engine's
 * live-editing service (`engine.live`, src/live/).
 * @module
 */
export { attachSync, type SyncGrant, type SyncOptions, type SyncServer } from './attach.ts';
export { RELAY_RECONNECT_CLOSE, type RelayTiming } from './relay.ts';
export type { SyncTiming } from '../../src/live/bridge.ts';
export { STALE_DOCUMENT_CLOSE } from './room.ts';
export { EDITOR_FRAGMENT, readFragment, writeFragment, type EditorBlock } from '../../src/blocks/editor-fragment.ts';
