/**
 * The storage conformance suite: one set of behaviour tests that every {@link Storage} adapter runs
 * unchanged (memory, lowdb, later PostgreSQL, and embedders' own). Exported as `./testing`.
 *
 * ```ts
 * import { storageConformance } from 'knowledge-workspace/testing';
 * storageConformance('my adapter', async () => {
 *   const storage = await myStorage();
 *   return { storage, teardown: async () => { await storage.close().catch(() => {}); } };
 * });
 * ```
 * @module
 */
import { suite } from 'uvu';
import type { Storage } from '../../src/ports.ts';
import { counterTests } from './counters.ts';
import { documentTests } from './documents.ts';
import type { RegisterTest, StorageHarness, StorageSetup } from './harness.ts';
import { lifecycleTests, reopenListingTests } from './lifecycle.ts';
import { listingTests } from './listing.ts';
import { notificationTests } from './notifications.ts';
import { recordTests } from './records.ts';
import { streamTests } from './streams.ts';

export type { RegisterTest, StorageHarness, StorageSetup } from './harness.ts';

/**
 * Registers the storage conformance suite as a uvu suite named after `name` and runs it.
 * @param name the adapter's name, shown in the suite title.
 * @param setup creates a fresh, empty storage for each test (see {@link StorageHarness}).
 * @remarks
 * The suite pins the port's contract, including choices the port's prose leaves open:
 * - an append keeps the stored `snapshotVersion` whatever its head says (the storage owns it);
 * - compact accepts `snapshotVersion` between the stored snapshot's version and the current version;
 * - an append must carry the stored `generation`; a compact carries it too, or generation + 1 (a
 *   rebuild), which only the current version accepts, and the stored head takes it;
 * - `loadUpdates` returns null for an unknown document;
 * - a record's `expectedRevision` number never matches an absent record; revisions restart at 1
 *   after a delete;
 * - ops of one batch see the effects of the ops before them;
 * - a rejected commit's `StorageConflictError.opIndex` names the first failing op;
 * - record keys sort by code unit, as bytes for ASCII (PostgreSQL: `COLLATE "C"`), so `a/10` < `a/2` < `ab`;
 * - `listPage` and `readStream` reject a `limit` outside 1-1000 (RangeError); `listPage` rejects a
 *   position it did not hand out (TypeError); a position stays usable after its record moved;
 * - a stream append with a seq other than head + 1 is a conflict like a wrong document version;
 * - notifications may arrive after `commit` resolves (other processes), so the tests wait for them;
 *   an adapter must not call a listener for a rejected batch, nor twice for one batch and topic;
 * - `subscribe` throws after `close()`;
 * - `takeCount`, when offered, never counts more than the limit per window, racing or not.
 * Racing commits are only checked for "exactly one wins", not for which one, so adapters that run
 * commits in parallel (a connection pool) conform. The reopen test is skipped (and says so) when
 * setup gives no `reopen`.
 */
export function storageConformance(name: string, setup: StorageSetup): void {
  const test = suite(`storage conformance: ${name}`);
  const it: RegisterTest = (title, body) => {
    test(title, async () => {
      const harness: StorageHarness = await setup();
      try {
        await body(harness);
      } finally {
        await harness.teardown();
      }
    });
  };
  documentTests(it);
  recordTests(it);
  listingTests(it);
  streamTests(it);
  notificationTests(it);
  lifecycleTests(it, name);
  reopenListingTests(it, name);
  counterTests(it, name);
  test.run();
}
