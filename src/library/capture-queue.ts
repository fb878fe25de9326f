/**
 * A bounded background queue of capture jobs.
 * @remarks The durable job records are the truth; this queue holds at most `queueSize` waiting job
 * keys in memory and runs at most `concurrency` at once (so at most `queueSize + concurrency` jobs are
 * held). An offer never waits: when the queue is full the
 * job stays in storage and a later refill (when the queue runs dry) picks it up, so memory stays
 * bounded by the queue size however many links are saved. `start()` refills from storage, which is
 * how pending captures resume after a restart.
 * @module
 */

/** Sizes of a {@link CaptureQueue}. */
export interface CaptureQueueOptions {
  /** Captures running at once (default 4). */
  concurrency: number;
  /** Waiting job keys held in memory (default 256). */
  queueSize: number;
}

/** Runs one job; it must settle (the queue aborts `signal` on close). */
export type RunJob = (key: string, signal: AbortSignal) => Promise<void>;
/** Reads up to `room` durable job keys, oldest first, skipping those in `known`. */
export type RefillJobs = (room: number, known: ReadonlySet<string>) => Promise<string[]>;

/** See the module remarks. */
export class CaptureQueue {
  private readonly queued: string[] = [];
  private readonly known = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  /** One controller per running job, so listeners die with their job. */
  private readonly controllers = new Set<AbortController>();
  private overflow = false;
  private pumpScheduled = false;
  private refilled: Promise<void> = Promise.resolve();
  private refilling = false;
  private closed = false;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly runJob: RunJob,
    private readonly refillJobs: RefillJobs,
    private readonly options: CaptureQueueOptions,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Look for durable jobs (pending captures saved before a restart) and run them. */
  start(): void {
    this.overflow = true;
    this.pump();
  }

  /** Offer a job; false when it was left to a later refill because the queue is full (or closed). */
  offer(key: string): boolean {
    if (this.closed) return false;
    if (this.known.has(key)) return true;
    if (this.queued.length >= this.options.queueSize) {
      this.overflow = true;
      return false;
    }
    this.known.add(key);
    this.queued.push(key);
    this.schedulePump();
    return true;
  }

  /** Jobs waiting in memory plus running. */
  get size(): number {
    return this.known.size;
  }

  /** Resolves when no job is queued, running, or waiting in storage to be refilled. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stop taking jobs, abort running captures and wait for them; durable jobs stay for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    this.queued.length = 0;
    for (const c of this.controllers) c.abort(new Error('the library is closing'));
    // A refill reads storage: let it finish before the caller closes the store.
    await this.refilled;
    while (this.running.size) await Promise.allSettled([...this.running]);
    this.notifyIdle(true);
  }

  private isIdle(): boolean {
    return this.running.size === 0 && this.queued.length === 0 && !this.refilling && !this.pumpScheduled && (!this.overflow || this.closed);
  }

  private notifyIdle(force = false): void {
    if (!force && !this.isIdle()) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /**
   * Start jobs from a fresh task rather than inside the caller's promise chain, so that the request
   * that offered a job answers before any capture code runs.
   */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setTimeout(() => {
      this.pumpScheduled = false;
      this.pump();
    }, 0);
  }

  private pump(): void {
    if (this.closed) return;
    while (this.running.size < this.options.concurrency && this.queued.length) {
      const key = this.queued.shift()!;
      const controller = new AbortController();
      this.controllers.add(controller);
      const run: Promise<void> = this.runJob(key, controller.signal)
        .catch((e: unknown) => this.onError(e))
        .finally(() => {
          this.controllers.delete(controller);
          this.running.delete(run);
          this.known.delete(key);
          this.pump();
        });
      this.running.add(run);
    }
    if (this.queued.length === 0 && this.overflow && !this.refilling) this.refilled = this.refill();
    this.notifyIdle();
  }

  private async refill(): Promise<void> {
    this.refilling = true;
    this.overflow = false;
    const room = this.options.queueSize - this.queued.length;
    try {
      const keys = await this.refillJobs(room, this.known);
      for (const key of keys) this.offer(key);
      if (keys.length >= room) this.overflow = true;
    } catch (e) {
      this.onError(e);
    } finally {
      this.refilling = false;
    }
    this.pump();
  }
}
