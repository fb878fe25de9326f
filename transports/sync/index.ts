/**
 * Live co-editing: the y-websocket protocol on a node:http server's `upgrade` event, one room per
 * open document, bridged to the document's API versions (docs/co-editing.md). What an embedder
 * mounts and configures; the rooms, the bridge and the wire codec are inside.
 * @module
 */
export { attachSync, type SyncGrant, type SyncOptions, type SyncServer } from './attach.ts';
export { RELAY_RECONNECT_CLOSE, type RelayTiming } from './relay.ts';
export type { SyncTiming } from './bridge.ts';
export { STALE_DOCUMENT_CLOSE } from './room.ts';
export { EDITOR_FRAGMENT, readFragment, writeFragment, type EditorBlock } from '../../src/blocks/editor-fragment.ts';
