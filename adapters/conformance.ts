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
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isStorageConflict } from '../src/ports.ts';
import type { BatchOp, DocumentHead, Storage, StoredDocument, StoredRecord, StoredUpdate } from '../src/ports.ts';

/**
 * What `setup` hands each test.
 * @remarks
 * - `storage` must be empty.
 * - `reopen`, for persistent adapters, opens the same data again; tests call it only after they
 *   closed `storage`.
 * - `teardown` runs after every test, pass or fail. It must release everything setup created,
 *   including storages returned by `reopen`, and must tolerate storages the test already closed.
 */
export interface StorageHarness {
  storage: Storage;
  reopen?: () => Promise<Storage>;
  teardown: () => Promise<void>;
}

/** Creates a fresh, empty {@link StorageHarness}; called once per test. */
export type StorageSetup = () => Promise<StorageHarness>;

const text = new TextEncoder();
const bytes = (s: string): Uint8Array => text.encode(s);
/** Every byte value, several times over: catches codecs that are not binary-exact. */
const ALL_BYTES = Uint8Array.from({ length: 256 * 40 }, (_, i) => (i * 7) % 256);

function head(ref: string, version: number, extra: Partial<DocumentHead> = {}): DocumentHead {
  return {
    documentRef: ref,
    spaceRef: 'spc_conformance',
    accountId: 'acct_a',
    title: `Title of ${ref} ✓`,
    version,
    snapshotVersion: 1,
    contentSha256: `sha-${ref}-${version}`,
    blockCount: version,
    createdAt: 1_000,
    updatedAt: 1_000 + version,
    ...extra,
  };
}

const create = (ref: string, extra: Partial<DocumentHead> = {}, snapshot = bytes(`snap:${ref}:1`)): BatchOp => ({
  kind: 'document.create',
  head: head(ref, 1, extra),
  snapshot,
});
const append = (ref: string, version: number, extra: Partial<DocumentHead> = {}, update = bytes(`upd:${ref}:${version}`)): BatchOp => ({
  kind: 'document.append',
  head: head(ref, version, extra),
  update,
});
const compact = (ref: string, snapshotVersion: number): BatchOp => ({
  kind: 'document.compact',
  documentRef: ref,
  snapshotVersion,
  snapshot: bytes(`snap:${ref}:${snapshotVersion}`),
});
function put(collection: string, key: string, value: unknown, expectedRevision?: number | null): BatchOp {
  return expectedRevision === undefined
    ? { kind: 'record.put', collection, key, value }
    : { kind: 'record.put', collection, key, value, expectedRevision };
}
function del(collection: string, key: string, expectedRevision?: number): BatchOp {
  return expectedRevision === undefined
    ? { kind: 'record.delete', collection, key }
    : { kind: 'record.delete', collection, key, expectedRevision };
}

/** Byte arrays as plain number arrays, so deep equality is exact and diffs are readable. */
const plainUpdates = (updates: StoredUpdate[] | null) =>
  updates === null ? null : updates.map((u) => ({ version: u.version, update: Array.from(u.update) }));
const plainDoc = (doc: StoredDocument | null) =>
  doc === null ? null : { head: doc.head, snapshot: Array.from(doc.snapshot), updates: plainUpdates(doc.updates) };

async function appendVersions(storage: Storage, ref: string, from: number, to: number): Promise<void> {
  for (let v = from; v <= to; v++) await storage.commit([append(ref, v)]);
}

/** Asserts that `promise` rejects with a StorageConflictError (at `opIndex`, when given). */
async function rejectsWithConflict(promise: Promise<unknown>, opIndex?: number): Promise<void> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isStorageConflict(error), `expected StorageConflictError, got ${String(error)}`);
    if (opIndex !== undefined) assert.is((error as { opIndex: number }).opIndex, opIndex, 'opIndex of the failing op');
    return;
  }
  assert.unreachable('expected the commit to reject with StorageConflictError');
}

/** Everything observable about a few refs, collections and accounts, as plain data. */
async function dump(storage: Storage, refs: string[], collections: string[], accounts: string[]) {
  const docs: Record<string, unknown> = {};
  for (const ref of refs) docs[ref] = { doc: plainDoc(await storage.loadDocument(ref)), head: await storage.getDocumentHead(ref) };
  const records: Record<string, StoredRecord[]> = {};
  for (const c of collections) records[c] = await storage.listRecords(c);
  const heads: Record<string, DocumentHead[]> = {};
  for (const a of accounts) heads[a] = await storage.listDocumentHeads(a, 1000);
  return { docs, records, heads };
}

/**
 * Registers the storage conformance suite as a uvu suite named after `name` and runs it.
 * @param name the adapter's name, shown in the suite title.
 * @param setup creates a fresh, empty storage for each test (see {@link StorageHarness}).
 * @remarks
 * The suite pins the port's contract, including choices the port's prose leaves open:
 * - an append keeps the stored `snapshotVersion` whatever its head says (the storage owns it);
 * - compact accepts `snapshotVersion` between the stored snapshot's version and the current version;
 * - `loadUpdates` returns null for an unknown document;
 * - a record's `expectedRevision` number never matches an absent record; revisions restart at 1
 *   after a delete;
 * - ops of one batch see the effects of the ops before them;
 * - a rejected commit's `StorageConflictError.opIndex` names the first failing op;
 * - record keys sort by code unit, as bytes for ASCII (PostgreSQL: `COLLATE "C"`), so `a/10` < `a/2` < `ab`.
 * Racing commits are only checked for "exactly one wins", not for which one, so adapters that run
 * commits in parallel (a connection pool) conform. The reopen test is skipped (and says so) when
 * setup gives no `reopen`.
 */
export function storageConformance(name: string, setup: StorageSetup): void {
  const test = suite(`storage conformance: ${name}`);
  const it = (title: string, body: (harness: StorageHarness) => Promise<void>): void => {
    test(title, async () => {
      const harness = await setup();
      try {
        await body(harness);
      } finally {
        await harness.teardown();
      }
    });
  };

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
    assert.equal(Array.from(doc?.snapshot ?? []), Array.from(bytes('snap:doc-1:2')));
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

  it('compact replaces the snapshot, drops updates at or below snapshotVersion, and keeps version and updatedAt', async ({ storage }) => {
    await storage.commit([create('doc-1')]);
    await appendVersions(storage, 'doc-1', 2, 6);
    await storage.commit([compact('doc-1', 4)]);
    const doc = await storage.loadDocument('doc-1');
    assert.equal(plainDoc(doc), {
      head: head('doc-1', 6, { snapshotVersion: 4 }),
      snapshot: Array.from(bytes('snap:doc-1:4')),
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
    ];
    for (const [method, call] of calls) {
      let rejected = false;
      await call().catch(() => (rejected = true));
      assert.ok(rejected, `${method} rejects after close()`);
    }
  });

  it('reopen reads back documents, logs, compaction and records exactly', async ({ storage, reopen }) => {
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
    const scope = [['doc-a', 'doc-b', 'doc-c', 'doc-x'], ['meta', 'other'], ['acct_a', 'acct_b']] as const;
    const before = await dump(storage, [...scope[0]], [...scope[1]], [...scope[2]]);
    await storage.close();

    const again = await reopen();
    assert.equal(await dump(again, [...scope[0]], [...scope[1]], [...scope[2]]), before);
    assert.is(await again.loadUpdates('doc-a', 3), null);
    assert.equal((await again.loadUpdates('doc-a', 5))?.map((u) => u.version), [6, 7]);
    await rejectsWithConflict(again.commit([append('doc-a', 7)]), 0);
    await again.commit([append('doc-a', 8), put('meta', 'k1', { a: 3 }, 2)]);
    const after = await dump(again, [...scope[0]], [...scope[1]], [...scope[2]]);
    await again.close();

    const third = await reopen();
    assert.equal(await dump(third, [...scope[0]], [...scope[1]], [...scope[2]]), after);
    await third.close();
  });

  test.run();
}

/* ---------- reference model ---------- */

interface ModelDoc {
  head: DocumentHead;
  snapshot: number[];
  updates: { version: number; update: number[] }[];
}
interface Model {
  docs: Record<string, ModelDoc>;
  records: Record<string, { value: unknown; revision: number }>;
}

/** Applies a batch to a copy of the model the obvious way; returns the new model or the failing index. */
function modelCommit(model: Model, ops: BatchOp[]): Model | number {
  const m: Model = structuredClone(model);
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (op.kind === 'document.create') {
      if (m.docs[op.head.documentRef]) return i;
      m.docs[op.head.documentRef] = { head: { ...op.head }, snapshot: Array.from(op.snapshot), updates: [] };
    } else if (op.kind === 'document.append') {
      const d = m.docs[op.head.documentRef];
      if (!d || op.head.version !== d.head.version + 1) return i;
      d.head = { ...op.head, snapshotVersion: d.head.snapshotVersion };
      d.updates.push({ version: op.head.version, update: Array.from(op.update) });
    } else if (op.kind === 'document.compact') {
      const d = m.docs[op.documentRef];
      if (!d || op.snapshotVersion < d.head.snapshotVersion || op.snapshotVersion > d.head.version) return i;
      d.head.snapshotVersion = op.snapshotVersion;
      d.snapshot = Array.from(op.snapshot);
      d.updates = d.updates.filter((u) => u.version > op.snapshotVersion);
    } else {
      const id = `${op.collection}\u0000${op.key}`;
      const current = m.records[id];
      const e = op.expectedRevision;
      if (e === null && current) return i;
      if (typeof e === 'number' && current?.revision !== e) return i;
      if (op.kind === 'record.put') m.records[id] = { value: structuredClone(op.value), revision: (current?.revision ?? 0) + 1 };
      else delete m.records[id];
    }
  }
  return m;
}

const opSpec = fc.record({ kind: fc.nat(4), doc: fc.nat(2), key: fc.nat(2), variant: fc.nat(3), value: fc.nat(9) });
type OpSpec = { kind: number; doc: number; key: number; variant: number; value: number };

/** Turns a random op description into a concrete op that is right or deliberately wrong for `model`. */
function concreteOp(spec: OpSpec, model: Model, ns: string, stamp: number): BatchOp {
  const ref = `${ns}-d${spec.doc}`;
  const accountId = `${ns}-a${spec.doc % 2}`;
  const current = model.docs[ref]?.head;
  const version = current?.version ?? 0;
  const sv = current?.snapshotVersion ?? 1;
  const collection = `${ns}-c`;
  const key = `k${spec.key}`;
  const revision = model.records[`${collection}\u0000${key}`]?.revision ?? 0;
  switch (spec.kind) {
    case 0:
      return create(ref, { accountId, updatedAt: stamp }, bytes(`${ref}:${spec.value}`));
    case 1:
      return append(ref, version + [1, 1, 0, 2][spec.variant], { accountId, updatedAt: stamp, snapshotVersion: sv }, bytes(`u${spec.value}`));
    case 2:
      return compact(ref, [version, sv + 1, version + 1, sv - 1][spec.variant]);
    case 3:
      return put(collection, key, { v: spec.value }, [undefined, null, revision, revision + 1][spec.variant]);
    default:
      return del(collection, key, [undefined, revision, revision + 1, undefined][spec.variant]);
  }
}

async function checkAgainstModel(storage: Storage): Promise<void> {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(opSpec, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }), async (batches) => {
      const ns = `m${run++}`;
      let model: Model = { docs: {}, records: {} };
      let stamp = 0;
      for (const specs of batches) {
        const ops = specs.map((spec) => concreteOp(spec, model, ns, 2_000 + (stamp++ >> 1)));
        const expected = modelCommit(model, ops);
        const outcome = await storage.commit(ops).then(
          () => -1,
          (error: unknown) => (isStorageConflict(error) ? error.opIndex : Promise.reject(error)),
        );
        assert.is(outcome, typeof expected === 'number' ? expected : -1, `outcome of ${JSON.stringify(ops.map((o) => o.kind))}`);
        if (typeof expected !== 'number') model = expected;
      }
      for (let d = 0; d < 3; d++) {
        const ref = `${ns}-d${d}`;
        const want = model.docs[ref] ?? null;
        assert.equal(plainDoc(await storage.loadDocument(ref)), want);
        if (want) assert.equal(plainUpdates(await storage.loadUpdates(ref, want.head.snapshotVersion)), want.updates);
      }
      for (let a = 0; a < 2; a++) {
        const accountId = `${ns}-a${a}`;
        const want = Object.values(model.docs)
          .map((d) => d.head)
          .filter((h) => h.accountId === accountId)
          .sort((x, y) => y.updatedAt - x.updatedAt || (x.documentRef < y.documentRef ? 1 : -1));
        assert.equal(await storage.listDocumentHeads(accountId, 10), want);
      }
      const records = Object.entries(model.records)
        .map(([id, r]) => ({ key: id.split('\u0000')[1], value: r.value, revision: r.revision }))
        .sort((x, y) => (x.key < y.key ? -1 : 1));
      assert.equal(await storage.listRecords(`${ns}-c`), records);
    }),
    { numRuns: 40 },
  );
}
