/**
 * Background removal of expired records, so that a collection of records with a retention window
 * does not grow forever.
 * @module
 */
import type { Clock } from '../clock.ts';
import type { ErrorReporter } from '../deps.ts';
import { isStorageConflict, sortKeyOfTime, type BatchOp, type RecordIndexEntry, type RecordPage, type Storage } from '../ports.ts';

/** Deletes per batch, and records per page of the expiry listing. */
const BATCH = 128;
/** The listing partition that orders records by age, oldest first. */
export const EXPIRY_PARTITION = 'by-age';
const LATEST = 16 ** 13 - 1;
/** The last entry made: writes in the same millisecond share it (formatting the key costs more than the rest of the index work). */
let lastCreatedAt = NaN;
let lastIndex: RecordIndexEntry = { partition: EXPIRY_PARTITION, sortKey: '' };

/**
 * The index entry that lists a record by age, oldest first (listings are newest-first by sort key,
 * so the key counts down from the end of time). Frozen: entries of the same millisecond are one object.
 */
export function expiryIndex(createdAt: number): RecordIndexEntry {
  if (createdAt !== lastCreatedAt) {
    lastCreatedAt = createdAt;
    lastIndex = Object.freeze({ partition: EXPIRY_PARTITION, sortKey: sortKeyOfTime(LATEST - createdAt) });
  }
  return lastIndex;
}


/** How often records with this retention are swept by default: a 24th of it, between 100 ms and 1 hour: expired records outlive their retention by at most that. */
export function sweepIntervalFor(retentionMs: number): number {
  return Math.min(3600_000, Math.max(100, retentionMs / 24));
}

/**
 * Sweeps a collection of `{ createdAt }` records listed by age ({@link expiryIndex}): at most once per
 * `everyMs` (default: a 24th of the retention, between 100 ms and 1 hour), the first time on the
 * first write, in the background. A sweep reads the oldest records only, and stops at the first one
 * that has not expired, so it costs what it removes, not the size of the collection.
 * @remarks Each delete carries the revision it saw, so a record replaced since (a key reused after
 * expiry) is kept. A batch that conflicts is retried delete by delete; one that still conflicts is
 * left to the next sweep. The first sweep of a process also scans records stored without the age
 * listing (written by an older version). A failed sweep is reported and retried at the next interval.
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
    private readonly reportError?: ErrorReporter,
  ) {
    this.everyMs = everyMs ?? sweepIntervalFor(retentionMs);
  }
  private scannedUnlisted = false;

  /** Start a sweep when the last one is older than the sweep interval and none is running. */
  maybeSweep(): void {
    const now = this.clock.now();
    if (this.running !== null || now - this.last < this.everyMs) return;
    this.last = now;
    this.running = this.sweep(now)
      .then(
        () => undefined,
        (error: unknown) => this.reportError?.(error, `expiry sweep of ${this.collection}`), // retried at the next interval
      )
      .finally(() => {
        this.running = null;
      });
  }

  /** Remove every record created at least `retentionMs` before `now`; returns how many. */
  async sweep(now: number): Promise<number> {
    const deletes: BatchOp[] = [];
    const expired = (r: { key: string; revision: number; value: { createdAt?: unknown } }) => {
      const createdAt = r.value?.createdAt;
      if (typeof createdAt !== 'number' || now - createdAt < this.retentionMs) return false;
      deletes.push({ kind: 'record.delete', collection: this.collection, key: r.key, expectedRevision: r.revision });
      return true;
    };
    if (!this.scannedUnlisted) {
      for (const r of await this.storage.listRecords<{ createdAt?: unknown }>(this.collection)) expired(r);
      this.scannedUnlisted = true;
    } else {
      let after: string | null = null;
      for (;;) {
        const page: RecordPage<{ createdAt?: unknown }> = await this.storage.listPage(this.collection, EXPIRY_PARTITION, BATCH, after);
        let younger = false;
        for (const r of page.records) if (!expired(r)) { younger = true; break; }
        if (younger || page.next === null) break;
        after = page.next;
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
