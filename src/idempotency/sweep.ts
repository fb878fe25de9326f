/**
 * Background removal of expired records, so that a collection of records with a retention window
 * does not grow forever.
 * @module
 */
import type { Clock } from '../clock.ts';
import { isStorageConflict, type BatchOp, type Storage } from '../ports.ts';

/** Deletes per batch. */
const BATCH = 128;

/**
 * Sweeps a collection of `{ createdAt }` records: at most once per `everyMs` (default: a 24th of the
 * retention, between 1 minute and 1 hour), the first time on the first write, in the background.
 * @remarks Each delete carries the revision it saw, so a record replaced since (a key reused after
 * expiry) is kept. A batch that conflicts is retried delete by delete; one that still conflicts is
 * left to the next sweep.
 */
export class ExpirySweeper {
  private last = -Infinity;
  private running: Promise<void> | null = null;
  private readonly everyMs: number;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly collection: string,
    private readonly retentionMs: number,
    everyMs?: number,
  ) {
    this.everyMs = everyMs ?? Math.min(3600_000, Math.max(60_000, retentionMs / 24));
  }

  /** Start a sweep when the last one is older than the sweep interval and none is running. */
  maybeSweep(): void {
    const now = this.clock.now();
    if (this.running !== null || now - this.last < this.everyMs) return;
    this.last = now;
    this.running = this.sweep(now)
      .then(
        () => undefined,
        () => undefined, // a failed sweep is retried at the next interval
      )
      .finally(() => {
        this.running = null;
      });
  }

  /** Remove every record created at least `retentionMs` before `now`; returns how many. */
  async sweep(now: number): Promise<number> {
    const records = await this.storage.listRecords<{ createdAt?: unknown }>(this.collection);
    const deletes: BatchOp[] = [];
    for (const r of records) {
      const createdAt = r.value?.createdAt;
      if (typeof createdAt === 'number' && now - createdAt >= this.retentionMs) {
        deletes.push({ kind: 'record.delete', collection: this.collection, key: r.key, expectedRevision: r.revision });
      }
    }
    let removed = 0;
    for (let i = 0; i < deletes.length; i += BATCH) removed += await this.commit(deletes.slice(i, i + BATCH));
    return removed;
  }

  private async commit(batch: BatchOp[]): Promise<number> {
    try {
      await this.storage.commit(batch);
      return batch.length;
    } catch (error) {
      if (!isStorageConflict(error)) throw error;
    }
    let removed = 0;
    for (const op of batch) {
      try {
        await this.storage.commit([op]);
        removed++;
      } catch (error) {
        if (!isStorageConflict(error)) throw error;
      }
    }
    return removed;
  }

  /** Settles when the running sweep (if any) has settled. */
  async flush(): Promise<void> {
    await this.running;
  }
}
