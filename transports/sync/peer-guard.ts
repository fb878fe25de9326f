/**
 * What keeps one peer of live co-editing from costing the server without bound (the limits are in
 * ./limits.ts): its buffered output, its message rate, one sync step 2 in flight at a time, its
 * awareness states (only its own client ids, few and small) and queries; and the room's batching
 * of the edits it relays.
 * @module
 */
import * as Y from 'yjs';
import * as encoding from 'lib0/encoding';
import { MessageReader } from './codec.ts';
import { SLOW_PEER_CLOSE, type PeerLimits } from './limits.ts';

/** What the guard needs of a peer's WebSocket (a `ws` WebSocket). */
export interface GuardedSocket {
  readonly readyState: number;
  /** Bytes queued for sending and not yet handed to the operating system. */
  readonly bufferedAmount: number;
  send(data: Uint8Array, callback: (error?: Error) => void): void;
  close(code: number, reason: string): void;
  terminate(): void;
  /** Stop / start reading the connection (TCP then pushes back on the peer). */
  pause(): void;
  resume(): void;
}

const OPEN = 1;

/** A token bucket: `rate` a second, at most `burst`; its balance may go negative (a debt). */
class Bucket {
  private tokens: number;
  private at: number;
  constructor(private readonly rate: number, private readonly burst: number, now: number) {
    this.tokens = burst;
    this.at = now;
  }
  /** Take `n`: the balance after (negative: a debt of that many). */
  take(n: number, now: number): number {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = now;
    this.tokens -= n;
    return this.tokens;
  }
  /** Milliseconds until a balance of `balance` is paid back (0 when it is not a debt). */
  waitFor(balance: number): number {
    return balance >= 0 ? 0 : Math.ceil((-balance / this.rate) * 1000);
  }
}

/** The guard of one connection. */
export class PeerGuard {
  private readonly messages: Bucket;
  private readonly bytes: Bucket;
  private pausedUntil = 0;
  private resumeTimer: ReturnType<typeof setTimeout> | null = null;
  private step2InFlight = false;
  private nextVector: Uint8Array | null = null;
  private lastQuery = -Infinity;
  private queryTimer: ReturnType<typeof setTimeout> | null = null;
  private closeTimer: ReturnType<typeof setTimeout> | null = null;
  private ended = false;

  constructor(
    private readonly socket: GuardedSocket,
    private readonly limits: PeerLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.messages = new Bucket(limits.messagesPerSecond, limits.messageBurst, now());
    this.bytes = new Bucket(limits.bytesPerSecond, limits.byteBurst, now());
  }

  /** True once the peer was closed by the guard or is gone. */
  get closed(): boolean {
    return this.ended;
  }

  /**
   * Send a message, unless the peer holds `maxBufferedBytes` unread already: then it is closed
   * ({@link SLOW_PEER_CLOSE}). `written` runs once the message was handed to the operating system.
   */
  send(message: Uint8Array, written?: () => void): void {
    const s = this.socket;
    if (this.ended || s.readyState !== OPEN) return;
    const waiting = s.bufferedAmount;
    if (waiting > 0 && waiting + message.byteLength > this.limits.maxBufferedBytes) {
      this.shut(`the connection left more than ${this.limits.maxBufferedBytes} bytes unread`);
      return;
    }
    s.send(message, (error) => {
      if (error) s.terminate();
      else written?.();
    });
  }

  /**
   * A message of `byteLength` bytes arrived: count it against the peer's rates. Past them the
   * connection is not read until they allow again; past them by a whole burst the peer is closed.
   * @returns false when the message must be dropped (the peer is being closed).
   */
  received(byteLength: number): boolean {
    if (this.ended) return false;
    const now = this.now();
    const m = this.messages.take(1, now);
    const b = this.bytes.take(byteLength, now);
    if (m < -this.limits.messageBurst || b < -this.limits.byteBurst) {
      this.shut('the connection sent faster than its rate');
      return false;
    }
    const wait = Math.max(this.messages.waitFor(m), this.bytes.waitFor(b));
    if (wait > 0 && now + wait > this.pausedUntil) {
      this.pausedUntil = now + wait;
      this.socket.pause();
      if (this.resumeTimer !== null) clearTimeout(this.resumeTimer);
      this.resumeTimer = setTimeout(() => {
        this.resumeTimer = null;
        if (!this.ended) this.socket.resume();
      }, wait);
    }
    return true;
  }

  /**
   * Answer a sync step 1 (`answer` builds the step 2 for a state vector) with at most one step 2
   * written at a time: step 1s arriving meanwhile are answered once, with the latest vector, after it.
   */
  answerStep1(vector: Uint8Array, answer: (vector: Uint8Array) => Uint8Array): void {
    if (this.step2InFlight) {
      this.nextVector = vector.slice();
      return;
    }
    this.step2InFlight = true;
    this.send(answer(vector), () => {
      this.step2InFlight = false;
      const next = this.nextVector;
      this.nextVector = null;
      if (next !== null && !this.ended) this.answerStep1(next, answer);
    });
  }

  /**
   * The part of an awareness update (y-protocols' encoding) the peer may make: states of the client
   * ids it holds (`own`), or of new ones while it holds fewer than `maxAwarenessClients` and no other
   * peer holds them (`heldElsewhere`), each at most `maxAwarenessStateBytes`. Null: nothing of it.
   */
  awareness(update: Uint8Array, own: ReadonlySet<number>, heldElsewhere: (clientId: number) => boolean): Uint8Array | null {
    const reader = new MessageReader(update);
    const count = reader.varUint();
    const kept: number[] = [];
    const claimed = new Set<number>();
    let all = true;
    for (let i = 0; i < count; i++) {
      const start = reader.offset;
      const id = reader.varUint();
      reader.varUint(); // clock
      const state = reader.varUint8Array();
      const removal = state.byteLength === 4 && state[0] === 0x6e; // "null"
      let ok = state.byteLength <= this.limits.maxAwarenessStateBytes;
      if (ok && !own.has(id) && !claimed.has(id)) {
        ok = !removal && !heldElsewhere(id) && own.size + claimed.size < this.limits.maxAwarenessClients;
        if (ok) claimed.add(id);
      }
      if (ok) kept.push(start, reader.offset);
      else all = false;
    }
    if (all) return count > 0 ? update : null;
    if (kept.length === 0) return null;
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, kept.length / 2);
    for (let i = 0; i < kept.length; i += 2) encoding.writeUint8Array(encoder, update.subarray(kept[i]!, kept[i + 1]!));
    return encoding.toUint8Array(encoder);
  }

  /** Answer a query-awareness at most once per `queryAwarenessMs` (queries meanwhile get one answer after it). */
  queryAwareness(answer: () => Uint8Array): void {
    if (this.ended || this.queryTimer !== null) return;
    const wait = this.lastQuery + this.limits.queryAwarenessMs - this.now();
    if (wait <= 0) {
      this.lastQuery = this.now();
      this.send(answer());
      return;
    }
    this.queryTimer = setTimeout(() => {
      this.queryTimer = null;
      this.lastQuery = this.now();
      if (!this.ended) this.send(answer());
    }, wait);
  }

  /** Close the peer with {@link SLOW_PEER_CLOSE}; cut it off if its close does not end in `closeGraceMs`. */
  shut(reason: string): void {
    if (this.ended) return;
    this.dispose();
    this.socket.close(SLOW_PEER_CLOSE, reason.slice(0, 120));
    this.closeTimer = setTimeout(() => this.socket.terminate(), this.limits.closeGraceMs);
    this.closeTimer.unref?.();
  }

  /** The connection ended: stop every timer of the guard (but a pending cut-off). */
  dispose(): void {
    this.ended = true;
    if (this.resumeTimer !== null) clearTimeout(this.resumeTimer);
    if (this.queryTimer !== null) clearTimeout(this.queryTimer);
    this.resumeTimer = this.queryTimer = null;
    this.nextVector = null;
  }
}

/**
 * A room's relay of edits: updates gathered for `ms` and sent as one merged update per peer (each
 * peer gets what the others made in the window).
 */
export class UpdateBatcher<P> {
  private batch: { update: Uint8Array; origin: unknown }[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly ms: number,
    private readonly peers: () => Iterable<P>,
    private readonly send: (peer: P, update: Uint8Array) => void,
  ) {}

  /** An update the room's doc applied (`origin`: the peer it came from, if any). */
  add(update: Uint8Array, origin: unknown): void {
    this.batch.push({ update, origin });
    this.timer ??= setTimeout(() => this.flush(), this.ms);
  }

  /** Send what was gathered now. */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.batch;
    this.batch = [];
    if (batch.length === 0) return;
    const merge = (list: typeof batch) => (list.length === 1 ? list[0]!.update : Y.mergeUpdates(list.map((u) => u.update)));
    const origins = new Set(batch.map((u) => u.origin));
    let all: Uint8Array | null = null;
    for (const peer of this.peers()) {
      if (origins.has(peer)) {
        const others = batch.filter((u) => u.origin !== peer);
        if (others.length > 0) this.send(peer, merge(others));
      } else {
        all ??= merge(batch);
        this.send(peer, all);
      }
    }
  }

  /** Drop what was gathered (the room is freed). */
  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.batch = [];
  }
}
