/**
 * Conformance tests: append-only streams (`stream.append`, `readStream`, `streamHead`).
 * @module
 */
import * as assert from 'uvu/assert';
import { isStorageConflict } from '../../src/ports.ts';
import type { RegisterTest } from './harness.ts';
import { put, putIndexed, rejectsWith, rejectsWithConflict, streamAppend } from './fixtures.ts';

/** Registers the tests of streams. */
export function streamTests(it: RegisterTest): void {
  it('stream.append takes seq head+1, counting earlier appends of the batch; readStream pages after a seq; streamHead follows', async ({ storage }) => {
    assert.is(await storage.streamHead('job-1'), 0);
    assert.equal(await storage.readStream('job-1', 0, 10), []);
    await storage.commit([streamAppend('job-1', 1, { type: 'queued' })]);
    await storage.commit([streamAppend('job-1', 2, { type: 'running' }), streamAppend('job-1', 3, 'text ✓'), streamAppend('job-2', 1, null)]);
    assert.is(await storage.streamHead('job-1'), 3);
    assert.is(await storage.streamHead('job-2'), 1);
    assert.equal(await storage.readStream('job-1', 0, 10), [
      { seq: 1, value: { type: 'queued' } },
      { seq: 2, value: { type: 'running' } },
      { seq: 3, value: 'text ✓' },
    ]);
    assert.equal(await storage.readStream('job-1', 1, 1), [{ seq: 2, value: { type: 'running' } }]);
    assert.equal((await storage.readStream('job-1', 2, 10)).map((e) => e.seq), [3]);
    assert.equal(await storage.readStream('job-1', 3, 10), []);
    assert.equal(await storage.readStream('job-1', 99, 10), []);
    assert.equal(await storage.readStream('job-2', 0, 1000), [{ seq: 1, value: null }]);
  });

  it('readStream pages through a long stream exactly once', async ({ storage }) => {
    for (let from = 1; from <= 1200; from += 300) {
      await storage.commit(Array.from({ length: 300 }, (_, i) => streamAppend('long', from + i, { i: from + i })));
    }
    assert.is(await storage.streamHead('long'), 1200);
    const seen: number[] = [];
    for (let after = 0; ; ) {
      const page = await storage.readStream<{ i: number }>('long', after, 1000);
      if (page.length === 0) break;
      for (const e of page) assert.is(e.value.i, e.seq);
      seen.push(...page.map((e) => e.seq));
      after = page[page.length - 1].seq;
    }
    assert.equal(seen, Array.from({ length: 1200 }, (_, i) => i + 1));
  });

  it('a stream.append with any seq but head+1 rejects with StorageConflictError naming the op, and writes nothing', async ({ storage }) => {
    await storage.commit([streamAppend('s', 1, 'a'), streamAppend('s', 2, 'b')]);
    for (const seq of [0, 1, 2, 4, 2.5, -1]) await rejectsWithConflict(storage.commit([streamAppend('s', seq, 'x')]), 0);
    await rejectsWithConflict(storage.commit([streamAppend('t', 2, 'x')]), 0);
    await rejectsWithConflict(storage.commit([put('c', 'k', 1), streamAppend('s', 3, 'c'), streamAppend('s', 3, 'again')]), 2);
    await rejectsWithConflict(storage.commit([streamAppend('s', 3, 'c'), streamAppend('s', 5, 'skip')]), 1);
    assert.is(await storage.streamHead('s'), 2);
    assert.is(await storage.streamHead('t'), 0);
    assert.is(await storage.getRecord('c', 'k'), null);
    assert.equal((await storage.readStream('s', 0, 10)).map((e) => e.value), ['a', 'b']);
    await storage.commit([streamAppend('s', 3, 'c')]);
    assert.is(await storage.streamHead('s'), 3);
  });

  it('concurrent appends racing for the same seq: exactly one wins, the rest conflict', async ({ storage }) => {
    await storage.commit([streamAppend('s', 1, 'first')]);
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => storage.commit([streamAppend('s', 2, { by: i })])));
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    assert.is(winners.length, 1, 'exactly one winner');
    for (const r of results) if (r.status === 'rejected') assert.ok(isStorageConflict(r.reason), `loser rejects with a conflict: ${String(r.reason)}`);
    assert.equal(await storage.readStream('s', 1, 10), [{ seq: 2, value: { by: winners[0] } }]);
  });

  it('a batch appending to a stream and putting indexed records is atomic both ways', async ({ storage }) => {
    await storage.commit([putIndexed('jobs', 'j1', { state: 'queued' }, 'cred', '1', null), streamAppend('events:j1', 1, { state: 'queued' })]);
    await rejectsWithConflict(storage.commit([streamAppend('events:j1', 2, { state: 'running' }), putIndexed('jobs', 'j1', { state: 'running' }, 'cred', '2', 7)]), 1);
    assert.is(await storage.streamHead('events:j1'), 1);
    await storage.commit([streamAppend('events:j1', 2, { state: 'running' }), putIndexed('jobs', 'j1', { state: 'running' }, 'cred', '2', 1)]);
    assert.is(await storage.streamHead('events:j1'), 2);
    assert.equal((await storage.listPage('jobs', 'cred', 10)).records, [{ key: 'j1', value: { state: 'running' }, revision: 2 }]);
  });

  it('stream values are copied both ways, and bad arguments reject', async ({ storage }) => {
    const value = { list: [1] };
    await storage.commit([streamAppend('s', 1, value)]);
    value.list.push(2);
    const [read] = await storage.readStream<{ list: number[] }>('s', 0, 1);
    read.value.list.push(3);
    assert.equal(await storage.readStream('s', 0, 1), [{ seq: 1, value: { list: [1] } }]);
    for (const limit of [0, 1001, 2.5]) await rejectsWith(storage.readStream('s', 0, limit), 'RangeError', `limit ${limit}`);
    for (const after of [-1, 0.5, Number.NaN]) await rejectsWith(storage.readStream('s', after, 10), 'RangeError', `afterSeq ${after}`);
    await rejectsWith(storage.commit([streamAppend('s', 2, undefined)]), 'TypeError', 'an undefined value');
    assert.is(await storage.streamHead('s'), 1);
  });
}
