/**
 * One event-stream connection ({@link SseStream}) and the shared keep-alive tickers.
 * @module
 */
import { concatBytes } from '../text.ts';

/** The contract's event-stream limits: `retry: 5000`, a keep-alive after 15 s idle, 1024 events or 20 s per connection. */
import { SSE_DEFAULTS } from '../limits.ts';
export { SSE_DEFAULTS };

/** Limits of one stream connection (the contract's values are the defaults). */
export interface SseLimits {
  /** Reconnection delay sent first (`retry:`), in ms. Default 5000. */
  retryMs?: number;
  /** Longest silence before a `: keep-alive` comment, in ms. Default 15000. */
  keepAliveMs?: number;
  /** Events per connection. Default 1024. */
  maxEvents?: number;
  /** Connection lifetime in ms. Default 20000. */
  maxMs?: number;
}

/** One event to frame: its id (the decimal cursor), its JSON text, and whether it ends the job. */
export interface OutgoingSseEvent {
  id: string;
  json: string;
  terminal: boolean;
}

/** One encoded frame. */
export interface SseFrame {
  bytes: Uint8Array;
  terminal: boolean;
}

/** Frames of consecutive events and all of them joined into one chunk. */
export interface SseBatch {
  frames: readonly SseFrame[];
  bytes: Uint8Array;
}

/** What a stream controls of its source. */
export interface SseSource {
  /** The stream closed (any closing rule, the client gone): stop for good. */
  close(): void;
  /** The stream's reader is behind: stop pushing until {@link resume}. */
  pause?(): void;
  resume?(): void;
}

const encoder = new TextEncoder();
const KEEP_ALIVE = encoder.encode(': keep-alive\n\n');
/** A stream with this many bytes waiting for its reader pauses its source; it resumes once they are read. */
const HIGH_WATER = 64 * 1024;

/** Streams sharing one keep-alive interval, checked by one timer. */
class Ticker {
  readonly streams = new Set<SseStream>();
  private timer: ReturnType<typeof setInterval> | null = null;
  constructor(
    private readonly keepAliveMs: number,
    private readonly onEmpty: () => void,
  ) {}
  add(stream: SseStream): void {
    this.streams.add(stream);
    if (this.timer) return;
    // A quarter of the interval: a comment goes out between 1 and 1.25 silences after the last write.
    this.timer = setInterval(() => {
      for (const s of this.streams) s.tick();
    }, Math.max(1, Math.floor(this.keepAliveMs / 4)));
    (this.timer as { unref?: () => void }).unref?.();
  }
  remove(stream: SseStream): void {
    if (!this.streams.delete(stream) || this.streams.size > 0) return;
    clearInterval(this.timer!);
    this.timer = null;
    this.onEmpty();
  }
}

const tickers = new Map<number, Ticker>();

function tickerFor(keepAliveMs: number): Ticker {
  let ticker = tickers.get(keepAliveMs);
  if (!ticker) tickers.set(keepAliveMs, (ticker = new Ticker(keepAliveMs, () => tickers.delete(keepAliveMs))));
  return ticker;
}

/**
 * One event-stream connection as an async iterator of byte chunks: a source pushes frame batches,
 * the reader (the transport) takes whatever is queued as one chunk per `next()`. Opens with `retry:`;
 * closes after a terminal frame, after `maxEvents` frames, after `maxMs`, when the client signal
 * aborts, or when the reader returns; closing releases the timers and closes the source at once.
 */
export class SseStream implements AsyncIterableIterator<Uint8Array> {
  private queue: Uint8Array[] = [];
  private queued = 0;
  private waiter: ((result: IteratorResult<Uint8Array>) => void) | null = null;
  private failWaiter: ((error: unknown) => void) | null = null;
  private failure: { cause: unknown } | null = null;
  private closed = false;
  private paused = false;
  private sent = 0;
  private lastWrite: number;
  private source: SseSource | null = null;
  private readonly keepAliveMs: number;
  private readonly maxEvents: number;
  private readonly deadline: ReturnType<typeof setTimeout>;
  private readonly ticker: Ticker;
  private readonly onAbort = () => this.stop(true);

  constructor(
    limits: SseLimits = {},
    private readonly clientSignal?: AbortSignal,
    private readonly now: () => number = Date.now,
  ) {
    this.keepAliveMs = limits.keepAliveMs ?? SSE_DEFAULTS.keepAliveMs;
    this.maxEvents = limits.maxEvents ?? SSE_DEFAULTS.maxEvents;
    this.lastWrite = now();
    this.enqueue(encoder.encode(`retry: ${limits.retryMs ?? SSE_DEFAULTS.retryMs}\n\n`));
    this.deadline = setTimeout(() => this.stop(false), limits.maxMs ?? SSE_DEFAULTS.maxMs);
    this.ticker = tickerFor(this.keepAliveMs);
    this.ticker.add(this);
    if (clientSignal?.aborted) this.stop(true);
    else clientSignal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Attach the source; a stream already closed closes it at once. */
  bind(source: SseSource): void {
    if (this.closed) source.close();
    else {
      this.source = source;
      if (this.paused) source.pause?.();
    }
  }

  /** Queue frames (of events after the ones before); closes after a terminal frame or `maxEvents`. */
  push(batch: SseBatch): void {
    if (this.closed) return;
    const { frames } = batch;
    let take = Math.min(frames.length, this.maxEvents - this.sent);
    for (let i = 0; i < take; i++) if (frames[i]!.terminal) take = i + 1;
    this.sent += take;
    this.enqueue(take === frames.length ? batch.bytes : concatBytes(frames.slice(0, take).map((f) => f.bytes)));
    if (this.sent >= this.maxEvents || frames[take - 1]?.terminal) this.stop(false);
  }

  /** The source has nothing more: close once the queue is read. */
  end(): void {
    this.stop(false);
  }

  /** The source failed: the reader gets what is queued, then the error. */
  fail(cause: unknown): void {
    if (this.closed) return;
    this.failure = { cause };
    this.stop(false);
  }

  /** Called by the shared ticker: a keep-alive comment after `keepAliveMs` of silence. */
  tick(): void {
    if (!this.closed && this.now() - this.lastWrite >= this.keepAliveMs) this.enqueue(KEEP_ALIVE);
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.queue.length > 0) {
      const value = concatBytes(this.queue);
      this.queue = [];
      this.queued = 0;
      if (this.paused && !this.closed) {
        this.paused = false;
        this.source?.resume?.();
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.failure) {
      const { cause } = this.failure;
      this.failure = null;
      return Promise.reject(cause);
    }
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = resolve;
      this.failWaiter = reject;
    });
  }

  return(): Promise<IteratorResult<Uint8Array>> {
    this.stop(true);
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private enqueue(chunk: Uint8Array): void {
    this.lastWrite = this.now();
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = this.failWaiter = null;
      waiter({ value: chunk, done: false });
      return;
    }
    this.queue.push(chunk);
    this.queued += chunk.byteLength;
    if (!this.paused && this.queued >= HIGH_WATER) {
      this.paused = true;
      this.source?.pause?.();
    }
  }

  /** Close: release everything now; `drop` also discards what the reader has not taken (it is gone). */
  private stop(drop: boolean): void {
    if (drop) {
      this.queue = [];
      this.queued = 0;
      this.failure = null;
    }
    if (!this.closed) {
      this.closed = true;
      clearTimeout(this.deadline);
      this.ticker.remove(this);
      this.clientSignal?.removeEventListener('abort', this.onAbort);
      this.source?.close();
      this.source = null;
    }
    if (this.waiter && this.queue.length === 0) {
      const [waiter, failWaiter, failure] = [this.waiter, this.failWaiter!, this.failure];
      this.waiter = this.failWaiter = null;
      this.failure = null;
      if (failure) failWaiter(failure.cause);
      else waiter({ value: undefined, done: true });
    }
  }
}
