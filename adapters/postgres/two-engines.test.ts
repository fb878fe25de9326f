/**
 * Two engines on two storages of one PostgreSQL database (two processes, in one test): a mutation
 * starts from its process's cached head without reading it, so what must hold when another process
 * moved the document meanwhile is tested here: a stale revision still answers 412, a current one
 * still applies (the commit's compare-and-set fails, the head is read, the mutation applied once
 * more), a replay on the other process finds the key, a reused key answers 409.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accountActor, errorOf, freshKey, mutate, newDocument } from '../../fixtures/engine-kit.ts';
import { createEngine } from '../../src/engine.ts';
import { seededIds } from '../../src/ids.ts';
import { storageHome, suiteStorages } from './postgres-kit.ts';

const home = await storageHome();
const { open } = suiteStorages(home, test);
const alice = accountActor('alice');
const para = (markdown: string) => ({ kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown }] });

async function twoEngines() {
  const [sa, sb] = [await open({ pollMs: 60_000 }), await open({ pollMs: 60_000 })];
  return { a: createEngine({ storage: sa, ids: seededIds(1) }), b: createEngine({ storage: sb, ids: seededIds(2) }), sa, sb };
}

test('a revision another process moved past answers 412 on a process whose cache is behind; the current one applies there', async () => {
  const { a, b } = await twoEngines();
  const { ref, revision } = await newDocument(a, alice);
  const v2 = (await mutate(a, alice, ref, revision, para('from a'))).document.revision; // a's cache at v2
  const v3 = (await mutate(b, alice, ref, v2, para('from b'))).document.revision; // b moved it to v3
  const stale = await errorOf(mutate(a, alice, ref, v2, para('stale on a')));
  assert.is(stale.code, 'PRECONDITION_FAILED', 'a started from its cached v2, the commit failed, the head said v3');
  const applied = await mutate(a, alice, ref, v3, para('current on a'));
  assert.is(applied.receipt.resultingVersion, 4);
  const read = await b.documents.read(alice, ref, 'markdown');
  for (const text of ['from a', 'from b', 'current on a']) assert.ok(JSON.stringify(read).includes(text), text);
  assert.ok(!JSON.stringify(read).includes('stale on a'), 'the refused mutation left nothing');
  await a.close();
  await b.close();
});

test('a write replayed on the other process is found by its key; a key reused for another write is 409; a cached newer version answers 412 at once', async () => {
  const { a, b, sa } = await twoEngines();
  const { ref, revision } = await newDocument(a, alice);
  const key = freshKey();
  const first = await mutate(a, alice, ref, revision, para('once'), key);
  await mutate(b, alice, ref, first.document.revision, para('b moves on')); // b's cache is at v3
  const replay = await mutate(b, alice, ref, revision, para('once'), key);
  assert.is(replay.idempotency.idempotency, 'replayed');
  assert.equal(replay.receipt.operationRef, first.receipt.operationRef);
  const reused = await errorOf(mutate(b, alice, ref, (await b.documents.head(alice, ref)).revision, para('other body'), key));
  assert.is(reused.code, 'IDEMPOTENCY_CONFLICT');
  const commits = sa.stats().commits;
  assert.is((await errorOf(mutate(a, alice, ref, revision, para('old revision')))).code, 'PRECONDITION_FAILED');
  assert.is(sa.stats().commits, commits, 'nothing committed');
  await a.close();
  await b.close();
});

test("another process's append reaches a process holding the document with its notification: the next edit there reads nothing from the store", async () => {
  const [sa, sb] = [await open({ pollMs: 60_000 }), await open({ pollMs: 60_000 })];
  let reads = 0;
  const counted = sa as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ['getDocumentHead', 'loadDocument', 'loadUpdates']) {
    const original = counted[name]!.bind(sa);
    counted[name] = (...args: unknown[]) => {
      reads++;
      return original(...args);
    };
  }
  const a = createEngine({ storage: sa, ids: seededIds(1) });
  const b = createEngine({ storage: sb, ids: seededIds(2) });
  const { ref, revision } = await newDocument(a, alice);
  const v2 = (await mutate(a, alice, ref, revision, para('from a'))).document.revision; // a holds v2
  let v3: string | undefined;
  for (let i = 0; i < 3; i++) {
    // b moves the document on; a takes each append from the notification (the listener below is
    // called after the engine's, in the order they subscribed).
    const told = new Promise<void>((resolve) => {
      const off = sa.subscribeAppends!((h) => {
        if (h.version === 3 + i) {
          off();
          resolve();
        }
      });
    });
    v3 = (await mutate(b, alice, ref, v3 ?? v2, para(`from b ${i}`))).document.revision;
    await told;
  }
  reads = 0;
  const commits = sa.stats().commits;
  assert.is((await errorOf(mutate(a, alice, ref, v2, para('stale on a')))).code, 'PRECONDITION_FAILED', 'a knows v5 already: 412');
  assert.is(sa.stats().commits, commits, 'the stale write was refused without a commit');
  const applied = await mutate(a, alice, ref, v3!, para('on a after b'));
  assert.is(applied.receipt.resultingVersion, 6);
  assert.is(reads, 0, 'neither the head nor the log was read');
  const text = JSON.stringify(await b.documents.read(alice, ref, 'markdown'));
  for (const t of ['from a', 'from b 0', 'from b 1', 'from b 2', 'on a after b']) assert.ok(text.includes(t), t);
  assert.ok(!text.includes('stale on a'));
  assert.equal(await a.documents.read(alice, ref, 'markdown'), await b.documents.read(alice, ref, 'markdown'), 'both processes read the same version');
  await a.close();
  await b.close();
});

test.run();
