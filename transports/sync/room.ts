/**
 * One room per open document: the bridge's editor Y.Doc, its awareness, and the peers speaking the
 * y-websocket protocol (y-protocols sync and awareness, one binary message per WebSocket frame).
 * @module
 */
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import type { WebSocket } from 'ws';
import * as Y from 'yjs';
import * as awarenessProtocol from 'y-protocols/awareness';
import * as syncProtocol from 'y-protocols/sync';
import type { Actor } from '../../src/deps.ts';
import { BRIDGE_ORIGIN, type DocumentBridge } from './bridge.ts';

/** y-websocket's message types. */
export const MESSAGE_SYNC = 0;
export const MESSAGE_AWARENESS = 1;
export const MESSAGE_AUTH = 2;
export const MESSAGE_QUERY_AWARENESS = 3;

/** One connected editor. */
export interface Peer {
  socket: WebSocket;
  actor: Actor;
  /** False for a read-only connection: its document updates are dropped. */
  canWrite: boolean;
  /** Awareness client ids this peer announced (removed when it leaves). */
  clients: Set<number>;
}

const OPEN = 1;

/** The peers of one document and their shared editor doc. */
export class Room {
  readonly peers = new Set<Peer>();
  readonly awareness: awarenessProtocol.Awareness;

  constructor(readonly bridge: DocumentBridge) {
    const doc = bridge.doc;
    this.awareness = new awarenessProtocol.Awareness(doc);
    this.awareness.setLocalState(null);
    doc.on('update', (update: Uint8Array, origin: unknown) => {
      const encoder = encoding.createEncoder();
      encoding.writeVarUint(encoder, MESSAGE_SYNC);
      syncProtocol.writeUpdate(encoder, update);
      this.broadcast(encoding.toUint8Array(encoder), origin as Peer | undefined);
      if (origin !== BRIDGE_ORIGIN && this.peers.has(origin as Peer)) bridge.edited((origin as Peer).actor);
    });
    this.awareness.on('update', ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
      const changed = [...added, ...updated, ...removed];
      const peer = origin as Peer;
      if (this.peers.has(peer)) {
        for (const id of added) peer.clients.add(id);
        for (const id of removed) peer.clients.delete(id);
      }
      const encoder = encoding.createEncoder();
      encoding.writeVarUint(encoder, MESSAGE_AWARENESS);
      encoding.writeVarUint8Array(encoder, awarenessProtocol.encodeAwarenessUpdate(this.awareness, changed));
      this.broadcast(encoding.toUint8Array(encoder));
    });
  }

  private broadcast(message: Uint8Array, except?: Peer): void {
    for (const p of this.peers) if (p !== except) send(p, message);
  }

  /** Add a connected peer: start the sync (step 1 and step 2) and send the awareness states. */
  join(peer: Peer): void {
    this.peers.add(peer);
    const doc = this.bridge.doc;
    const step1 = encoding.createEncoder();
    encoding.writeVarUint(step1, MESSAGE_SYNC);
    syncProtocol.writeSyncStep1(step1, doc);
    send(peer, encoding.toUint8Array(step1));
    const states = this.awareness.getStates();
    if (states.size > 0) {
      const encoder = encoding.createEncoder();
      encoding.writeVarUint(encoder, MESSAGE_AWARENESS);
      encoding.writeVarUint8Array(encoder, awarenessProtocol.encodeAwarenessUpdate(this.awareness, [...states.keys()]));
      send(peer, encoding.toUint8Array(encoder));
    }
  }

  /** Remove a peer and its awareness states; true when the room is now empty. */
  leave(peer: Peer): boolean {
    if (!this.peers.delete(peer)) return this.peers.size === 0;
    if (peer.clients.size) awarenessProtocol.removeAwarenessStates(this.awareness, [...peer.clients], null);
    return this.peers.size === 0;
  }

  /** Handle one message of a peer; a malformed one closes its connection. */
  receive(peer: Peer, data: Uint8Array): void {
    const decoder = decoding.createDecoder(data);
    const type = decoding.readVarUint(decoder);
    if (type === MESSAGE_SYNC) {
      const sub = decoding.readVarUint(decoder);
      if (sub === syncProtocol.messageYjsSyncStep1) {
        const encoder = encoding.createEncoder();
        encoding.writeVarUint(encoder, MESSAGE_SYNC);
        syncProtocol.writeSyncStep2(encoder, this.bridge.doc, decoding.readVarUint8Array(decoder));
        send(peer, encoding.toUint8Array(encoder));
        return;
      }
      if (sub !== syncProtocol.messageYjsSyncStep2 && sub !== syncProtocol.messageYjsUpdate) throw new Error(`unknown sync message ${sub}`);
      const update = decoding.readVarUint8Array(decoder);
      if (!peer.canWrite) return; // read-only: its edits are dropped
      Y.applyUpdate(this.bridge.doc, update, peer);
      return;
    }
    if (type === MESSAGE_AWARENESS) {
      awarenessProtocol.applyAwarenessUpdate(this.awareness, decoding.readVarUint8Array(decoder), peer);
      return;
    }
    if (type === MESSAGE_QUERY_AWARENESS) {
      const encoder = encoding.createEncoder();
      encoding.writeVarUint(encoder, MESSAGE_AWARENESS);
      encoding.writeVarUint8Array(encoder, awarenessProtocol.encodeAwarenessUpdate(this.awareness, [...this.awareness.getStates().keys()]));
      send(peer, encoding.toUint8Array(encoder));
      return;
    }
    if (type === MESSAGE_AUTH) return;
    throw new Error(`unknown message type ${type}`);
  }

  /** Free the room's awareness (the bridge is closed by its owner). */
  destroy(): void {
    this.awareness.destroy();
  }
}

function send(peer: Peer, message: Uint8Array): void {
  if (peer.socket.readyState !== OPEN) return;
  peer.socket.send(message, (error) => {
    if (error) peer.socket.terminate();
  });
}
