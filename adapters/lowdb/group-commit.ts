/**
 * Group commit: batches accepted in the same event-loop turn, or while a journal write is in
 * flight, are written together as one group and share one fdatasync.
 * @module
 */
import { isStorageUnavailable } from '../../src/errors.ts';
import type { BatchOp } from '../../src/ports.ts';
import { validateBatch, type BatchEffects } from '../core/batch-validator.ts';
import type { ChangeNotifier } from '../core/change-notifier.ts';
import type { MemoryCore } from '../core/memory-core.ts';
import { prepareBatch, type PreparedOp } from '../core/prepared-op.ts';
import { encodeBatchFrame, markGroupStart } from './journal-codec.ts';
import { PendingProjection } from './pending-projection.ts';

/** Where groups go: append the bytes to the journal and make them durable before resolving. */
export interface GroupSink {
  /**
   * Writes `chunk` (the complete frames of `batches` batches) durably; rejects if it may not be.
   * Rejecting with a `StorageUnavailableError` promises that the journal is back, durably, to what
   * it was before this group: the committer then refuses only this group and the queued batches
   * and goes on taking commits.
   */
  write(chunk: Buffer, batches: number): Promise<void>;
}

interface Pending {
  seq: number;
  ops: PreparedOp[];
  effects: BatchEffects;
  frame: Buffer;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Accepts batches, journals them in groups, and applies each group to the core once it is durable.
 * @remarks
 * - `submit` validates synchronously against the core plus the {@link PendingProjection} of the
 *   batches queued before it, so racing batches resolve first-wins; a conflict rejects at once.
 * - A batch is applied to the core only after its group's write and fdatasync succeeded, in
 *   acceptance order; its promise resolves right after.
 * - A write that fails with a `StorageUnavailableError` (disk full; the sink has undone it) rejects
 *   that group and everything queued with it (they were validated against the failed group) and
 *   nothing else: later submits are taken, so the storage recovers when the disk has room again.
 * - Any other failed write poisons the committer: that group and everything queued reject, the core
 *   keeps only acknowledged batches, and every later submit rejects (reopen the folder to recover).
 * - {@link exclusive} runs a task between groups (journal rotation), never during a write.
 */
export class GroupCommitter {
  private queue: Pending[] = [];
  private readonly tasks: (() => Promise<void>)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private readonly projection = new PendingProjection();
  private running = false;
  private failure: unknown = null;
  private committed = 0;
  private applied: number;

  /**
   * @param core the state that groups are applied to (and validated against).
   * @param sink the journal.
   * @param lastSeq the sequence number of the last batch already in the journal.
   * @param afterGroup called after each group is applied (to consider a checkpoint).
   * @param notifier told about each batch once it is durable and applied, in order.
   */
  constructor(
    private readonly core: MemoryCore,
    private readonly sink: GroupSink,
    private lastSeq: number,
    private readonly afterGroup: () => void = () => {},
    private readonly notifier: ChangeNotifier | null = null,
  ) {
    this.applied = lastSeq;
  }

  /** Batches made durable and applied so far. */
  get commits(): number {
    return this.committed;
  }

  /** Sequence number of the last batch applied to the core (what a checkpoint taken now covers). */
  get appliedSeq(): number {
    return this.applied;
  }

  /** Projected keys still waiting for their batch to be applied (0 when idle). */
  get pendingKeys(): number {
    return this.projection.size;
  }

  /** Validates, journals and applies one batch; resolves once it is durable and visible. */
  submit(ops: readonly BatchOp[]): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failedError());
    let prepared: PreparedOp[];
    let effects: BatchEffects;
    let frame: Buffer;
    const seq = this.lastSeq + 1;
    try {
      prepared = prepareBatch(ops);
      effects = validateBatch(this.core, prepared, this.projection);
      if (prepared.length === 0) return Promise.resolve();
      frame = encodeBatchFrame(seq, prepared);
    } catch (error) {
      return Promise.reject(error);
    }
    this.lastSeq = seq;
    this.projection.add(effects, seq);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ seq, ops: prepared, effects, frame, resolve, reject });
      this.kick();
    });
  }

  /**
   * Refuses every later commit and rejects the queued ones with `error` (a journal write outside a
   * group, such as a rotation frame, failed).
   */
  fail(error: unknown): void {
    if (this.failure === null) this.poison(error, []);
  }

  /** Runs `task` between groups (no write in flight) and resolves with its result. */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.tasks.push(() => task().then(resolve, reject));
      this.kick();
    });
  }

  /** Resolves once nothing is queued, written or pending as a task. */
  drain(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private kick(): void {
    if (this.running) return;
    this.running = true;
    // Flush in the check phase of this event-loop turn: every commit issued by the callbacks and
    // promise chains of this turn (several requests read in one poll phase, deep await chains)
    // joins the group, for the price of one zero-timeout poll.
    setImmediate(() => void this.loop());
  }

  private async loop(): Promise<void> {
    for (;;) {
      const task = this.tasks.shift();
      if (task !== undefined) {
        await task();
        continue;
      }
      if (this.queue.length === 0) break;
      const group = this.queue;
      this.queue = [];
      await this.flush(group);
    }
    this.running = false;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private async flush(group: Pending[]): Promise<void> {
    markGroupStart(group[0].frame);
    const chunk = group.length === 1 ? group[0].frame : Buffer.concat(group.map((p) => p.frame));
    try {
      await this.sink.write(chunk, group.length);
    } catch (error) {
      if (isStorageUnavailable(error)) this.refuse(error, group);
      else this.poison(error, group);
      return;
    }
    try {
      for (const p of group) {
        this.core.apply(p.ops);
        this.projection.settle(p.effects, p.seq);
        this.applied = p.seq;
      }
    } catch (error) {
      this.poison(error, group);
      return;
    }
    this.committed += group.length;
    if (this.notifier !== null) for (const p of group) this.notifier.notify(p.ops);
    for (const p of group) p.resolve();
    this.afterGroup();
  }

  /** Rejects `group` and the queue with `error` and forgets them; later batches continue from the applied state. */
  private refuse(error: unknown, group: Pending[]): void {
    this.projection.clear();
    for (const p of group) p.reject(error);
    for (const p of this.queue.splice(0)) p.reject(error);
    this.lastSeq = this.applied;
  }

  private poison(error: unknown, group: Pending[]): void {
    this.failure = error;
    this.projection.clear();
    for (const p of group) p.reject(error);
    for (const p of this.queue.splice(0)) p.reject(this.failedError());
  }

  private failedError(): Error {
    const reason = this.failure instanceof Error ? this.failure.message : String(this.failure);
    return new Error(`lowdb storage: an earlier journal write failed (${reason}); no further commits are accepted, reopen the folder`, {
      cause: this.failure,
    });
  }
}
