/**
 * {@link Storage.takeCount} over `getRecord` and compare-and-set `commit`, for the adapters that
 * serve one process (memory, lowdb): exact, since a racing take makes the commit conflict and retry.
 * @module
 */
import { isStorageConflict, type CountTaken, type CounterValue, type Storage } from '../../src/ports.ts';

/** Counts one use of the counter record `collection`/`key` (see {@link Storage.takeCount}). */
export async function takeCountByRevision(
  storage: Pick<Storage, 'getRecord' | 'commit'>,
  collection: string,
  key: string,
  windowStart: number,
  limit: number,
): Promise<CountTaken> {
  if (!Number.isFinite(windowStart)) throw new RangeError(`takeCount: windowStart must be a finite number, got ${String(windowStart)}`);
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`takeCount: limit must be a non-negative integer, got ${String(limit)}`);
  for (;;) {
    const stored = await storage.getRecord<CounterValue>(collection, key);
    const current = stored !== null && stored.value.windowStart >= windowStart ? stored.value : { v: 1 as const, windowStart, used: 0 };
    if (current.used >= limit) return { taken: false, used: current.used };
    const value: CounterValue = { v: 1, windowStart: current.windowStart, used: current.used + 1 };
    try {
      await storage.commit([{ kind: 'record.put', collection, key, value, expectedRevision: stored === null ? null : stored.revision }]);
      return { taken: true, used: value.used };
    } catch (error) {
      if (!isStorageConflict(error)) throw error;
      // A journaling adapter validates against batches not yet readable: let them land first,
      // instead of spinning on microtasks that would keep its fsync callback from ever running.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }
}
