/**
 * Conformance tests: paged listings by index partition (`listPage`, `record.put` with `index`).
 * @module
 */
import * as assert from 'uvu/assert';
import type { RecordPage, Storage } from '../../src/ports.ts';
import type { RegisterTest } from './harness.ts';
import { del, dumpListings, put, putIndexed, rejectsWith, rejectsWithConflict, streamAppend } from './fixtures.ts';

/** Every page of a listing, following `next`, as [key, ...] per page. */
async function allPages(storage: Storage, collection: string, partition: string, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | null = null;
  for (;;) {
    const page: RecordPage = await storage.listPage(collection, partition, limit, after);
    pages.push(page.records.map((r) => r.key));
    if (page.next === null) return pages;
    assert.ok(page.records.length === limit, 'only the last page may be short');
    after = page.next;
  }
}

const keysOf = async (storage: Storage, collection: string, partition: string) =>
  (await storage.listPage(collection, partition, 1000)).records.map((r) => r.key);

/** Registers the tests of listings. */
export function listingTests(it: RegisterTest): void {
  it('listPage lists a partition by sortKey descending, ties by key descending, and leaves out other partitions and unindexed records', async ({ storage }) => {
    await storage.commit([
      putIndexed('jobs', 'a', { n: 1 }, 'cred-1', '0002'),
      putIndexed('jobs', 'b', { n: 2 }, 'cred-1', '0003'),
      putIndexed('jobs', 'c', { n: 3 }, 'cred-1', '0002'),
      putIndexed('jobs', 'd', { n: 4 }, 'cred-2', '0009'),
      put('jobs', 'e', { n: 5 }),
      putIndexed('other', 'f', { n: 6 }, 'cred-1', '0009'),
      putIndexed('jobs', 'a/2', { n: 7 }, 'cred-1', '0002'),
    ]);
    const page = await storage.listPage('jobs', 'cred-1', 10);
    assert.equal(page, {
      records: [
        { key: 'b', value: { n: 2 }, revision: 1 },
        { key: 'c', value: { n: 3 }, revision: 1 },
        { key: 'a/2', value: { n: 7 }, revision: 1 },
        { key: 'a', value: { n: 1 }, revision: 1 },
      ],
      next: null,
    });
    assert.equal(await keysOf(storage, 'jobs', 'cred-2'), ['d']);
    assert.equal(await keysOf(storage, 'other', 'cred-1'), ['f']);
    assert.equal(await storage.listPage('jobs', 'nobody', 10), { records: [], next: null });
    assert.equal(await storage.listPage('missing', 'cred-1', 10), { records: [], next: null });
  });

  it('listPage pages through hundreds of records with ties: each exactly once, in order, and next is null on the last page', async ({ storage }) => {
    const expected: { key: string; sortKey: string }[] = [];
    for (let batch = 0; batch < 6; batch++) {
      const ops = [];
      for (let i = 0; i < 50; i++) {
        const n = batch * 50 + i;
        const key = `job-${(n * 7919) % 1000}`.padEnd(8, '_');
        const sortKey = String(n % 13).padStart(3, '0');
        expected.push({ key, sortKey });
        ops.push(putIndexed('jobs', key, { n }, 'p', sortKey));
      }
      await storage.commit(ops);
    }
    expected.sort((x, y) => (x.sortKey !== y.sortKey ? (x.sortKey < y.sortKey ? 1 : -1) : x.key < y.key ? 1 : -1));
    const order = expected.map((e) => e.key);
    for (const limit of [1, 7, 100, 300, 1000]) {
      const pages = await allPages(storage, 'jobs', 'p', limit);
      assert.equal(pages.flat(), order, `limit ${limit}`);
      assert.is(pages.length, Math.max(1, Math.ceil(order.length / limit)), `page count at limit ${limit}`);
    }
    const exact = await storage.listPage('jobs', 'p', 300);
    assert.is(exact.next, null, 'a page that ends exactly at the last record has no next');
  });

  it('a put with another index entry moves the record; a put without index or a delete drops it', async ({ storage }) => {
    await storage.commit([putIndexed('c', 'x', 1, 'p', '1'), putIndexed('c', 'y', 1, 'p', '2'), putIndexed('c', 'z', 1, 'p', '3')]);
    assert.equal(await keysOf(storage, 'c', 'p'), ['z', 'y', 'x']);
    await storage.commit([putIndexed('c', 'x', 2, 'p', '9', 1)]);
    assert.equal(await keysOf(storage, 'c', 'p'), ['x', 'z', 'y'], 'x moved to the front, listed once');
    await storage.commit([putIndexed('c', 'z', 2, 'q', '0')]);
    assert.equal(await keysOf(storage, 'c', 'p'), ['x', 'y']);
    assert.equal(await keysOf(storage, 'c', 'q'), ['z']);
    await storage.commit([put('c', 'y', 2)]);
    assert.equal(await keysOf(storage, 'c', 'p'), ['x'], 'a put without index takes the record out');
    assert.equal((await storage.getRecord('c', 'y'))?.value, 2, 'but keeps it');
    await storage.commit([del('c', 'x')]);
    assert.equal(await keysOf(storage, 'c', 'p'), []);
    await storage.commit([putIndexed('c', 'x', 3, 'p', '1', null)]);
    assert.equal((await storage.listPage('c', 'p', 10)).records, [{ key: 'x', value: 3, revision: 1 }]);
    await storage.commit([putIndexed('c', 'x', 4, 'p', '1'), putIndexed('c', 'x', 5, 'p', '0')]);
    assert.equal((await storage.listPage('c', 'p', 10)).records, [{ key: 'x', value: 5, revision: 3 }], 'the last put of a batch wins');
  });

  it('a page position stays valid after the record it names is moved or deleted', async ({ storage }) => {
    await storage.commit(['a', 'b', 'c', 'd', 'e'].map((k, i) => putIndexed('c', k, i, 'p', String(i))));
    const first = await storage.listPage('c', 'p', 2);
    assert.equal(first.records.map((r) => r.key), ['e', 'd']);
    await storage.commit([del('c', 'd'), putIndexed('c', 'e', 9, 'p', '/')]);
    const second = await storage.listPage('c', 'p', 2, first.next);
    assert.equal(second.records.map((r) => r.key), ['c', 'b'], 'continues strictly after (3, d)');
    const third = await storage.listPage('c', 'p', 2, second.next);
    assert.equal(third.records.map((r) => r.key), ['a', 'e']);
    assert.is(third.next, null);
  });

  it('listPage rejects a limit outside 1-1000 and a position it did not hand out', async ({ storage }) => {
    await storage.commit([putIndexed('c', 'k', 1, 'p', '1')]);
    for (const limit of [0, -1, 1001, 1.5, Number.NaN]) await rejectsWith(storage.listPage('c', 'p', limit), 'RangeError', `limit ${limit}`);
    for (const after of ['%%%', 'not a position', 'AAAA']) await rejectsWith(storage.listPage('c', 'p', 10, after), 'TypeError', `after ${after}`);
    assert.is((await storage.listPage('c', 'p', 1000)).records.length, 1);
    assert.is((await storage.listPage('c', 'p', 10, null)).records.length, 1);
  });

  it('a rejected batch changes no listing and no stream', async ({ storage }) => {
    await storage.commit([putIndexed('c', 'keep', 1, 'p', '5'), putIndexed('c', 'move', 1, 'p', '4'), streamAppend('s', 1, 'one')]);
    const before = await dumpListings(storage, 'c', ['p', 'q'], ['s', 't']);
    await rejectsWithConflict(
      storage.commit([
        putIndexed('c', 'new', 1, 'p', '9'),
        putIndexed('c', 'move', 2, 'q', '1'),
        put('c', 'keep', 2),
        del('c', 'move'),
        streamAppend('s', 2, 'two'),
        streamAppend('t', 1, 'first'),
        put('c', 'guard', 1, 3),
      ]),
      6,
    );
    assert.equal(await dumpListings(storage, 'c', ['p', 'q'], ['s', 't']), before);
    assert.is(await storage.getRecord('c', 'new'), null);
  });
}
