/**
 * Receipts replay with their hash after the log was compacted past their version, on every adapter;
 * a rebuild (a fresh Yjs history) changes nothing a caller can read, also for a second engine over
 * the same storage that held the old history.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { accountActor, freshKey, mutate, newDocument } from '../../fixtures/engine-kit.ts';
import { manualClock, type ManualClock } from '../clock.ts';
import { createEngine, type Engine } from '../engine.ts';
import { sha256Hex } from '../hash.ts';
import { seededIds } from '../ids.ts';
import type { BatchOp, Storage } from '../ports.ts';
import { RECENT_VERSIONS } from './content.ts';
import { HISTORY_COLLECTION } from './history.ts';
import type { MutationOutcome } from './types.ts';

const alice = accountActor('alice');
const HOUR = 3600_000;
const para = (markdown: string) => ({ kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown }] });
const edit = (blockId: string, markdown: string) => ({ kind: 'edit', blockId, block: { type: 'paragraph', markdown } });

function engineOver(storage: Storage, seed: number, clock: ManualClock, compactEvery = 8): Engine {
  return createEngine({ storage, ids: seededIds(seed), clock, idempotencyRetentionMs: 2 * HOUR, documents: { compactEvery } });
}

interface Made {
  key: string;
  ifRevision: string;
  mutation: unknown;
  out: MutationOutcome;
  /** SHA-256 of the document's JSON at the version the mutation made, as the test computed it. */
  sha256: string;
}

/** A document with two blocks, then `n` mutations (mostly edits of those blocks), each remembered. */
async function editHistory(engine: Engine, n: number, clock: ManualClock) {
  const { ref, revision } = await newDocument(engine, alice);
  const made: Made[] = [];
  let rev = revision;
  let ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const mutation = i < 2 || i % 17 === 0 ? para(`block ${i}`) : edit(ids[i % ids.length]!, `edit ${i} with **text**`);
    const key = freshKey();
    const out = await mutate(engine, alice, ref, rev, mutation, key);
    if (out.receipt.affectedBlockIds.length && mutation.kind === 'create') ids = [...ids, ...out.receipt.affectedBlockIds];
    made.push({ key, ifRevision: rev, mutation, out, sha256: sha256Hex(JSON.stringify(JSON.parse(out.document.documentJson))) });
    rev = out.document.revision;
    clock.advance(1000);
  }
  return { ref, made };
}

const replay = (engine: Engine, ref: string, m: Made) =>
  engine.documents.mutate(alice, ref, { idempotencyKey: m.key, ifRevision: m.ifRevision, body: { v: 1, intent: 'test', mutation: m.mutation } });

/** Replays `made[i]` for each i and checks the same receipt, with the hash of that version. */
async function replaysSame(engine: Engine, ref: string, made: Made[], indexes: number[]): Promise<void> {
  for (const i of indexes) {
    const m = made[i]!;
    const again = await replay(engine, ref, m);
    assert.is(again.idempotency.idempotency, 'replayed', `mutation ${i}`);
    assert.is(again.idempotency.receiptRef, m.out.idempotency.receiptRef);
    assert.is(again.receipt.contentSha256, m.sha256, `hash of version ${m.out.receipt.resultingVersion}`);
    assert.equal(again.receipt, m.out.receipt);
  }
}

async function replayAfterCompaction(storage: Storage, reopen: () => Promise<Storage>, close: (s: Storage) => Promise<void>): Promise<void> {
  const clock = manualClock();
  const engine = engineOver(storage, 1, clock);
  const { ref, made } = await editHistory(engine, 3 * RECENT_VERSIONS, clock);
  await engine.documents.flush();
  const head = await storage.getDocumentHead(ref);
  const early = [0, 1, 2, 5, 20, 40, 63];
  assert.ok(head!.snapshotVersion > made[63]!.out.receipt.resultingVersion, 'the early versions were compacted away');
  assert.ok(head!.generation > 0, 'the document was rebuilt on the way');
  assert.ok((await storage.listRecords(HISTORY_COLLECTION)).length > 1, 'the folded stretches are kept');
  await replaysSame(engine, ref, made, early);
  await close(storage);
  // Another process (here: the same folder reopened) holds none of it in memory.
  const again = await reopen();
  const other = engineOver(again, 2, clock);
  await replaysSame(other, ref, made, [...early, 100, 3 * RECENT_VERSIONS - 1]);
  await close(again);
}

test('memory: receipts of versions compacted away and out of the ring replay with their hash', async () => {
  const storage = memoryStorage();
  await replayAfterCompaction(storage, async () => storage, async () => {});
});

test('lowdb: receipts of versions compacted away and out of the ring replay with their hash, also after a reopen', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kw-history-'));
  try {
    await replayAfterCompaction(await lowdbStorage({ dir }), () => lowdbStorage({ dir }), (s) => s.close());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('after the retention window the folded stretches are swept and the same key is a new intent', async () => {
  const clock = manualClock();
  const storage = memoryStorage();
  const engine = engineOver(storage, 3, clock);
  const { ref, made } = await editHistory(engine, 40, clock);
  await engine.documents.flush();
  assert.ok((await storage.listRecords(HISTORY_COLLECTION)).length >= 3);
  clock.advance(2 * HOUR);
  let rev = made.at(-1)!.out.document.revision;
  for (let i = 0; i < 8; i++) rev = (await mutate(engine, alice, ref, rev, para(`late ${i}`))).document.revision; // one compaction
  await engine.documents.flush();
  const left = await storage.listRecords<{ createdAt: number }>(HISTORY_COLLECTION);
  assert.ok(left.every((r) => clock.now() - r.value.createdAt < 2 * HOUR), 'only stretches of replayable receipts are left');
  assert.ok(left.length <= 1);
  const reused = await mutate(engine, alice, ref, rev, para('a new intent'), made[0]!.key);
  assert.is(reused.idempotency.idempotency, 'created');
  assert.is.not(reused.idempotency.receiptRef, made[0]!.out.idempotency.receiptRef);
});

test('a stretch is not kept when every receipt it could serve has expired', async () => {
  const clock = manualClock();
  const storage = memoryStorage();
  const engine = engineOver(storage, 4, clock, 1_000_000);
  const { ref, made } = await editHistory(engine, 6, clock);
  clock.advance(2 * HOUR);
  const later = engineOver(storage, 5, clock, 1);
  const last = await mutate(later, alice, ref, made.at(-1)!.out.document.revision, para('one more'));
  await later.documents.flush();
  assert.is((await storage.getDocumentHead(ref))!.snapshotVersion, last.receipt.resultingVersion, 'compacted');
  assert.equal(await storage.listRecords(HISTORY_COLLECTION), [], 'only the new head is replayable, and the snapshot serves it');
});

/** A storage whose compactions wait until `open()` (every other call goes through at once). */
function gatedCompactions(storage: Storage) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const commit = async (ops: BatchOp[]) => {
    if (ops.some((op) => op.kind === 'document.compact')) await gate;
    return storage.commit(ops);
  };
  const gated = new Proxy(storage, {
    get: (target, prop) => {
      if (prop === 'commit') return commit;
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { gated, open };
}

const FORMATS = ['rich-json', 'blocks', 'markdown'] as const;
const readAll = (engine: Engine, ref: string) => Promise.all(FORMATS.map((f) => engine.documents.read(alice, ref, f)));

test('a rebuild changes no read, revision, version or receipt, also for an engine that held the old history at that version', async () => {
  const clock = manualClock();
  const shared = memoryStorage();
  const { gated, open } = gatedCompactions(shared);
  const a = engineOver(gated, 8, clock, 31);
  const b = engineOver(shared, 9, clock, 1_000_000);
  const { ref, made } = await editHistory(a, 30, clock);
  // A's 31st write makes its compaction due; it waits at the gate while B loads that same version.
  const last = await mutate(a, alice, ref, made.at(-1)!.out.document.revision, para('the rebuilt version'));
  const before = await readAll(b, ref);
  assert.is(before[0]!.version, last.receipt.resultingVersion);
  open();
  await a.documents.flush();
  const head = await shared.getDocumentHead(ref);
  assert.equal([head!.generation, head!.snapshotVersion], [1, last.receipt.resultingVersion], 'rebuilt at that version');
  assert.equal(await readAll(a, ref), before, 'the rebuilding engine reads the same');
  assert.equal(await readAll(b, ref), before, 'the engine that held the old history reads the same');
  assert.equal(await readAll(engineOver(shared, 10, clock), ref), before, 'a fresh engine reads the same');
  await replaysSame(a, ref, made, [0, 10, 29]);
  await replaysSame(b, ref, made, [0, 10, 29]);
  // A writes on the new history; B, still holding the old one at the rebuilt version, reloads.
  const blockId = last.receipt.affectedBlockIds[0]!;
  const onNew = await mutate(a, alice, ref, last.document.revision, edit(blockId, 'written on the new history'));
  assert.is(onNew.receipt.resultingVersion, last.receipt.resultingVersion + 1);
  const seenByB = await readAll(b, ref);
  assert.equal(seenByB, await readAll(a, ref));
  assert.match(seenByB[2]!.format === 'markdown' ? seenByB[2].markdown : '', 'written on the new history');
  // And B's own writes go on from there, seen by A.
  const byB = await mutate(b, alice, ref, onNew.document.revision, edit(blockId, 'and then by B'));
  assert.is(byB.receipt.resultingVersion, onNew.receipt.resultingVersion + 1);
  const readByA = await a.documents.read(alice, ref, 'markdown');
  assert.is(readByA.version, byB.receipt.resultingVersion);
  assert.match(readByA.format === 'markdown' ? readByA.markdown : '', 'and then by B');
});

test('two engines compacting from the same snapshot: one keeps the stretch, the other steps back without an error', async () => {
  const clock = manualClock();
  const shared = memoryStorage();
  const { gated, open } = gatedCompactions(shared);
  const errors: string[] = [];
  const onError = (_: unknown, source: string) => void errors.push(source);
  const a = createEngine({ storage: gated, ids: seededIds(13), clock, idempotencyRetentionMs: 2 * HOUR, documents: { compactEvery: 8 }, onError });
  const b = createEngine({ storage: shared, ids: seededIds(14), clock, idempotencyRetentionMs: 2 * HOUR, documents: { compactEvery: 8 }, onError });
  const { ref, made } = await editHistory(a, 7, clock);
  await b.documents.read(alice, ref);
  // A's 8th write makes its compaction due; it waits at the gate while B compacts from the same snapshot.
  const eighth = await mutate(a, alice, ref, made.at(-1)!.out.document.revision, para('eighth'));
  const ninth = await mutate(b, alice, ref, eighth.document.revision, para('ninth'));
  await b.documents.flush();
  assert.is((await shared.getDocumentHead(ref))!.snapshotVersion, ninth.receipt.resultingVersion);
  open();
  await a.documents.flush();
  assert.equal(errors, []);
  assert.is((await shared.listRecords(HISTORY_COLLECTION)).length, 1, 'one stretch from that snapshot');
  const read = await a.documents.read(alice, ref, 'markdown');
  assert.is(read.version, ninth.receipt.resultingVersion);
  assert.match(read.format === 'markdown' ? read.markdown : '', 'ninth');
  await replaysSame(a, ref, made, [0, 3, 6]);
});

test('an engine whose cached tree is of the old history at the rebuilt version writes on the new one', async () => {
  const clock = manualClock();
  const shared = memoryStorage();
  const a = engineOver(shared, 10, clock, 1_000_000);
  const b = engineOver(shared, 11, clock, 1);
  const { ref, made } = await editHistory(a, 12, clock);
  const blockId = made[0]!.out.receipt.affectedBlockIds[0]!;
  await b.documents.read(alice, ref);
  // B's write compacts and rebuilds; A's tree is now of the old generation at the same version.
  const byB = await mutate(b, alice, ref, made.at(-1)!.out.document.revision, edit(blockId, 'by B'));
  await b.documents.flush();
  assert.is((await shared.getDocumentHead(ref))!.generation, 1);
  const byA = await mutate(a, alice, ref, byB.document.revision, edit(blockId, 'by A, after the rebuild'));
  assert.is(byA.receipt.resultingVersion, byB.receipt.resultingVersion + 1);
  const fresh = engineOver(shared, 12, clock, 1_000_000);
  const read = await fresh.documents.read(alice, ref, 'markdown');
  assert.match(read.format === 'markdown' ? read.markdown : '', 'by A, after the rebuild');
  assert.is(read.version, byA.receipt.resultingVersion);
});

test.run();
