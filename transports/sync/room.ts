/**
 * One room per open document: the editor Y.Doc of its live-editing session (`engine.live.open`,
 * src/live/bridge.ts), its awareness, and the peers speaking the y-websocket protocol (y-protocols
 * sync and awareness, one binary message per WebSocket frame).
 * @module
 */
import * as Y from 'yjs';
import * as awarenessProtocol from 'y-protocols/awareness';
import type { Actor } from '../../src/actor.ts';
import type { LiveSession } from '../../src/live/bridge.ts';
import { PEER_LIMITS, type PeerLimits } from './limits.ts';
import { UpdateBatcher, type PeerGuard } from './peer-guard.ts';
import { encodeMessage, MESSAGE_AUTH, MESSAGE_AWARENESS, MESSAGE_QUERY_AWARENESS, MESSAGE_SYNC, MessageReader, SYNC_STEP1, SYNC_STEP2, SYNC_UPDATE } from './codec.ts';

export { MESSAGE_AUTH, MESSAGE_AWARENESS, MESSAGE_QUERY_AWARENESS, MESSAGE_SYNC } from './codec.ts';

/** What a room needs of a peer's WebSocket (a `ws` WebSocket). */
export interface PeerSocket {
  readonly readyState: number;
  send(data: Uint8Array, callback: (error?: Error) => void): void;
  close(code: number, reason: string): void;
  terminate(): void;
}

/** One connected editor. */
export interface Peer {
  socket: PeerSocket;
  actor: Actor;
  /** False for a read-only connection: its document updates are dropped. */
  canWrite: boolean;
  /** Awareness client ids this peer announced (removed when it leaves). */
  clients: Set<number>;
  /** Its limits (./peer-guard.ts): every message to it goes through `guard.send`. */
  guard: PeerGuard;
}

export { STALE_DOCUMENT_CLOSE } from '../../src/blocks/editor-protocol.ts';

/**
 * A peer's sync step 1 names a Y.Doc that never synced with this room although it holds content:
 * merging it would put a second copy of every block into the document (Yjs cannot tell that the
 * earlier room's items and this room's are the same blocks).
 */
/**
 * The room's Y.Doc grew past its bound (far past anything the API could commit): the room is
 * closed, every peer with STALE_DOCUMENT_CLOSE, so that it opens again from the last version.
 */
export class RoomTooLargeError extends Error {
  constructor(readonly bytes: number, readonly limit: number) {
    super(`The document's live copy grew to ${bytes} bytes, past the ${limit} a room holds; it opens again from the last version.`);
    this.name = 'RoomTooLargeError';
  }
}

export class StaleDocumentError extends Error {
  constructor() {
    super('This Y.Doc holds another copy of the document (an earlier session of the room); connect again with an empty Y.Doc.');
    this.name = 'StaleDocumentError';
  }
}

/** The peers of one document and their shared editor doc. */
export class Room {
  readonly peers = new Set<Peer>();
  readonly awareness: awarenessProtocol.Awareness;
  /** Update bytes applied since the doc's size was last measured. */
  private unmeasured = 0;
  /** Edits relayed to the peers, gathered for `limits.broadcastMs`. */
  private readonly relay: UpdateBatcher<Peer>;

  /**
   * @param maxDocumentBytes the largest the doc may grow (its state as one update), measured each
   * time `measureEvery` more bytes of peers' updates were applied.
   */
  constructor(
    readonly bridge: LiveSession,
    private readonly maxDocumentBytes = 16 * 1024 * 1024,
    private readonly measureEvery = 4 * 1024 * 1024,
    limits: Pick<PeerLimits, 'broadcastMs'> = PEER_LIMITS,
  ) {
    const doc = bridge.doc;
    this.relay = new UpdateBatcher(limits.broadcastMs, () => this.peers, (p, update) => send(p, encodeMessage([MESSAGE_SYNC, SYNC_UPDATE], update)));
    this.awareness = new awarenessProtocol.Awareness(doc);
    this.awareness.setLocalState(null);
    doc.on('update', (update: Uint8Array, origin: unknown) => {
      this.relay.add(update, origin);
    });
    // A peer's update is applied with the peer as its transaction's origin: the bridge notes its edits as that person's.
    bridge.attribute((origin) => (this.peers.has(origin as Peer) ? (origin as Peer).actor : null));
    this.awareness.on('update', ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
      const changed = [...added, ...updated, ...removed];
      const peer = origin as Peer;
      if (this.peers.has(peer)) {
        for (const id of added) peer.clients.add(id);
        for (const id of removed) peer.clients.delete(id);
      }
      this.broadcast(this.awarenessMessage(changed));
    });
  }

  private awarenessMessage(clients: number[]): Uint8Array {
    return encodeMessage([MESSAGE_AWARENESS], awarenessProtocol.encodeAwarenessUpdate(this.awareness, clients));
  }

  private broadcast(message: Uint8Array): void {
    for (const p of this.peers) send(p, message);
  }

  /** Add a connected peer: start the sync (step 1 and step 2) and send the awareness states. */
  join(peer: Peer): void {
    this.peers.add(peer);
    const doc = this.bridge.doc;
    send(peer, encodeMessage([MESSAGE_SYNC, SYNC_STEP1], Y.encodeStateVector(doc)));
    const states = this.awareness.getStates();
    if (states.size > 0) send(peer, this.awarenessMessage([...states.keys()]));
  }

  /** Remove a peer and its awareness states; true when the room is now empty. */
  leave(peer: Peer): boolean {
    if (!this.peers.delete(peer)) return this.peers.size === 0;
    if (peer.clients.size) awarenessProtocol.removeAwarenessStates(this.awareness, [...peer.clients], null);
    return this.peers.size === 0;
  }

  /** Handle one message of a peer; a malformed one closes its connection. */
  receive(peer: Peer, data: Uint8Array): void {
    const reader = new MessageReader(data);
    const type = reader.varUint();
    if (type === MESSAGE_SYNC) {
      const sub = reader.varUint();
      if (sub === SYNC_STEP1) {
        const vector = reader.varUint8Array();
        // Every doc that synced with this room holds the room's own items (the fragment it wrote
        // when it opened); a doc with content but none of them is another copy of the document.
        const clients = Y.decodeStateVector(vector);
        if (clients.size > 0 && !clients.has(this.bridge.doc.clientID)) throw new StaleDocumentError();
        // At most one step 2 in flight per peer: a flood of step 1s is answered once, not once each.
        peer.guard.answerStep1(vector, (v) => encodeMessage([MESSAGE_SYNC, SYNC_STEP2], Y.encodeStateAsUpdate(this.bridge.doc, v)));
        return;
      }
      if (sub !== SYNC_STEP2 && sub !== SYNC_UPDATE) throw new Error(`unknown sync message ${sub}`);
      const update = reader.varUint8Array();
      if (!peer.canWrite) return; // read-only: its edits are dropped
      Y.applyUpdate(this.bridge.doc, update, peer);
      this.unmeasured += update.byteLength;
      if (this.unmeasured >= this.measureEvery) {
        this.unmeasured = 0;
        const bytes = Y.encodeStateAsUpdate(this.bridge.doc).byteLength;
        if (bytes > this.maxDocumentBytes) throw new RoomTooLargeError(bytes, this.maxDocumentBytes);
      }
      return;
    }
    if (type === MESSAGE_AWARENESS) {
      // Only states of the peer's own client ids (few, small): no one replaces another's presence.
      const own = peer.guard.awareness(reader.varUint8Array(), peer.clients, (id) => this.holdsElsewhere(peer, id));
      if (own !== null) awarenessProtocol.applyAwarenessUpdate(this.awareness, own, peer);
      return;
    }
    if (type === MESSAGE_QUERY_AWARENESS) {
      peer.guard.queryAwareness(() => this.awarenessMessage([...this.awareness.getStates().keys()]));
      return;
    }
    if (type === MESSAGE_AUTH) return;
    throw new Error(`unknown message type ${type}`);
  }

  /** True when a client id is the room's own or another peer's. */
  private holdsElsewhere(peer: Peer, clientId: number): boolean {
    if (clientId === this.awareness.clientID) return true;
    for (const p of this.peers) if (p !== peer && p.clients.has(clientId)) return true;
    return false;
  }

  /** Free the room's awareness and relay (the bridge is closed by its owner). */
  destroy(): void {
    this.relay.dispose();
    this.awareness.destroy();
  }
}

function send(peer: Peer, message: Uint8Array): void {
  peer.guard.send(message);
}
