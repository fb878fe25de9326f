/**
 * Conformance tests: documents (create, append, compact, heads).
 * @module
 */
import * as assert from 'uvu/assert';
import type { RegisterTest } from './harness.ts';
import { ALL_BYTES, append, appendVersions, bytes, compact, create, dump, head, plainDoc, plainUpdates, put, rejectsWithConflict } from './fixtures.ts';

/** Registers the tests of documents (create, append, compact, heads). */
export function documentTests(it: RegisterTest): void {
  it('document.create round-trips head and snapshot exactly through loadDocument and getDocumentHead', async ({ storage }) => {
    const op = create('doc-1', {}, ALL_BYTES);
    await storage.commit([op]);
    const doc = await storage.loadDocument('doc-1');
    assert.equal(plainDoc(doc), { head: head('doc-1', 1), snapshot: Array.from(ALL_BYTES), updates: [] });
    assert.ok(doc?.snapshot instanceof Uint8Array, 'snapshot is a Uint8Array');
    assert.equal(await storage.getDocumentHead('doc-1'), head('doc-1', 1));
  });

  it('unknown documents read as null from getDocumentHead, loadDocument and loadUpdates', async ({ storage }) => {
    assert.is(await storage.getDocumentHead('nope'), null);
    assert.is(await storage.loadDocument('nope'), null);
    assert.is(await storage.loadUpdates('nope', 0), null);
    assert.equal(await storage.listDocumentHeads('acct_a', 10), []);
  });

  it('an empty batch commits and changes nothing', async ({ storage }) => {
    await storage.commit([]);
    assert.equal(await storage.listRecords('c'), []);
  });

  it('create of an existing documentRef rejects with StorageConflictError and writes nothing', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    const before = await dump(storage, ['doc-1'], ['c'], ['acct_a']);
    await rejectsWithConflict(
      storage.commit([put('c', 'k', { n: 1 }, null), create('doc-1', { title: 'other' }, bytes('other'))]),
      1,
    );
    assert.equal(await dump(storage, ['doc-1'], ['c'], ['acct_a']), before);
  });

  it('append as the next version extends the log and replaces the head', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    await storage.commit([append('doc-1', 2, { title: 'renamed' })]);
    await storage.commit([append('doc-1', 3)]);
    const doc = await storage.loadDocument('doc-1');
    assert.equal(doc?.head, head('doc-1', 3));
    assert.equal(plainUpdates(doc?.updates ?? null), [
      { version: 2, update: Array.from(bytes('upd:doc-1:2')) },
      { version: 3, update: Array.from(bytes('upd:doc-1:3')) },
    ]);
    assert.equal(Array.from(doc?.snapshot ?? []), Array.from(bytes('snap:doc-1:1')), 'snapshot untouched by appends');
  });

  it('append with a stale, repeated or skipping version, or to a missing document, rejects and writes nothing', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    await appendVersions(storage, 'doc-1', 2, 3);
    const before = await dump(storage, ['doc-1'], [], ['acct_a']);
    for (const version of [2, 3, 5, 1, 0]) await rejectsWithConflict(storage.commit([append('doc-1', version)]), 0);
    await rejectsWithConflict(storage.commit([append('ghost', 2)]), 0);
    assert.equal(await dump(storage, ['doc-1'], [], ['acct_a']), before);
    assert.is(await storage.getDocumentHead('ghost'), null);
    await storage.commit([append('doc-1', 4)]);
    assert.is((await storage.getDocumentHead('doc-1'))?.version, 4);
  });

  it('ops in one batch see the effects of the ops before them', async ({ storage }) => {
    await storage.commit([create('doc-1'), append('doc-1', 2), append('doc-1', 3), compact('doc-1', 2), put('c', 'k', 1, null), put('c', 'k', 2, 1)]);
    const doc = await storage.loadDocument('doc-1');
    assert.equal({ version: doc?.head.version, snapshotVersion: doc?.head.snapshotVersion }, { version: 3, snapshotVersion: 2 });
    assert.equal(Array.from(doc?.snapshot ?? []), Array.from(bytes('snap:doc-1:2:0')));
    assert.equal(doc?.updates.map((u) => u.version), [3]);
    assert.equal(await storage.getRecord('c', 'k'), { key: 'k', value: 2, revision: 2 });
    await rejectsWithConflict(storage.commit([append('doc-1', 4), append('doc-1', 4)]), 1);
    assert.is((await storage.getDocumentHead('doc-1'))?.version, 3);
  });

  it('loadUpdates(after) returns exactly the later updates in ascending order, and null once compacted beyond', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    await appendVersions(storage, 'doc-1', 2, 8);
    const versions = async (after: number) => (await storage.loadUpdates('doc-1', after))?.map((u) => u.version) ?? null;
    assert.equal(await versions(1), [2, 3, 4, 5, 6, 7, 8]);
    assert.equal(await versions(5), [6, 7, 8]);
    assert.equal(await versions(8), []);
    assert.equal(await versions(99), []);
    assert.equal(plainUpdates(await storage.loadUpdates('doc-1', 6)), [
      { version: 7, update: Array.from(bytes('upd:doc-1:7')) },
      { version: 8, update: Array.from(bytes('upd:doc-1:8')) },
    ]);
    await storage.commit([compact('doc-1', 5)]);
    assert.is(await versions(4), null);
    assert.is(await versions(1), null);
    assert.equal(await versions(5), [6, 7, 8]);
    assert.equal(await versions(7), [8]);
  });

  it('loadHeadAndUpdates(after), when offered, is the head and loadUpdates(after) read together; null for an unknown document', async ({ storage }) => {
    if (storage.loadHeadAndUpdates === undefined) return;
    assert.is(await storage.loadHeadAndUpdates('nope', 0), null);
    await storage.commit([create('doc-1')]);
    await appendVersions(storage, 'doc-1', 2, 6);
    for (const after of [0, 1, 3, 6, 9]) {
      const got = await storage.loadHeadAndUpdates('doc-1', after);
      assert.equal(got?.head, await storage.getDocumentHead('doc-1'), `head after ${after}`);
      assert.equal(plainUpdates(got?.updates ?? null), plainUpdates(await storage.loadUpdates('doc-1', after)), `updates after ${after}`);
    }
    await storage.commit([compact('doc-1', 4)]);
    assert.is((await storage.loadHeadAndUpdates('doc-1', 3))?.updates, null, 'the log no longer reaches back to 3');
    assert.equal((await storage.loadHeadAndUpdates('doc-1', 4))?.updates?.map((u) => u.version), [5, 6]);
    assert.is((await storage.loadHeadAndUpdates('doc-1', 4))?.head.snapshotVersion, 4);
  });

  it('compact replaces the snapshot, drops updates at or below snapshotVersion, and keeps version and updatedAt', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    await appendVersions(storage, 'doc-1', 2, 6);
    await storage.commit([compact('doc-1', 4)]);
    const doc = await storage.loadDocument('doc-1');
    assert.equal(plainDoc(doc), {
      head: head('doc-1', 6, { snapshotVersion: 4 }),
      snapshot: Array.from(bytes('snap:doc-1:4:0')),
      updates: [5, 6].map((v) => ({ version: v, update: Array.from(bytes(`upd:doc-1:${v}`)) })),
    });
    assert.equal(await storage.getDocumentHead('doc-1'), head('doc-1', 6, { snapshotVersion: 4 }));
    await storage.commit([compact('doc-1', 6)]);
    assert.equal(plainDoc(await storage.loadDocument('doc-1'))?.updates, []);
    assert.equal(await storage.loadUpdates('doc-1', 6), []);
  });

  it('compact beyond the current version, below the stored snapshot, or of a missing document rejects', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    await appendVersions(storage, 'doc-1', 2, 5);
    await storage.commit([compact('doc-1', 3)]);
    const before = await dump(storage, ['doc-1'], [], []);
    await rejectsWithConflict(storage.commit([compact('doc-1', 6)]), 0);
    await rejectsWithConflict(storage.commit([compact('doc-1', 2)]), 0);
    await rejectsWithConflict(storage.commit([compact('ghost', 1)]), 0);
    assert.equal(await dump(storage, ['doc-1'], [], []), before);
  });

  it('a rebuild (compact at the current version with generation + 1) sets the generation; appends must carry it', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    await appendVersions(storage, 'doc-1', 2, 4);
    await storage.commit([compact('doc-1', 4, 1)]);
    assert.equal(plainDoc(await storage.loadDocument('doc-1')), {
      head: head('doc-1', 4, { snapshotVersion: 4, generation: 1 }),
      snapshot: Array.from(bytes('snap:doc-1:4:1')),
      updates: [],
    });
    const before = await dump(storage, ['doc-1'], [], ['acct_a']);
    await rejectsWithConflict(storage.commit([append('doc-1', 5)]), 0);
    await rejectsWithConflict(storage.commit([append('doc-1', 5, { generation: 2 })]), 0);
    assert.equal(await dump(storage, ['doc-1'], [], ['acct_a']), before, 'an append of another generation writes nothing');
    await storage.commit([append('doc-1', 5, { generation: 1 }), append('doc-1', 6, { generation: 1 })]);
    await storage.commit([compact('doc-1', 5, 1)]);
    assert.equal(await storage.getDocumentHead('doc-1'), head('doc-1', 6, { snapshotVersion: 5, generation: 1 }));
    assert.equal((await storage.loadUpdates('doc-1', 5))?.map((u) => u.version), [6]);
  });

  it('a compaction of another generation, or a rebuild below the current version, rejects and writes nothing', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    await appendVersions(storage, 'doc-1', 2, 4);
    const before = await dump(storage, ['doc-1'], [], ['acct_a']);
    await rejectsWithConflict(storage.commit([compact('doc-1', 3, 1)]), 0);
    await rejectsWithConflict(storage.commit([compact('doc-1', 4, 2)]), 0);
    await rejectsWithConflict(storage.commit([compact('doc-1', 4, -1)]), 0);
    await rejectsWithConflict(storage.commit([append('doc-1', 5), compact('doc-1', 4, 1)]), 1);
    assert.equal(await dump(storage, ['doc-1'], [], ['acct_a']), before);
    // Within one batch, a rebuild makes the next append carry the new generation.
    await rejectsWithConflict(storage.commit([compact('doc-1', 4, 1), append('doc-1', 5)]), 1);
    await storage.commit([compact('doc-1', 4, 1), append('doc-1', 5, { generation: 1 })]);
    assert.equal((await storage.getDocumentHead('doc-1'))?.generation, 1);
  });

  it('append keeps the stored snapshotVersion whatever its head says', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    await appendVersions(storage, 'doc-1', 2, 4);
    await storage.commit([compact('doc-1', 3)]);
    await storage.commit([append('doc-1', 5, { snapshotVersion: 1 })]);
    assert.is((await storage.getDocumentHead('doc-1'))?.snapshotVersion, 3);
    assert.is(await storage.loadUpdates('doc-1', 2), null);
    assert.equal((await storage.loadUpdates('doc-1', 3))?.map((u) => u.version), [4, 5]);
  });

  it('listDocumentHeads orders by updatedAt descending, ties by documentRef descending', async ({ storage }) => {
    const stamps: Record<string, number> = { d1: 100, d2: 300, d3: 200, d4: 300, d5: 200 };
    await storage.commit(Object.entries(stamps).map(([ref, updatedAt]) => create(ref, { updatedAt })));
    const refs = async (limit: number, after?: { updatedAt: number; documentRef: string }) =>
      (await storage.listDocumentHeads('acct_a', limit, after)).map((h) => h.documentRef);
    assert.equal(await refs(10), ['d4', 'd2', 'd5', 'd3', 'd1']);
    assert.equal(await storage.listDocumentHeads('acct_a', 1), [head('d4', 1, { updatedAt: 300 })]);
    await storage.commit([append('d1', 2, { updatedAt: 400 })]);
    assert.equal(await refs(10), ['d1', 'd4', 'd2', 'd5', 'd3']);
  });

  it('listDocumentHeads honours limit and a cursor that is strictly after (updatedAt, documentRef)', async ({ storage }) => {
    const stamps: Record<string, number> = { d1: 100, d2: 300, d3: 200, d4: 300, d5: 200 };
    await storage.commit(Object.entries(stamps).map(([ref, updatedAt]) => create(ref, { updatedAt })));
    const refs = async (limit: number, after?: { updatedAt: number; documentRef: string }) =>
      (await storage.listDocumentHeads('acct_a', limit, after)).map((h) => h.documentRef);
    assert.equal(await refs(2), ['d4', 'd2']);
    assert.equal(await refs(2, { updatedAt: 300, documentRef: 'd2' }), ['d5', 'd3']);
    assert.equal(await refs(10, { updatedAt: 200, documentRef: 'd3' }), ['d1']);
    assert.equal(await refs(10, { updatedAt: 300, documentRef: 'd3' }), ['d2', 'd5', 'd3', 'd1'], 'cursor need not be a stored head');
    assert.equal(await refs(10, { updatedAt: 100, documentRef: 'd1' }), []);
    assert.equal(await refs(0), []);
    const paged: string[] = [];
    let after: { updatedAt: number; documentRef: string } | undefined;
    for (;;) {
      const page = await storage.listDocumentHeads('acct_a', 2, after);
      if (page.length === 0) break;
      paged.push(...page.map((h) => h.documentRef));
      const last = page[page.length - 1];
      after = { updatedAt: last.updatedAt, documentRef: last.documentRef };
    }
    assert.equal(paged, ['d4', 'd2', 'd5', 'd3', 'd1'], 'paging visits every head once');
  });

  it('listDocumentHeads only returns the given account', async ({ storage }) => {
    await storage.commit([create('a1'), create('b1', { accountId: 'acct_b' }), create('a2', { updatedAt: 5_000 })]);
    assert.equal((await storage.listDocumentHeads('acct_a', 10)).map((h) => h.documentRef), ['a2', 'a1']);
    assert.equal((await storage.listDocumentHeads('acct_b', 10)).map((h) => h.documentRef), ['b1']);
    assert.equal(await storage.listDocumentHeads('acct_c', 10), []);
  });

  it('an append that changes accountId moves the document to the other account\'s list', async ({ storage }) => {
    await storage.commit([create('d1'), create('d2', { updatedAt: 5_000 })]);
    await storage.commit([append('d1', 2, { accountId: 'acct_b' })]);
    assert.equal((await storage.listDocumentHeads('acct_a', 10)).map((h) => h.documentRef), ['d2']);
    assert.equal(await storage.listDocumentHeads('acct_b', 10), [head('d1', 2, { accountId: 'acct_b' })]);
  });

}
