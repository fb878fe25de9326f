/**
 * The PostgreSQL upload spool runs the upload spool conformance list (a fresh database of the
 * server at 127.0.0.1:5432 when one answers, else PGlite), and two storages on one database share
 * their uploads.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { uploadSpoolConformance } from '../conformance/upload-spool.ts';
import { MIGRATIONS, postgresUploadSpool } from './index.ts';
import { storageHome } from './postgres-kit.ts';
import type { PostgresStorage } from './postgres-storage.ts';

const home = await storageHome();
if (home.reason) console.log(`  postgres upload spool on PGlite: ${home.reason}`);

uploadSpoolConformance(`postgres (${home.kind})`, async () => {
  await home.empty();
  const storage = await home.open();
  return { spool: postgresUploadSpool(storage), teardown: () => storage.close() };
});

const test = suite('postgres upload spool');
const opened: PostgresStorage[] = [];
const open = async () => {
  const s = await home.open();
  opened.push(s);
  return s;
};
test.after.each(async () => {
  for (const s of opened.splice(0)) await s.close().catch(() => {});
});

test('the spool tables come from a versioned migration', async () => {
  await home.empty();
  const storage = await open();
  const { rows } = await storage.sql.query<{ version: number; name: string }>('SELECT version, name FROM kw_schema_migrations ORDER BY version');
  assert.equal(rows.map((r) => Number(r.version)), MIGRATIONS.map((m) => m.version));
  assert.ok(MIGRATIONS.some((m) => m.statements.some((s) => s.includes('CREATE TABLE kw_upload_chunks'))));
});

test('a database at schema version 1 gets the spool tables from migration 2 at the next open', async () => {
  await home.empty();
  const first = await open();
  await first.sql.query('DROP TABLE kw_upload_chunks');
  await first.sql.query('DROP TABLE kw_uploads');
  await first.sql.query('DELETE FROM kw_schema_migrations WHERE version = 2');
  await first.close();
  const upgraded = await open();
  assert.equal(upgraded.migrated, [2]);
  const spool = postgresUploadSpool(upgraded);
  await spool.append('lupl_000000000000000000000001', new Uint8Array([1, 2]));
  assert.equal(await spool.read('lupl_000000000000000000000001'), new Uint8Array([1, 2]));
});

test('two storages on one database see each other\'s uploads: create and append on one, read, list and remove on the other', async () => {
  await home.empty();
  const a = postgresUploadSpool(await open());
  const b = postgresUploadSpool(await open());
  const id = 'lupl_0123456789abcdef01234567';
  await a.create(id);
  await a.append(id, new TextEncoder().encode('first '));
  await b.append(id, new TextEncoder().encode('second'));
  assert.equal(new TextDecoder().decode((await b.read(id))!), 'first second');
  assert.equal(new TextDecoder().decode((await a.read(id, 5))!), 'first');
  assert.equal(await b.list(), [id]);
  await b.remove(id);
  assert.is(await a.read(id), null);
  assert.equal(await a.list(), []);
});

test('an append is one chunk row: the upload is never rewritten', async () => {
  await home.empty();
  const storage = await open();
  const spool = postgresUploadSpool(storage);
  const id = 'lupl_fedcba9876543210fedcba98';
  await spool.create(id);
  for (const part of ['a', 'bc', 'def']) await spool.append(id, new TextEncoder().encode(part));
  const { rows } = await storage.sql.query<{ seq: number; n: number }>('SELECT seq, length(bytes) AS n FROM kw_upload_chunks WHERE upload_id = $1 ORDER BY seq', [id]);
  assert.equal(rows.map((r) => [Number(r.seq), Number(r.n)]), [[1, 1], [2, 2], [3, 3]]);
});

test('ids with U+0000 round-trip (escaped like every key of the adapter)', async () => {
  await home.empty();
  const spool = postgresUploadSpool(await open());
  const id = 'odd\u0000id\u0001';
  await spool.append(id, new Uint8Array([7]));
  assert.equal(await spool.list(), [id]);
  assert.equal(await spool.read(id), new Uint8Array([7]));
});

test('a closed storage\'s spool rejects', async () => {
  await home.empty();
  const storage = await open();
  const spool = postgresUploadSpool(storage);
  await storage.close();
  try {
    await spool.list();
    assert.unreachable('list after close must reject');
  } catch (error) {
    assert.match((error as Error).message, /closed/);
  }
});

test('cleanup: drop the test database', async () => {
  for (const s of opened.splice(0)) await s.close().catch(() => {});
  await home.dispose();
});

test.run();
