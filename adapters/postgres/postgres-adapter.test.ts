/**
 * What the PostgreSQL adapter adds to the conformance suite: keys and topics with U+0000, change
 * notification between two storages (two processes' worth: two pools, two LISTEN connections),
 * resync after the LISTEN connection is killed, and migrations racing at start. The server-only
 * tests are skipped (printed) on PGlite.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { recordTopic, streamTopic } from '../../src/ports.ts';
import { eventually } from '../conformance/fixtures.ts';
import { adminQuery, freshDatabase, storageHome, suiteStorages } from './postgres-kit.ts';
import { postgresStorage } from './postgres-storage.ts';
import { MIGRATIONS } from './schema.ts';
import { escapeText, unescapeText } from './text-codec.ts';

const home = await storageHome();
const onServer = home.kind === 'server';
const skip = (what: string) => console.log(`  (skipped on PGlite: ${what}; ${home.reason})`);
const kit = suiteStorages(home, test);
const open = (pollMs?: number) => kit.open(pollMs === undefined ? {} : { pollMs });

test('the text escape keeps order and prefixes, and round-trips', () => {
  const words = ['', '\u0000', '\u0000\u0000', '\u0000a', '\u0001', '\u0001\u0000', '\u0002', 'a', 'a\u0000', 'a\u0000b', 'a\u0001', 'ab', '\u{1F600}'];
  const sorted = [...words].sort();
  assert.equal(sorted.map(escapeText).sort().map(unescapeText), sorted);
  for (const w of words) {
    assert.is(unescapeText(escapeText(w)), w);
    assert.not.ok(escapeText(w).includes('\u0000'));
  }
  assert.ok(escapeText('a\u0000b').startsWith(escapeText('a\u0000')));
});

test('keys, collections and streams with U+0000 are stored, listed in code-unit order and found by prefix', async () => {
  const s = await open();
  const keys = ['acct\u0000k2', 'acct\u0000k1', 'acct\u0001x', 'acct', 'acct\u0000'];
  await s.commit(keys.map((key, i) => ({ kind: 'record.put' as const, collection: 'idem\u0000c', key, value: i, index: { partition: 'p\u0000', sortKey: '1' } })));
  assert.equal((await s.listRecords('idem\u0000c')).map((r) => r.key), ['acct', 'acct\u0000', 'acct\u0000k1', 'acct\u0000k2', 'acct\u0001x']);
  assert.equal((await s.listRecords('idem\u0000c', 'acct\u0000')).map((r) => r.key), ['acct\u0000', 'acct\u0000k1', 'acct\u0000k2']);
  assert.equal((await s.getRecord('idem\u0000c', 'acct\u0000k1'))?.value, 1);
  const page = await s.listPage('idem\u0000c', 'p\u0000', 2);
  assert.equal(page.records.map((r) => r.key), ['acct\u0001x', 'acct\u0000k2']);
  assert.equal((await s.listPage('idem\u0000c', 'p\u0000', 10, page.next)).records.map((r) => r.key), ['acct\u0000k1', 'acct\u0000', 'acct']);
  await s.commit([{ kind: 'stream.append', stream: 'job\u0000events', seq: 1, value: { s: 'a\u0000b' } }]);
  assert.equal(await s.readStream('job\u0000events', 0, 10), [{ seq: 1, value: { s: 'a\u0000b' } }]);
});

test('a commit in one storage calls the listeners of another, once, with topics holding U+0000 or over 7000 bytes', async () => {
  if (!onServer) return skip('two storages on one PGlite share its notifications anyway');
  const a = await open();
  const b = await open();
  const long = 'k'.repeat(9_000);
  const calls = { nul: 0, long: 0, stream: 0 };
  a.subscribe(recordTopic('c', 'acct\u0000key'), () => calls.nul++);
  a.subscribe(recordTopic('c', long), () => calls.long++);
  a.subscribe(streamTopic('s\u0000t'), () => calls.stream++);
  await b.commit([
    { kind: 'record.put', collection: 'c', key: 'acct\u0000key', value: 1 },
    { kind: 'record.put', collection: 'c', key: long, value: 1 },
    { kind: 'stream.append', stream: 's\u0000t', seq: 1, value: 1 },
  ]);
  await eventually(() => calls.nul === 1 && calls.long === 1 && calls.stream === 1, 'each listener of A called');
  await b.commit([{ kind: 'record.put', collection: 'c', key: 'acct\u0000other', value: 1 }]);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(calls, { nul: 1, long: 1, stream: 1 });
});

test('after its LISTEN connection is killed, a storage reconnects and calls every listener, then hears commits again', async () => {
  if (!onServer) return skip('PGlite has no connections to kill');
  const a = await open();
  const b = await open();
  let calls = 0;
  a.subscribe(recordTopic('c', 'k'), () => calls++);
  const dbName = new URL(home.url!).pathname.slice(1);
  await adminQuery("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'", [dbName]);
  await eventually(() => a.stats().resyncs >= 1 && b.stats().resyncs >= 1, 'both storages resynced');
  await eventually(() => calls >= 1, 'the listener was called by the resync');
  const before = calls;
  await b.commit([{ kind: 'record.put', collection: 'c', key: 'k', value: 1 }]);
  await eventually(() => calls === before + 1, 'a later commit of B reaches A');
});

test('six storages opening at once on a fresh database: the schema is made once, without error', async () => {
  if (!onServer) return skip('one PGlite has one connection');
  const fresh = await freshDatabase();
  try {
    const storages = await Promise.all(Array.from({ length: 6 }, () => postgresStorage({ url: fresh.url })));
    const all = MIGRATIONS.map((m) => m.version).join(',');
    assert.equal(storages.map((s) => s.migrated.join(',')).sort(), ['', '', '', '', '', all], 'one storage applied every migration, the others none');
    await storages[0]!.commit([{ kind: 'record.put', collection: 'c', key: 'k', value: 1 }]);
    assert.is((await storages[5]!.getRecord('c', 'k'))?.revision, 1);
    await Promise.all(storages.map((s) => s.close()));
  } finally {
    await fresh.drop();
  }
});

test.run();
