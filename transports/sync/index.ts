/**
 * Live co-editing: the y-websocket protocol on a node:http server's `upgrade` event, one room per
 * open document, bridged to the document's API versions (docs/co-editing.md).
 * @module
 */
export { attachSync, type SyncGrant, type SyncOptions, type SyncServer } from './attach.ts';
export { defaultRelayTiming, LEASE_COLLECTION, RELAY_RECONNECT_CLOSE, type Lease, type RelayTiming } from './relay.ts';
export { BRIDGE_ORIGIN, DocumentBridge, defaultTiming, type SyncTiming } from './bridge.ts';
export { Room, RoomTooLargeError, StaleDocumentError, STALE_DOCUMENT_CLOSE, type Peer, type PeerSocket } from './room.ts';
export { encodeMessage, MessageReader, MESSAGE_AUTH, MESSAGE_AWARENESS, MESSAGE_QUERY_AWARENESS, MESSAGE_SYNC, SYNC_STEP1, SYNC_STEP2, SYNC_UPDATE } from './codec.ts';
export { EDITOR_FRAGMENT, readFragment, writeFragment, type EditorBlock } from '../../src/blocks/editor-fragment.ts';
