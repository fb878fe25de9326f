/**
 * Live co-editing across processes (several `kw serve --storage postgres` on one database): one
 * process hosts a document's room (its *owner*, holding a lease in the storage); every other process
 * forwards its editors' WebSocket traffic to the owner and the owner's answers back, over the
 * storage's ephemeral channel (`engine.live.relay.publish`: PostgreSQL NOTIFY). The owner's
 * room treats a forwarded editor as one of its peers (a {@link RemoteSocket}), so keystrokes,
 * awareness (cursors), the version rhythm and attribution are exactly those of one process: each
 * person's edits are committed once, by the owner, as that person. Why ownership rather than relaying
 * Yjs updates between rooms: docs/co-editing.md, "Several processes".
 *
 * - Lease: the engine's live-editing service keeps the record (`engine.live.relay`,
 *   src/live/leases.ts): claimed when absent or expired, renewed every {@link RelayTiming.renewMs}
 *   while the room is open, let go when it closes. A process that finds a live lease of another
 *   process forwards.
 * - Wire: each process listens on its own channel `kw-sync:{processId}`; a payload is a batch of
 *   envelopes (a JSON header and an optional y-websocket frame), one publish in flight per
 *   destination (so they arrive in order), the rest batched behind it.
 * - Liveness: a forwarder pings each owner it forwards to every {@link RelayTiming.pingMs} with the
 *   keys of its live peers; an owner drops the forwarded peers of a process it has not heard from for
 *   {@link RelayTiming.peerTimeoutMs} (their awareness disappears with them) and those a ping no
 *   longer lists. A forwarder closes its peers (1012: reconnect) when the owner's lease expired or
 *   passed to another process (the owner died); they reconnect and land in the new owner's room.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { Actor } from '../../src/actor.ts';
import type { Lease, LeaseHolder, LiveRelayPort } from '../../src/live/leases.ts';
import { encodeMessage, MessageReader } from './codec.ts';
import { RoomTooLargeError, StaleDocumentError, STALE_DOCUMENT_CLOSE, type Peer, type PeerSocket, type Room } from './room.ts';
import { PEER_LIMITS } from './limits.ts';
import { PeerGuard } from './peer-guard.ts';

/** The relay's timers (ms). */
export interface RelayTiming {
  /** A lease lasts this long after its last renewal. Default 6000. */
  leaseMs: number;
  /** An owner renews its leases this often. Default 1500. */
  renewMs: number;
  /** A forwarder pings its owners (and checks their leases) this often. Default 1000. */
  pingMs: number;
  /** An owner drops the forwarded peers of a process silent this long. Default 5000. */
  peerTimeoutMs: number;
}

export const defaultRelayTiming: RelayTiming = { leaseMs: 6000, renewMs: 1500, pingMs: 1000, peerTimeoutMs: 5000 };

/** What the relay needs of the sync endpoint (attach.ts). */
export interface RelayHost {
  /** The document's room, opened (or joined while opening) as `accountId`. */
  openRoom(documentRef: string, accountId: string): Promise<Room>;
  /** True while this process has the document's room open or opening. */
  hasRoom(documentRef: string): boolean;
  /** The room lost its last peer: free it (pending edits committed first). */
  release(documentRef: string, room: Room): void;
  /** The room's copy could not be kept: every peer starts over. */
  reset(documentRef: string, room: Room, error: Error): void;
  report(error: unknown, documentRef: string): void;
}

/** Close code of a forwarded peer whose owner went away or whose messages were lost: reconnect. */
export const RELAY_RECONNECT_CLOSE = 1012;
/** The most bytes waiting for one destination; past it the destination counts as lost. */
const MAX_OUTBOX_BYTES = 32 * 1024 * 1024;

type Header =
  | { t: 'join'; d: string; p: string; f: string; a: Actor; w: boolean }
  | { t: 'msg'; d: string; p: string; f: string }
  | { t: 'leave'; d: string; p: string; f: string }
  | { t: 'ping'; f: string; p: string[] }
  | { t: 'out'; p: string }
  | { t: 'close'; p: string; c: number; r: string };

const OPEN = 1;
const CLOSED = 3;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

function envelope(header: Header, frame?: Uint8Array): Uint8Array[] {
  return [encodeMessage([], utf8.encode(JSON.stringify(header))), encodeMessage([frame === undefined ? 0 : 1], frame ?? new Uint8Array(0))];
}

function* envelopes(payload: Uint8Array): Generator<{ header: Header; frame: Uint8Array | undefined }> {
  const reader = new MessageReader(payload);
  let at = 0;
  while (at < payload.byteLength) {
    const header = JSON.parse(fromUtf8.decode(reader.varUint8Array())) as Header;
    const has = reader.varUint();
    const frame = reader.varUint8Array();
    yield { header, frame: has === 1 ? frame : undefined };
    at = reader.offset;
  }
}

/** One publish in flight per destination; what comes meanwhile goes in the next, as one batch. */
class Outbox {
  private parts: Uint8Array[] = [];
  private bytes = 0;
  private busy = false;
  constructor(
    private readonly port: Pick<LiveRelayPort, 'publish'>,
    private readonly channel: string,
    private readonly onLost: () => void,
  ) {}

  push(parts: Uint8Array[]): void {
    for (const p of parts) {
      this.parts.push(p);
      this.bytes += p.byteLength;
    }
    if (this.bytes > MAX_OUTBOX_BYTES) {
      this.parts = [];
      this.bytes = 0;
      this.onLost();
      return;
    }
    if (!this.busy) {
      this.busy = true;
      queueMicrotask(() => this.flush());
    }
  }

  private flush(): void {
    if (this.parts.length === 0) {
      this.busy = false;
      return;
    }
    const out = new Uint8Array(this.bytes);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.byteLength;
    }
    this.parts = [];
    this.bytes = 0;
    this.port.publish(this.channel, out).then(
      () => this.flush(),
      () => {
        this.onLost();
        this.flush();
      },
    );
  }
}

/** The owner's stand-in for a forwarded peer's WebSocket: what the room sends goes to the peer's process. */
class RemoteSocket implements PeerSocket {
  readyState = OPEN;
  /** The bytes waiting for the real socket are the forwarding process's to bound (its PeerGuard). */
  readonly bufferedAmount = 0;
  constructor(private readonly onSend: (data: Uint8Array) => void, private readonly onClose: (code: number, reason: string) => void) {}
  send(data: Uint8Array, callback: (error?: Error) => void): void {
    if (this.readyState === OPEN) this.onSend(data);
    callback();
  }
  close(code: number, reason: string): void {
    if (this.readyState !== OPEN) return;
    this.readyState = CLOSED;
    this.onClose(code, reason);
  }
  terminate(): void {
    this.close(1011, 'terminated');
  }
  /** Reading is the forwarding process's (its PeerGuard pauses the real socket). */
  pause(): void {}
  resume(): void {}
}

/** A forwarded peer at its owner. */
interface Remote {
  key: string;
  from: string;
  documentRef: string;
  peer: Peer;
  room: Room | null;
  gone: boolean;
  chain: Promise<void>;
}

/** What the relay needs of a local peer's WebSocket (a `ws` WebSocket). */
export interface ForwardedSocket {
  readonly readyState: number;
  send(data: Uint8Array): void;
  close(code: number, reason: string): void;
}

/** Where the sync endpoint hands a forwarded WebSocket's events. */
export interface ForwardLink {
  /** A message of the peer. */
  message(data: Uint8Array, isBinary: boolean): void;
  /** The peer's socket closed. */
  closed(): void;
}

/** A local WebSocket whose room is on another process. */
interface Forwarded {
  key: string;
  ws: ForwardedSocket;
  documentRef: string;
  owner: Lease;
}

/** The cross-process side of one sync endpoint. */
export class SyncRelay {
  readonly processId = randomBytes(8).toString('hex');
  readonly channel = `kw-sync:${this.processId}`;
  private readonly holder: LeaseHolder = { owner: this.processId, channel: this.channel };
  /** Leases this process holds: their record revision. */
  private readonly owned = new Map<string, number>();
  /** Owned leases whose room was not open at the last renewal. */
  private readonly idle = new Set<string>();
  private readonly outboxes = new Map<string, Outbox>();
  /** Forwarded peers at this owner, by `${from}|${key}`. */
  private readonly remotes = new Map<string, Remote>();
  /** When each forwarding process was last heard from. */
  private readonly heard = new Map<string, number>();
  /** This process's peers forwarded to owners, by key. */
  private readonly forwarded = new Map<string, Forwarded>();
  private next = 0;
  private readonly unsubscribe: () => void;
  private readonly renewTimer: ReturnType<typeof setInterval>;
  private readonly pingTimer: ReturnType<typeof setInterval>;
  private closed = false;

  constructor(
    private readonly port: LiveRelayPort,
    private readonly host: RelayHost,
    private readonly timing: RelayTiming = defaultRelayTiming,
  ) {
    this.unsubscribe = port.subscribe(this.channel, (payload) => this.receive(payload), () => this.lost());
    this.renewTimer = setInterval(() => void this.renew(), timing.renewMs);
    this.pingTimer = setInterval(() => void this.tick(), timing.pingMs);
    this.renewTimer.unref?.();
    this.pingTimer.unref?.();
  }

  private to(channel: string): Outbox {
    let box = this.outboxes.get(channel);
    if (box === undefined) {
      box = new Outbox(this.port, channel, () => this.unreachable(channel));
      this.outboxes.set(channel, box);
    }
    return box;
  }

  // ---- ownership ----

  /**
   * Who hosts `documentRef`'s room: null when this process does (it holds the lease now), else the
   * other process's lease. Claims the lease when it is free or expired.
   */
  async ownerOf(documentRef: string): Promise<Lease | null> {
    if (this.owned.has(documentRef)) return null;
    const claim = await this.port.claimLease(documentRef, this.holder, this.timing.leaseMs);
    if (!claim.held) return claim.lease;
    this.owned.set(documentRef, claim.revision);
    return null;
  }

  /** The room of `documentRef` was freed: let its lease go (unless a room opened again meanwhile). */
  released(documentRef: string): void {
    const revision = this.owned.get(documentRef);
    if (revision === undefined || this.host.hasRoom(documentRef)) return;
    this.owned.delete(documentRef);
    this.port.releaseLease(documentRef, revision).catch(() => {});
  }

  private async renew(): Promise<void> {
    for (const [ref, revision] of [...this.owned]) {
      if (this.closed) return;
      // A lease claimed for a room that never opened (the upgrade failed) goes after a second idle turn.
      if (!this.host.hasRoom(ref)) {
        if (this.idle.has(ref)) {
          this.idle.delete(ref);
          this.released(ref);
          continue;
        }
        this.idle.add(ref);
      } else this.idle.delete(ref);
      let renewed: number | null;
      try {
        renewed = await this.port.renewLease(ref, this.holder, this.timing.leaseMs, revision);
      } catch {
        continue; // away for now: next time
      }
      if (renewed !== null) {
        if (this.owned.get(ref) === revision) this.owned.set(ref, renewed);
        continue;
      }
      if (this.owned.get(ref) !== revision) continue;
      // Another process took the document over (this one was cut off past the lease): its peers start over there.
      this.owned.delete(ref);
      for (const r of this.remotes.values()) if (r.documentRef === ref) r.peer.socket.close(RELAY_RECONNECT_CLOSE, 'the document moved to another process');
      this.host.report(new Error(`the live-editing lease of ${ref} passed to another process`), ref);
    }
  }

  // ---- forwarding (this process's peers, another's room) ----

  /** Forward `ws` (already upgraded) to the room `owner` hosts: the caller hands its events to the link. */
  forward(ws: ForwardedSocket, documentRef: string, actor: Actor, canWrite: boolean, owner: Lease): ForwardLink {
    const key = String(++this.next);
    this.forwarded.set(key, { key, ws, documentRef, owner });
    const box = this.to(owner.channel);
    box.push(envelope({ t: 'join', d: documentRef, p: key, f: this.channel, a: actor, w: canWrite }));
    return {
      message: (data, isBinary) => {
        if (!this.forwarded.has(key)) return;
        if (!isBinary) {
          ws.close(1003, 'malformed message');
          return;
        }
        box.push(envelope({ t: 'msg', d: documentRef, p: key, f: this.channel }, data));
      },
      closed: () => {
        if (this.forwarded.delete(key)) box.push(envelope({ t: 'leave', d: documentRef, p: key, f: this.channel }));
      },
    };
  }

  /** Pings owners with the peers forwarded to them; closes peers whose owner's lease lapsed or moved. */
  private async tick(): Promise<void> {
    const now = Date.now();
    const byOwner = new Map<string, string[]>();
    const byDocument = new Map<string, Forwarded[]>();
    for (const f of this.forwarded.values()) {
      byOwner.set(f.owner.channel, [...(byOwner.get(f.owner.channel) ?? []), f.key]);
      byDocument.set(f.documentRef, [...(byDocument.get(f.documentRef) ?? []), f]);
    }
    for (const [channel, keys] of byOwner) this.to(channel).push(envelope({ t: 'ping', f: this.channel, p: keys }));
    // Owners' side: forwarding processes gone silent.
    for (const [from, at] of [...this.heard]) {
      if (now - at <= this.timing.peerTimeoutMs) continue;
      this.heard.delete(from);
      for (const r of [...this.remotes.values()]) if (r.from === from) this.drop(r);
    }
    for (const [ref, list] of byDocument) {
      let lease: Lease | null;
      try {
        lease = await this.port.readLease(ref);
      } catch {
        continue; // the storage is away: ask again next time
      }
      for (const f of list) {
        if (lease !== null && lease.owner === f.owner.owner && lease.expiresAt > Date.now()) continue;
        f.ws.close(RELAY_RECONNECT_CLOSE, 'the process hosting this document went away: reconnect');
      }
    }
  }

  // ---- hosting (another process's peers, this room) ----

  private receive(payload: Uint8Array): void {
    try {
      for (const { header, frame } of envelopes(payload)) this.handle(header, frame);
    } catch (error) {
      this.host.report(error, '(relay)');
    }
  }

  private handle(h: Header, frame: Uint8Array | undefined): void {
    switch (h.t) {
      case 'join':
        this.heard.set(h.f, Date.now());
        return this.join(h);
      case 'msg': {
        const r = this.remotes.get(`${h.f}|${h.p}`);
        if (r === undefined || frame === undefined) return;
        const data = frame.slice();
        r.chain = r.chain.then(() => this.apply(r, data));
        return;
      }
      case 'leave': {
        const r = this.remotes.get(`${h.f}|${h.p}`);
        if (r !== undefined) r.chain = r.chain.then(() => this.drop(r));
        return;
      }
      case 'ping': {
        this.heard.set(h.f, Date.now());
        const live = new Set(h.p);
        for (const r of [...this.remotes.values()]) if (r.from === h.f && !live.has(r.key)) this.drop(r);
        return;
      }
      case 'out': {
        const f = this.forwarded.get(h.p);
        if (f !== undefined && frame !== undefined && f.ws.readyState === OPEN) f.ws.send(frame.slice());
        return;
      }
      case 'close': {
        const f = this.forwarded.get(h.p);
        if (f !== undefined) f.ws.close(h.c, h.r);
        return;
      }
    }
  }

  private join(h: Extract<Header, { t: 'join' }>): void {
    const id = `${h.f}|${h.p}`;
    if (this.remotes.has(id)) return;
    const box = this.to(h.f);
    const socket = new RemoteSocket(
      (data) => box.push(envelope({ t: 'out', p: h.p }, data)),
      (code, reason) => {
        box.push(envelope({ t: 'close', p: h.p, c: code, r: reason }));
        this.drop(remote);
      },
    );
    const remote: Remote = {
      key: h.p,
      from: h.f,
      documentRef: h.d,
      peer: { socket, actor: h.a, canWrite: h.w === true, clients: new Set(), guard: new PeerGuard(socket, PEER_LIMITS) },
      room: null,
      gone: false,
      chain: Promise.resolve(),
    };
    this.remotes.set(id, remote);
    remote.chain = (async () => {
      // This process must (still) host the room: a forwarder read the lease a moment ago.
      if (!this.host.hasRoom(h.d) && (await this.ownerOf(h.d)) !== null) {
        socket.close(RELAY_RECONNECT_CLOSE, 'the document moved to another process');
        return;
      }
      const room = await this.host.openRoom(h.d, h.a.accountId);
      if (remote.gone) {
        if (room.peers.size === 0) this.host.release(h.d, room);
        return;
      }
      remote.room = room;
      room.join(remote.peer);
    })().catch((error: unknown) => {
      this.host.report(error, h.d);
      socket.close(1011, 'the document could not be opened');
    });
  }

  private apply(r: Remote, data: Uint8Array): void {
    if (r.gone || r.room === null) return;
    try {
      if (!r.peer.guard.received(data.byteLength)) return; // past its rate by a whole burst: closed
      r.room.receive(r.peer, data);
    } catch (error) {
      if (error instanceof RoomTooLargeError) this.host.reset(r.documentRef, r.room, error);
      else if (error instanceof StaleDocumentError) r.peer.socket.close(STALE_DOCUMENT_CLOSE, 'stale document: connect again with an empty Y.Doc');
      else r.peer.socket.close(1003, 'malformed message');
    }
  }

  /** A forwarded peer left (or was dropped): out of its room, which is freed when empty. */
  private drop(r: Remote): void {
    if (r.gone) return;
    r.gone = true;
    this.remotes.delete(`${r.from}|${r.key}`);
    r.peer.guard.dispose();
    (r.peer.socket as RemoteSocket).readyState = CLOSED;
    if (r.room !== null && r.room.leave(r.peer)) this.host.release(r.documentRef, r.room);
  }

  /** Messages to `channel` could not be sent: its peers here (and ours forwarded there) start over. */
  private unreachable(channel: string): void {
    for (const r of [...this.remotes.values()]) if (r.from === channel) this.drop(r);
    for (const f of this.forwarded.values()) if (f.owner.channel === channel) f.ws.close(RELAY_RECONNECT_CLOSE, 'messages to the hosting process were lost: reconnect');
  }

  /** Messages to this process may have been lost: every forwarded peer, both ways, reconnects. */
  private lost(): void {
    for (const r of [...this.remotes.values()]) r.peer.socket.close(RELAY_RECONNECT_CLOSE, 'messages were lost: reconnect');
    for (const f of this.forwarded.values()) f.ws.close(RELAY_RECONNECT_CLOSE, 'messages were lost: reconnect');
  }

  /** Before the rooms close: forwarded peers here are told to reconnect (elsewhere). */
  closeRemotes(): void {
    for (const r of [...this.remotes.values()]) r.peer.socket.close(RELAY_RECONNECT_CLOSE, 'the process hosting this document is shutting down: reconnect');
  }

  /** After the rooms closed: leases let go, timers stopped. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewTimer);
    clearInterval(this.pingTimer);
    this.unsubscribe();
    await Promise.allSettled(
      [...this.owned].map(([ref, revision]) => this.port.releaseLease(ref, revision)),
    );
    this.owned.clear();
  }
}
