import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { manualClock } from '../clock.ts';
import type { Storage } from '../ports.ts';
import { IDEMPOTENCY_COLLECTION, IdempotencyStore } from './idempotency.ts';
import { ExpirySweeper } from './sweep.ts';

/** A store whose listPage calls and the records they hand out are counted. */
function counted(inner: Storage) {
  const seen = { pages: 0, records: 0, scans: 0 };
  const storage: Storage = {
    ...inner,
    async listPage<T>(collection: string, partition: string, limit: number, after?: string | null) {
      const page = await inner.listPage<T>(collection, partition, limit, after);
      seen.pages++;
      seen.records += page.records.length;
      return page;
    },
    async listRecords(collection, prefix) {
      seen.scans++;
      return inner.listRecords(collection, prefix);
    },
  };
  return { storage, seen };
}

test('a sweep after the first reads the oldest records only and stops at the first that has not expired', async () => {
  const { storage, seen } = counted(memoryStorage());
  const clock = manualClock(1_000_000);
  const idem = new IdempotencyStore(storage, clock, { retentionMs: 10_000 });
  const put = (key: string) => storage.commit([idem.recordOp(key, { fingerprint: 'f', receiptRef: `r_${key}_000000000000`, createdAt: clock.now(), result: null })]);
  for (let i = 0; i < 300; i++) await put(`old-${i}`);
  clock.advance(5_000);
  for (let i = 0; i < 300; i++) await put(`new-${i}`);
  const sweeper = new ExpirySweeper(storage, clock, IDEMPOTENCY_COLLECTION, 10_000);
  assert.is(await sweeper.sweep(clock.now()), 0, 'the first sweep scans everything once; nothing expired yet');
  assert.is(seen.scans, 1);
  clock.advance(6_000); // the 300 old records expired, the 300 new ones not
  const before = { ...seen };
  assert.is(await sweeper.sweep(clock.now()), 300);
  assert.is(seen.scans, before.scans, 'no full scan');
  assert.ok(seen.records - before.records <= 300 + 128, `read ${seen.records - before.records} records for 300 expired`);
  assert.is((await storage.listRecords(IDEMPOTENCY_COLLECTION)).length, 300);
  assert.ok((await storage.listRecords(IDEMPOTENCY_COLLECTION)).every((r) => r.key.startsWith('new-')));
});

test('a failed sweep is reported, not swallowed', async () => {
  const inner = memoryStorage();
  const storage: Storage = { ...inner, listRecords: () => Promise.reject(new Error('disk gone')) };
  const errors: string[] = [];
  const clock = manualClock(0);
  const sweeper = new ExpirySweeper(storage, clock, IDEMPOTENCY_COLLECTION, 1000, 1000, (e, source) => errors.push(`${source}: ${(e as Error).message}`));
  sweeper.maybeSweep();
  await sweeper.flush();
  assert.equal(errors, [`expiry sweep of ${IDEMPOTENCY_COLLECTION}: disk gone`]);
});

test.run();
