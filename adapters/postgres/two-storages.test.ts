/**
 * Two storages on one database (two processes' worth: two pools, two LISTEN connections)
 * committing at once: on different documents no commit conflicts (one attempt each), on one
 * document the appends stay linear and gap-free, and a conflict does not cost a pooled connection
 * (`pg`'s `pool.query` ended the connection after any error, so every conflict started a new
 * backend: 2,229 → 204 commits/s in bench/postgres.md). No timed assertions: attempts, conflicts
 * and connections are counted. On PGlite the two storages share one connection (printed).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isStorageConflict, StorageConflictError, type BatchOp } from '../../src/ports.ts';
import { ALL_BYTES, append, bytes, create, eventually, head, put } from '../conformance/fixtures.ts';
import { documentTopic, type DocumentHead } from '../../src/ports.ts';
import { storageHome, suiteStorages } from './postgres-kit.ts';
import { openPostgresStorage, postgresStorage, type PostgresStorage } from './postgres-storage.ts';
import { pgDriver } from './driver.ts';

const home = await storageHome();
const onServer = home.kind === 'server';
if (!onServer) console.log(`  (two-storages on PGlite: one connection, so no races and no pool; ${home.reason})`);
const { open, track } = suiteStorages(home, test);

const WRITERS = 8;
const EDITS = 25;

/** An edit-shaped batch: the append of `version` and the claim of an idempotency-like record. */
const edit = (ref: string, version: number, key: string, update: Uint8Array): BatchOp[] => [append(ref, version, {}, update), put('idempotency', key, { version }, null)];

/** The versions and updates logged after version 1 of `ref`, as read through `s`. */
async function logOf(s: PostgresStorage, ref: string): Promise<{ versions: number[]; updates: string[] }> {
  const updates = (await s.loadUpdates(ref, 1))!;
  return { versions: updates.map((u) => u.version), updates: updates.map((u) => new TextDecoder().decode(u.update)) };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

for (const how of ['each document on one storage, its version remembered', 'each edit on the other storage, the head read first (as the engine does)'] as const) {
  test(`two storages on different documents, ${how}: ${WRITERS} × ${EDITS} commits, one attempt each`, async () => {
    const storages = [await open(), await open()];
    const refs = range(0, WRITERS - 1).map((w) => `doc_${w}`);
    for (const ref of refs) await storages[0]!.commit([create(ref)]);
    const pinned = how.startsWith('each document');
    let attempts = 0;
    await Promise.all(
      refs.map(async (ref, w) => {
        let version = 1;
        for (let e = 0; e < EDITS; e++) {
          const s = storages[pinned ? w % 2 : (w + e) % 2]!;
          if (!pinned) version = (await s.getDocumentHead(ref))!.version;
          attempts++;
          await s.commit(edit(ref, version + 1, `w${w}-e${e}`, bytes(`w${w}-e${e}`)));
          version++;
        }
      }),
    );
    assert.is(attempts, WRITERS * EDITS, 'every commit succeeded at its first attempt');
    assert.equal(storages.map((s) => s.stats().conflicts), [0, 0], 'no conflict in either storage');
    assert.equal(storages.map((s) => s.stats().retries), [0, 0], 'no serialization failure or deadlock retried');
    assert.is(storages[0]!.stats().commits + storages[1]!.stats().commits, WRITERS + WRITERS * EDITS);
    for (const [w, ref] of refs.entries()) {
      assert.is((await storages[1]!.getDocumentHead(ref))!.version, EDITS + 1);
      assert.equal(await logOf(storages[0]!, ref), { versions: range(2, EDITS + 1), updates: range(0, EDITS - 1).map((e) => `w${w}-e${e}`) });
    }
  });
}

test(`two storages racing on one document: ${WRITERS} × ${EDITS} appends, versions gap-free, each acknowledged append logged once`, async () => {
  const storages = [await open(), await open()];
  await storages[0]!.commit([create('hot')]);
  let attempts = 0;
  let conflicts = 0;
  const acknowledged: { version: number; update: string }[] = [];
  await Promise.all(
    range(0, WRITERS - 1).map(async (w) => {
      const s = storages[w % 2]!;
      for (let e = 0; e < EDITS; e++) {
        for (let a = 0; ; a++) {
          attempts++;
          const version = (await s.getDocumentHead('hot'))!.version + 1;
          const update = `w${w}-e${e}-a${a}`;
          try {
            await s.commit(edit('hot', version, update, bytes(update)));
            acknowledged.push({ version, update });
            break;
          } catch (error) {
            if (!isStorageConflict(error)) throw error;
            conflicts++;
          }
        }
      }
    }),
  );
  const total = WRITERS * EDITS;
  assert.is(attempts - conflicts, total);
  assert.is(storages[0]!.stats().conflicts + storages[1]!.stats().conflicts, conflicts, 'the storages counted every conflict');
  assert.is((await storages[1]!.getDocumentHead('hot'))!.version, total + 1);
  const log = await logOf(storages[0]!, 'hot');
  assert.equal(log.versions, range(2, total + 1), 'versions 2..N, no gap, no duplicate');
  acknowledged.sort((x, y) => x.version - y.version);
  assert.equal(acknowledged.map((a) => a.version), log.versions, 'one acknowledged append per version');
  assert.equal(acknowledged.map((a) => a.update), log.updates, 'each version holds the append acknowledged for it');
  if (onServer) assert.ok(storages.every((s) => s.stats().connectionsOpened <= 10), `conflicts cost no connection: ${storages.map((s) => s.stats().connectionsOpened).join(', ')} opened`);
});

test('a refused statement keeps its pooled connection: 60 conflicts on a pool of 2, one connection each way', async () => {
  if (!onServer) return console.log('  (skipped on PGlite: no pool)');
  const s = track(await postgresStorage({ url: home.url!, pool: { max: 2 } }));
  await s.commit([create('doc'), put('idempotency', 'taken', 1, null)]);
  await s.commit([append('doc', 2)]);
  const refused: BatchOp[][] = [
    [append('doc', 2)], // stale version, one statement
    [put('idempotency', 'taken', 2, null)], // a claim of a taken key
    [append('doc', 2), append('doc', 3)], // two ops on one document: op by op in a transaction, rolled back
  ];
  for (let i = 0; i < 60; i++) {
    const error = await s.commit(refused[i % refused.length]!).then(() => null, (e: unknown) => e);
    assert.instance(error, StorageConflictError);
  }
  await s.commit([append('doc', 3)]);
  assert.is(s.stats().conflicts, 60);
  assert.ok(s.stats().connectionsOpened <= 2, `${s.stats().connectionsOpened} connections opened`);
});

test('a connection left inside a transaction is not given back to the pool', async () => {
  if (!onServer) return console.log('  (skipped on PGlite: no pool)');
  const s = track(await postgresStorage({ url: home.url!, pool: { max: 1 } }));
  await s.sql.query('BEGIN');
  const { rows } = await s.sql.query<{ open: boolean }>('SELECT txid_current_if_assigned() IS NOT NULL OR now() <> statement_timestamp() AS open');
  assert.is(rows[0]!.open, false, 'the next statement runs in a transaction of its own');
  assert.is(s.stats().connectionsOpened, 2);
});

test('exclusive holds a transaction-scoped lock: another storage waits meanwhile, and no session lock outlives it (poolers in transaction mode)', async () => {
  if (!onServer) return console.log('  (skipped on PGlite: one connection)');
  const s = track(await postgresStorage({ url: home.url!, pool: { max: 2 } }));
  const other = track(await postgresStorage({ url: home.url! }));
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = s.exclusive('seed', async () => {
    await held;
    return 'first';
  });
  await new Promise((r) => setTimeout(r, 200));
  const order: string[] = [];
  const second = other.exclusive('seed', async () => {
    order.push('second');
    return 'second';
  });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(order, [], 'the second waits while the first holds the lock');
  release();
  assert.is(await first, 'first', "the section's answer stands");
  assert.is(await second, 'second');
  const failed = await s.exclusive('seed', async () => Promise.reject(new Error('seed failed'))).then(() => null, (e: unknown) => e);
  assert.match(String(failed), /seed failed/, "the section's error reaches the caller");
  assert.is(await other.exclusive('seed', async () => 'again'), 'again', 'a failed section released the lock');
  const { rows } = await s.sql.query<{ n: string }>("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())");
  assert.is(Number(rows[0]!.n), 0, 'no advisory lock stays held by an idle connection');
});

test("an append is told to the other storage's subscribeAppends with its head and update; one too large for a notification only to the document's topic", async () => {
  const [a, b] = [await open(), await open()];
  const told: { head: DocumentHead; update: Uint8Array }[] = [];
  let topicCalls = 0;
  const offAppends = b.subscribeAppends!((h, update) => told.push({ head: h, update }));
  b.subscribe(documentTopic('doc_told'), () => topicCalls++);
  const ownTold: number[] = [];
  a.subscribeAppends!((h) => ownTold.push(h.version));
  await a.commit([create('doc_told')]);
  const title = 'Ein Titel mit \u00fc und \u0000 und "Anführungszeichen"';
  await a.commit([append('doc_told', 2, { title, updatedAt: 1_700_000_000_123, contentSha256: 'ab'.repeat(32), blockCount: 7 }, ALL_BYTES.subarray(0, 600)), put('idempotency', 'k1', { v: 1 }, null)]);
  await eventually(() => told.length === 1 && topicCalls >= 2, 'the append reaches the other storage');
  assert.equal(told[0]!.head, head('doc_told', 2, { title, updatedAt: 1_700_000_000_123, contentSha256: 'ab'.repeat(32), blockCount: 7 }), 'the head as committed, every field');
  assert.equal([...told[0]!.update], [...ALL_BYTES.subarray(0, 600)], 'the update byte for byte');
  await a.commit([append('doc_told', 3, {}, ALL_BYTES.subarray(0, 9_000))]);
  await eventually(() => topicCalls >= 3, 'the large append reaches the topic listener');
  assert.is(told.length, 1, 'a 9,000-byte update does not travel in a notification');
  offAppends();
  await a.commit([append('doc_told', 4)]);
  await eventually(() => topicCalls >= 4, 'the next append is told');
  assert.is(told.length, 1, 'a removed listener is not called');
  assert.equal(ownTold, [], "a storage's own commits are not told to its own listeners");
});

test('budget takes and commit notifications that wait while a side statement is on its way share the next one; the counts stay exact', async () => {
  if (!onServer) return;
  const statements: string[] = [];
  const driver = pgDriver({ connectionString: home.url! });
  const counted = { ...driver, query: ((text: string, params?: unknown[]) => (statements.push(text), driver.query(text, params))) as typeof driver.query };
  const s = track(await openPostgresStorage(counted));
  for (const ref of ['doc_side', 'doc_side_2', 'doc_side_3', 'doc_side_4']) await s.commit([create(ref)]);
  await new Promise((resolve) => setTimeout(resolve, 50)); // their notifications are out
  statements.length = 0;
  const first = s.takeCount!('budgets', 'cred_0', 0, 5); // goes at once, alone
  // Meanwhile: 8 takes of one counter (limit 5), 4 of another, and 3 commits whose notifications wait.
  const takes = [...Array.from({ length: 8 }, () => s.takeCount!('budgets', 'cred_1', 0, 5)), ...Array.from({ length: 4 }, () => s.takeCount!('budgets', 'cred_2', 0, 10))];
  await Promise.all([2, 3, 4].map((v) => s.commit([append(`doc_side_${v}`, 2)])));
  await s.commit([append('doc_side', 2)]);
  const answers = await Promise.all([first, ...takes]);
  assert.equal(answers.map((a) => [a.taken, a.used]), [[true, 1], [true, 1], [true, 2], [true, 3], [true, 4], [true, 5], [false, 5], [false, 5], [false, 5], [true, 1], [true, 2], [true, 3], [true, 4]], 'arrival order decides, exactly as one by one');
  await new Promise((resolve) => setTimeout(resolve, 50)); // the last notifications are out
  const side = statements.filter((t) => t.includes('kw_take_count') || t.includes('pg_notify'));
  assert.ok(side.filter((t) => t.includes('kw_take_count')).length <= 2, `13 takes of 3 counters went in at most 2 statements (the first alone, the rest together): ${side.length} side statements`);
  assert.ok(side.length <= 2 + 4, `13 takes and 4 commits' notifications: ${side.length} side statements (the takes' 2, at most one per commit for the notifications)`);
  assert.is(side.filter((t) => t.includes('pg_notify')).length >= 1, true, 'the commits were notified');
});

test.run();
