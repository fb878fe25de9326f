/**
 * What one peer of live co-editing may cost the server, in one place: its buffered output, its
 * message rate, its awareness (presence) states and queries, and how often the room fans edits out.
 * docs/guarantees.md ("Live co-editing") says the same in words.
 * @module
 */

/** Limits of one connection of `/documents/{ref}/sync` (options of `attachSync`: `peerLimits`). */
export interface PeerLimits {
  /**
   * Bytes the server may hold for a peer that does not read: past them the peer is closed with
   * {@link SLOW_PEER_CLOSE} (and cut off after {@link PeerLimits.closeGraceMs}). One message to a
   * peer with nothing waiting is always sent (a whole document's step 2 may be larger).
   */
  maxBufferedBytes: number;
  /**
   * Messages a peer may send per second, sustained, and in a burst. A peer past its rate is not
   * read for as long as the rate needs (TCP pushes back on it); one still past it by more than a
   * whole burst (it sent faster than it could be paused) is closed with {@link SLOW_PEER_CLOSE}.
   */
  messagesPerSecond: number;
  messageBurst: number;
  /** Bytes a peer may send per second, sustained, and in a burst (at least one largest message). */
  bytesPerSecond: number;
  byteBurst: number;
  /** Awareness (presence) client ids one peer may hold; further ids are ignored. */
  maxAwarenessClients: number;
  /** Largest awareness state of one client (its JSON, bytes); a larger one is ignored. */
  maxAwarenessStateBytes: number;
  /** A peer's query-awareness is answered at most once per this many ms (later ones coalesce). */
  queryAwarenessMs: number;
  /** A room gathers the edits it relays for this long and sends each peer one merged update (ms). */
  broadcastMs: number;
  /** After closing a peer that does not read, how long its close may take before it is cut off (ms). */
  closeGraceMs: number;
}

/** The defaults. */
export const PEER_LIMITS: Readonly<PeerLimits> = Object.freeze({
  maxBufferedBytes: 8 * 1024 * 1024,
  messagesPerSecond: 200,
  messageBurst: 400,
  bytesPerSecond: 4 * 1024 * 1024,
  byteBurst: 8 * 1024 * 1024,
  maxAwarenessClients: 4,
  maxAwarenessStateBytes: 4096,
  queryAwarenessMs: 1000,
  broadcastMs: 10,
  closeGraceMs: 1000,
});

/**
 * Close code of a peer that sent faster than its rate (past a whole burst) or did not read what the
 * server sent (past `maxBufferedBytes`). In y-websocket's "try again later" range (4500-4599): its
 * provider connects again by itself, with its back-off.
 */
export const SLOW_PEER_CLOSE = 4503;

/**
 * Close code of a connection whose credential was revoked or expired, or whose person signed out.
 * In the 4400-4499 range, which y-websocket's provider takes as final: it does not connect again.
 */
export const GRANT_ENDED_CLOSE = 4401;
