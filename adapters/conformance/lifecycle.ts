/**
 * Conformance tests: the reference model, close and reopen.
 * @module
 */
import * as assert from 'uvu/assert';
import { streamTopic } from '../../src/ports.ts';
import type { RegisterTest } from './harness.ts';
import { ALL_BYTES, append, appendVersions, compact, create, del, dump, dumpListings, put, putIndexed, rejectsWithConflict, streamAppend } from './fixtures.ts';
import { checkAgainstModel } from './model.ts';

/** Registers the tests of the reference model, close and reopen. */
export function lifecycleTests(it: RegisterTest, name: string): void {
  it('stored state matches a reference model over random sequences of batches', async ({ storage }) => {
    await checkAgainstModel(storage);
  });

  it('close() waits for a commit already started, and that commit is applied', async ({ storage, reopen }) => {
    await storage.commit([create('doc-1')]);
    const inflight = storage.commit([append('doc-1', 2), put('c', 'k', 'v', null)]);
    await storage.close();
    await inflight;
    if (reopen === undefined) return;
    const again = await reopen();
    assert.is((await again.getDocumentHead('doc-1'))?.version, 2);
    assert.equal(await again.getRecord('c', 'k'), { key: 'k', value: 'v', revision: 1 });
    await again.close();
  });

  it('after close() every call rejects', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    await storage.close();
    const calls: [string, () => Promise<unknown>][] = [
      ['getDocumentHead', () => storage.getDocumentHead('doc-1')],
      ['loadDocument', () => storage.loadDocument('doc-1')],
      ['loadUpdates', () => storage.loadUpdates('doc-1', 1)],
      ['listDocumentHeads', () => storage.listDocumentHeads('acct_a', 10)],
      ['getRecord', () => storage.getRecord('c', 'k')],
      ['listRecords', () => storage.listRecords('c')],
      ['commit', () => storage.commit([append('doc-1', 2)])],
      ['listPage', () => storage.listPage('c', 'p', 10)],
      ['readStream', () => storage.readStream('s', 0, 10)],
      ['streamHead', () => storage.streamHead('s')],
    ];
    for (const [method, call] of calls) {
      let rejected = false;
      await call().catch(() => (rejected = true));
      assert.ok(rejected, `${method} rejects after close()`);
    }
    assert.throws(() => storage.subscribe(streamTopic('s'), () => {}), /closed/, 'subscribe throws after close()');
  });

  it('reopen reads back documents, logs, compaction (and rebuild generations) and records exactly', async ({ storage, reopen }) => {
    if (reopen === undefined) {
      console.log(`  (skipped for ${name}: setup gives no reopen, the adapter is not persistent)`);
      return;
    }
    await storage.commit([create('doc-a'), put('meta', 'k1', { a: 1 }, null)]);
    await storage.commit([create('doc-b', { accountId: 'acct_b', updatedAt: 9_000 }, ALL_BYTES), put('meta', 'k2', [1, 'two'])]);
    await appendVersions(storage, 'doc-a', 2, 6);
    await storage.commit([compact('doc-a', 4), put('meta', 'k1', { a: 2 }, 1), put('meta', 'k3', 3), put('other', 'x', null)]);
    await storage.commit([append('doc-a', 7, { title: 'after compaction ✓' }, ALL_BYTES), del('meta', 'k3')]);
    await storage.commit([create('doc-c', { updatedAt: 1_007 })]);
    await storage.commit([append('doc-c', 2), compact('doc-c', 2, 1), append('doc-c', 3, { generation: 1, updatedAt: 1_008 })]);
    const scope = [['doc-a', 'doc-b', 'doc-c', 'doc-x'], ['meta', 'other'], ['acct_a', 'acct_b']] as const;
    const before = await dump(storage, [...scope[0]], [...scope[1]], [...scope[2]]);
    await storage.close();

    const again = await reopen();
    assert.equal(await dump(again, [...scope[0]], [...scope[1]], [...scope[2]]), before);
    assert.is(await again.loadUpdates('doc-a', 3), null);
    assert.equal((await again.loadUpdates('doc-a', 5))?.map((u) => u.version), [6, 7]);
    await rejectsWithConflict(again.commit([append('doc-a', 7)]), 0);
    await rejectsWithConflict(again.commit([append('doc-c', 4)]), 0);
    await again.commit([append('doc-a', 8), put('meta', 'k1', { a: 3 }, 2), append('doc-c', 4, { generation: 1 })]);
    const after = await dump(again, [...scope[0]], [...scope[1]], [...scope[2]]);
    await again.close();

    const third = await reopen();
    assert.equal(await dump(third, [...scope[0]], [...scope[1]], [...scope[2]]), after);
    await third.close();
  });
}

/** Registers the reopen test of listings and streams (persistent adapters only). */
export function reopenListingTests(it: RegisterTest, name: string): void {
  it('reopen reads back listings, streams and their heads exactly, and compare-and-set continues from them', async ({ storage, reopen }) => {
    if (reopen === undefined) {
      console.log(`  (skipped for ${name}: setup gives no reopen, the adapter is not persistent)`);
      return;
    }
    await storage.commit([putIndexed('jobs', 'a', { n: 1 }, 'p', '1', null), putIndexed('jobs', 'b', { n: 2 }, 'p', '1'), streamAppend('s', 1, 'one')]);
    await storage.commit([putIndexed('jobs', 'c', { n: 3 }, 'q', '2'), putIndexed('jobs', 'a', { n: 4 }, 'p', '3', 1), streamAppend('s', 2, { two: 2 })]);
    await storage.commit([put('jobs', 'b', { n: 5 }), streamAppend('t', 1, [1, 'x']), putIndexed('jobs', 'd', null, 'p', '0')]);
    await storage.commit([del('jobs', 'd'), putIndexed('jobs', 'e', 'e', 'p', '1')]);
    const before = await dumpListings(storage, 'jobs', ['p', 'q'], ['s', 't', 'u']);
    await storage.close();
    const again = await reopen();
    assert.equal(await dumpListings(again, 'jobs', ['p', 'q'], ['s', 't', 'u']), before);
    await rejectsWithConflict(again.commit([streamAppend('s', 2, 'dup')]), 0);
    await again.commit([streamAppend('s', 3, 'three'), putIndexed('jobs', 'b', { n: 6 }, 'q', '9', 2)]);
    const after = await dumpListings(again, 'jobs', ['p', 'q'], ['s', 't', 'u']);
    await again.close();
    const third = await reopen();
    assert.equal(await dumpListings(third, 'jobs', ['p', 'q'], ['s', 't', 'u']), after);
    await third.close();
  });
}
