import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { accountActor, errorOf, freshKey, mutate, newDocument } from '../../fixtures/engine-kit.ts';
import { manualClock } from '../clock.ts';
import { createEngine } from '../engine.ts';
import { seededIds } from '../ids.ts';
import type { Storage } from '../ports.ts';
import { IDEMPOTENCY_COLLECTION } from './idempotency.ts';

const alice = accountActor('alice');
const HOUR = 3600_000;
const para = (markdown: string) => ({ kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown }] });

function engineOver(storage: Storage, seed: number, clock = manualClock(), idempotencyRetentionMs?: number) {
  return createEngine({ storage, ids: seededIds(seed), clock, ...(idempotencyRetentionMs === undefined ? {} : { idempotencyRetentionMs }) });
}

test('an exact retry inside the retention window replays the same receipt; after it the key is a new intent', async () => {
  const clock = manualClock();
  const engine = engineOver(memoryStorage(), 1, clock, 2 * HOUR);
  const { ref, revision } = await newDocument(engine, alice);
  const key = freshKey();
  const first = await mutate(engine, alice, ref, revision, para('one'), key);
  clock.advance(2 * HOUR - 1);
  const replay = await mutate(engine, alice, ref, revision, para('one'), key);
  assert.is(replay.idempotency.idempotency, 'replayed');
  assert.equal(replay.receipt, first.receipt);
  assert.is(replay.idempotency.receiptRef, first.idempotency.receiptRef);
  assert.is((await errorOf(mutate(engine, alice, ref, revision, para('other'), key))).code, 'IDEMPOTENCY_CONFLICT');
  clock.advance(1);
  const current = first.document.revision;
  const again = await mutate(engine, alice, ref, current, para('other'), key);
  assert.is(again.idempotency.idempotency, 'created');
  assert.is(again.receipt.baseVersion, 2);
  assert.is.not(again.idempotency.receiptRef, first.idempotency.receiptRef);
  const retried = await mutate(engine, alice, ref, current, para('other'), key);
  assert.is(retried.idempotency.idempotency, 'replayed');
  assert.equal(retried.receipt, again.receipt);
});

test('expired records are removed from storage by the background sweep', async () => {
  const clock = manualClock();
  const storage = memoryStorage();
  const engine = engineOver(storage, 2, clock, HOUR);
  const { ref, revision } = await newDocument(engine, alice);
  let rev = revision;
  for (let i = 0; i < 5; i++) rev = (await mutate(engine, alice, ref, rev, para(`b${i}`))).document.revision;
  await engine.documents.flush();
  assert.is((await storage.listRecords(IDEMPOTENCY_COLLECTION)).length, 6);
  clock.advance(HOUR);
  await mutate(engine, alice, ref, rev, para('late'));
  await engine.documents.flush();
  const left = await storage.listRecords<{ createdAt: number }>(IDEMPOTENCY_COLLECTION);
  assert.is(left.length, 1, 'only the record of the write made after the window is kept');
  assert.is(left[0]!.value.createdAt, clock.now());
});

test('two processes over one store: the same request raced through both is applied once and replayed by the other', async () => {
  const storage = memoryStorage();
  const a = engineOver(storage, 3);
  const b = engineOver(storage, 4);
  const { ref, revision } = await newDocument(a, alice);
  await b.documents.read(alice, ref); // both processes hold the document
  const key = freshKey();
  const [x, y] = await Promise.all([mutate(a, alice, ref, revision, para('once'), key), mutate(b, alice, ref, revision, para('once'), key)]);
  assert.equal([x.idempotency.idempotency, y.idempotency.idempotency].sort(), ['created', 'replayed']);
  assert.equal(x.receipt, y.receipt);
  assert.is(x.idempotency.receiptRef, y.idempotency.receiptRef);
  const read = await b.documents.read(alice, ref, 'blocks');
  assert.is(read.format === 'blocks' && read.blocks.length, 1);
});

test('two processes over one store: one key raced with two different requests gives one write and one IDEMPOTENCY_CONFLICT', async () => {
  const storage = memoryStorage();
  const a = engineOver(storage, 5);
  const b = engineOver(storage, 6);
  const { ref, revision } = await newDocument(a, alice);
  await b.documents.read(alice, ref);
  const key = freshKey();
  const outcomes = await Promise.allSettled([mutate(a, alice, ref, revision, para('a'), key), mutate(b, alice, ref, revision, para('b'), key)]);
  const failed = outcomes.filter((o) => o.status === 'rejected');
  assert.is(failed.length, 1);
  assert.is((failed[0] as PromiseRejectedResult).reason.code, 'IDEMPOTENCY_CONFLICT');
});

test('two processes over one store: a creation raced through both makes one document', async () => {
  const storage = memoryStorage();
  const a = engineOver(storage, 7);
  const b = engineOver(storage, 8);
  const key = freshKey();
  const body = { v: 1, title: 'Raced' };
  const [x, y] = await Promise.all([a.documents.create(alice, { idempotencyKey: key, body }), b.documents.create(alice, { idempotencyKey: key, body })]);
  assert.equal([x.idempotency.idempotency, y.idempotency.idempotency].sort(), ['created', 'replayed']);
  assert.is(x.document.documentRef, y.document.documentRef);
  assert.is((await a.documents.list(alice, {})).items.length, 1);
});

test('requests in flight together: a duplicate of each waits for its first and replays it, whatever the order they settle in', async () => {
  const engine = engineOver(memoryStorage(), 7);
  const { ref, revision } = await newDocument(engine, alice);
  const [a, b, c] = [freshKey(), freshKey(), freshKey()];
  // Three keys in flight at once (one document: they queue on its lock), each sent twice.
  const calls = [
    mutate(engine, alice, ref, revision, para('a'), a),
    mutate(engine, alice, ref, revision, para('b'), b),
    mutate(engine, alice, ref, revision, para('a'), a),
    mutate(engine, alice, ref, revision, para('c'), c),
    mutate(engine, alice, ref, revision, para('b'), b),
    mutate(engine, alice, ref, revision, para('c'), c),
  ];
  const settled = await Promise.allSettled(calls);
  const [a1, b1, a2, c1, b2, c2] = settled;
  // The first of a applies; b and c then fail the revision precondition, and so do their duplicates.
  assert.is(a1.status === 'fulfilled' && a1.value.idempotency.idempotency, 'created');
  assert.is(a2.status === 'fulfilled' && a2.value.idempotency.idempotency, 'replayed');
  if (a1.status === 'fulfilled' && a2.status === 'fulfilled') assert.equal(a2.value.receipt, a1.value.receipt);
  for (const s of [b1, c1, b2, c2]) assert.is(s.status === 'rejected' && (s.reason as { code?: string }).code, 'PRECONDITION_FAILED');
  // Nothing is left in flight: each key answers again at once, a new request on it is a conflict.
  const again = await mutate(engine, alice, ref, revision, para('a'), a);
  assert.is(again.idempotency.idempotency, 'replayed');
  assert.is((await errorOf(mutate(engine, alice, ref, revision, para('other'), a))).code, 'IDEMPOTENCY_CONFLICT');
  const current = a1.status === 'fulfilled' ? a1.value.document.revision : '';
  const late = await mutate(engine, alice, ref, current, para('b'), b);
  assert.is(late.idempotency.idempotency, 'created');
  await engine.close();
});

test.run();
