/**
 * Conformance tests: records, atomic batches, races and copies.
 * @module
 */
import * as assert from 'uvu/assert';
import { isStorageConflict } from '../../src/ports.ts';
import type { DocumentHead, StoredDocument, StoredRecord, StoredUpdate } from '../../src/ports.ts';
import type { RegisterTest } from './harness.ts';
import { append, appendVersions, bytes, create, del, dump, compact, head, plainUpdates, put, rejectsWithConflict } from './fixtures.ts';

/** Registers the tests of records, atomic batches, races and copies. */
export function recordTests(it: RegisterTest): void {
  it('record.put assigns revisions 1, 2, 3 and honours expectedRevision null, number and absent', async ({ storage }) => {
    await storage.commit([put('c', 'k', { n: 1 }, null)]);
    assert.equal(await storage.getRecord('c', 'k'), { key: 'k', value: { n: 1 }, revision: 1 });
    await storage.commit([put('c', 'k', { n: 2 })]);
    assert.equal(await storage.getRecord('c', 'k'), { key: 'k', value: { n: 2 }, revision: 2 });
    await storage.commit([put('c', 'k', { n: 3 }, 2)]);
    assert.equal(await storage.getRecord('c', 'k'), { key: 'k', value: { n: 3 }, revision: 3 });
    await rejectsWithConflict(storage.commit([put('c', 'k', 'x', null)]), 0);
    await rejectsWithConflict(storage.commit([put('c', 'k', 'x', 2)]), 0);
    await rejectsWithConflict(storage.commit([put('c', 'k', 'x', 4)]), 0);
    await rejectsWithConflict(storage.commit([put('c', 'absent', 'x', 1)]), 0);
    await rejectsWithConflict(storage.commit([put('c', 'absent', 'x', 0)]), 0);
    assert.equal(await storage.getRecord('c', 'k'), { key: 'k', value: { n: 3 }, revision: 3 });
    assert.is(await storage.getRecord('c', 'absent'), null);
    assert.is(await storage.getRecord('other', 'k'), null, 'collections are separate');
  });

  it('record values round-trip as JSON values', async ({ storage }) => {
    const values: unknown[] = [null, true, 0, -1.5, 'text ✓ "quoted"\n', [], [1, [2, { a: null }]], { nested: { list: ['x'], n: 1e21 } }];
    await storage.commit(values.map((value, i) => put('json', `k${i}`, value)));
    for (let i = 0; i < values.length; i++) assert.equal((await storage.getRecord('json', `k${i}`))?.value, values[i]);
  });

  it('record.delete removes, honours expectedRevision, and a later put starts again at revision 1', async ({ storage }) => {
    await storage.commit([put('c', 'k', 1), put('c', 'k', 2)]);
    await rejectsWithConflict(storage.commit([del('c', 'k', 1)]), 0);
    await rejectsWithConflict(storage.commit([del('c', 'absent', 1)]), 0);
    assert.is((await storage.getRecord('c', 'k'))?.revision, 2);
    await storage.commit([del('c', 'k', 2)]);
    assert.is(await storage.getRecord('c', 'k'), null);
    await storage.commit([del('c', 'k'), del('c', 'never')]);
    await storage.commit([put('c', 'k', 'again', null)]);
    assert.equal(await storage.getRecord('c', 'k'), { key: 'k', value: 'again', revision: 1 });
    await storage.commit([del('c', 'k')]);
    assert.equal(await storage.listRecords('c'), []);
  });

  it('listRecords returns a collection in ascending key order, filtered by prefix', async ({ storage }) => {
    const keys = ['b', 'a/2', 'a/10', 'ab', 'a/1', 'c', 'a'];
    await storage.commit(keys.map((k) => put('c', k, { k })));
    await storage.commit([put('d', 'a/0', 0), put('c', 'b', { k: 'b2' })]);
    const listed = async (prefix?: string) => (await storage.listRecords<{ k: string }>('c', prefix)).map((r) => r.key);
    assert.equal(await listed(), ['a', 'a/1', 'a/10', 'a/2', 'ab', 'b', 'c']);
    assert.equal(await listed('a/'), ['a/1', 'a/10', 'a/2']);
    assert.equal(await listed('a'), ['a', 'a/1', 'a/10', 'a/2', 'ab']);
    assert.equal(await listed('zz'), []);
    assert.equal(await storage.listRecords('c', 'b'), [{ key: 'b', value: { k: 'b2' }, revision: 2 }]);
    assert.equal(await storage.listRecords('empty'), []);
  });

  it('a batch whose last op is a record.put with a mismatched expectedRevision writes none of its earlier ops', async ({ storage }) => {
    await storage.commit([create('doc-1'), put('c', 'keep', 'v', null), put('c', 'guard', 'g', null)]);
    const scope = [['doc-1', 'doc-new'], ['c', 'c2'], ['acct_a', 'acct_b']] as const;
    const before = await dump(storage, [...scope[0]], [...scope[1]], [...scope[2]]);
    await rejectsWithConflict(
      storage.commit([
        put('c', 'fresh', 1, null),
        put('c2', 'x', 1),
        create('doc-new', { accountId: 'acct_b' }),
        append('doc-1', 2),
        compact('doc-1', 2),
        del('c', 'keep'),
        put('c', 'guard', 'g2', 7),
      ]),
      6,
    );
    assert.equal(await dump(storage, [...scope[0]], [...scope[1]], [...scope[2]]), before);
  });

  it('a batch whose last op is a document.append with a wrong version writes none of its earlier ops', async ({ storage }) => {
    await storage.commit([create('doc-1'), create('doc-2')]);
    const before = await dump(storage, ['doc-1', 'doc-2', 'doc-3'], ['c'], ['acct_a']);
    await rejectsWithConflict(
      storage.commit([put('c', 'k', 1, null), create('doc-3'), append('doc-1', 2), append('doc-2', 3)]),
      3,
    );
    assert.equal(await dump(storage, ['doc-1', 'doc-2', 'doc-3'], ['c'], ['acct_a']), before);
    await storage.commit([append('doc-1', 2), append('doc-2', 2)]);
  });

  it('concurrent commits racing to append the same next version: exactly one wins, the rest conflict', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    const racers = Array.from({ length: 8 }, (_, i) => storage.commit([append('doc-1', 2, { title: `racer ${i}` }, bytes(`racer ${i}`))]));
    const results = await Promise.allSettled(racers);
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    assert.is(winners.length, 1, 'exactly one winner');
    for (const r of results) if (r.status === 'rejected') assert.ok(isStorageConflict(r.reason), `loser rejects with a conflict: ${String(r.reason)}`);
    const doc = await storage.loadDocument('doc-1');
    assert.is(doc?.head.title, `racer ${winners[0]}`);
    assert.equal(plainUpdates(doc?.updates ?? null), [{ version: 2, update: Array.from(bytes(`racer ${winners[0]}`)) }]);
  });

  it('concurrent record.put with expectedRevision null on one key: exactly one wins', async ({ storage }) => {
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => storage.commit([put('c', 'k', { by: i }, null)])));
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    assert.is(winners.length, 1, 'exactly one winner');
    for (const r of results) if (r.status === 'rejected') assert.ok(isStorageConflict(r.reason));
    assert.equal(await storage.getRecord('c', 'k'), { key: 'k', value: { by: winners[0] }, revision: 1 });
    const next = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => storage.commit([put('c', 'k', { next: i }, 1)])));
    assert.is(next.filter((r) => r.status === 'fulfilled').length, 1, 'compare-and-set on revision 1: one winner');
    assert.is((await storage.getRecord('c', 'k'))?.revision, 2);
  });

  it('returned values are copies: mutating them does not change what is stored', async ({ storage }) => {
    await storage.commit([create('doc-1'), put('c', 'k', { list: [1], n: 1 })]);
    await appendVersions(storage, 'doc-1', 2, 3);
    const before = await dump(storage, ['doc-1'], ['c'], ['acct_a']);
    const doc = (await storage.loadDocument('doc-1')) as StoredDocument;
    doc.snapshot[0] ^= 0xff;
    doc.updates[0].update[0] ^= 0xff;
    doc.updates.pop();
    doc.head.title = 'mutated';
    const h = (await storage.getDocumentHead('doc-1')) as DocumentHead;
    h.version = 99;
    const updates = (await storage.loadUpdates('doc-1', 1)) as StoredUpdate[];
    updates[1].update.fill(0);
    updates[0].version = 42;
    (await storage.listDocumentHeads('acct_a', 10))[0].title = 'mutated';
    const record = (await storage.getRecord<{ list: number[]; n: number }>('c', 'k')) as StoredRecord<{ list: number[]; n: number }>;
    record.value.list.push(2);
    record.value.n = 2;
    (await storage.listRecords<{ list: number[] }>('c'))[0].value.list.push(3);
    assert.equal(await dump(storage, ['doc-1'], ['c'], ['acct_a']), before);
  });

  it('inputs are copied: mutating bytes, heads or values after commit does not change what is stored', async ({ storage }) => {
    const snapshot = bytes('snapshot');
    const createOp = create('doc-1', {}, snapshot);
    const update = bytes('update');
    const appendOp = append('doc-1', 2, {}, update);
    const value = { list: [1] };
    await storage.commit([createOp, put('c', 'k', value)]);
    await storage.commit([appendOp]);
    snapshot.fill(0);
    update.fill(0);
    if (appendOp.kind === 'document.append') appendOp.head.title = 'mutated';
    value.list.push(2);
    const doc = await storage.loadDocument('doc-1');
    assert.equal(Array.from(doc?.snapshot ?? []), Array.from(bytes('snapshot')));
    assert.equal(Array.from(doc?.updates[0]?.update ?? []), Array.from(bytes('update')));
    assert.is(doc?.head.title, head('doc-1', 2).title);
    assert.equal((await storage.getRecord('c', 'k'))?.value, { list: [1] });
  });

}
