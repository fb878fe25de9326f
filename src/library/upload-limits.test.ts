import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fileUploadSpool, lowdbStorage } from '../../adapters/lowdb/index.ts';
import { alice, bob, itemOf, key, libraryEngine, pageServerFor, refusal, run } from '../../fixtures/pages/library-kit.ts';
import { pageBytes } from '../../fixtures/pages/server.ts';
import { manualClock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { Engine } from '../engine.ts';
import { memoryUploadSpool } from './upload-spool.ts';

const server = pageServerFor(test);
const MiB = 1024 * 1024;

async function prepare(engine: Engine, actor: Actor, byteLength: number, fileName = 'page.html'): Promise<string> {
  const r = await run(engine, actor, { type: 'prepare-upload', fileName, contentType: 'text/html', byteLength, idempotencyKey: key() });
  if (r.type !== 'prepare-upload') throw new Error('not an upload');
  return r.upload.uploadId;
}

test('unfinished uploads are capped per credential by count and by declared bytes: 409 CONFLICT; other credentials have their own caps', async () => {
  const engine = libraryEngine(server(), { library: { maxOpenUploads: 3, maxOpenUploadBytes: 10 * MiB } });
  const alice2: Actor = { ...alice, credentialRef: 'scred_0000000000000000000000a2' };
  await prepare(engine, alice, 4 * MiB);
  await prepare(engine, alice, 4 * MiB);
  const bytes = await refusal(run(engine, alice, { type: 'prepare-upload', fileName: 'c.html', contentType: 'text/html', byteLength: 3 * MiB, idempotencyKey: key() }));
  assert.equal([bytes.code, bytes.fields], ['CONFLICT', ['byteLength']]);
  assert.match(bytes.message, /already declare 8 MiB; 3 MiB more would pass the 10 MiB/);
  await prepare(engine, alice, 1 * MiB);
  const count = await refusal(run(engine, alice, { type: 'prepare-upload', fileName: 'd.html', contentType: 'text/html', byteLength: 10, idempotencyKey: key() }));
  assert.equal([count.code, count.fields], ['CONFLICT', ['type']]);
  assert.match(count.message, /already has 3 unfinished uploads/);
  assert.match(count.message, /expires at 20\d\d-/);
  // Another credential of the same account, and another account, have their own caps.
  await prepare(engine, alice2, 4 * MiB);
  await prepare(engine, bob, 4 * MiB);
  await engine.close();
});

test('a finished upload frees its place under the caps, and its bytes leave the spool once captured', async () => {
  const spool = memoryUploadSpool();
  const engine = libraryEngine(server(), { library: { maxOpenUploads: 1, uploadSpool: spool } });
  const page = pageBytes('saved-page.html');
  const uploadId = await prepare(engine, alice, page.length);
  assert.is((await refusal(run(engine, alice, { type: 'prepare-upload', fileName: 'x.html', contentType: 'text/html', byteLength: 10, idempotencyKey: key() }))).code, 'CONFLICT');
  await engine.library.putUploadBytes(alice, uploadId, page);
  assert.equal(await spool.list(), [uploadId]);
  const item = await itemOf(engine, alice, { type: 'finish-upload', uploadId, idempotencyKey: key() });
  await prepare(engine, alice, 10);
  await engine.library.idle();
  assert.is((await itemOf(engine, alice, { type: 'get', itemId: item.itemId })).capture?.state, 'ready');
  assert.equal(await spool.list(), [], 'the captured bytes are gone from the spool');
  await engine.close();
});

test('an upload left unfinished expires: the sweep drops its bytes, a PUT or a finish then answers 409, and its place is free', async () => {
  const clock = manualClock();
  const spool = memoryUploadSpool();
  const engine = libraryEngine(server(), { clock, library: { uploadTtlMs: 60_000, maxOpenUploads: 1, uploadSpool: spool } });
  const uploadId = await prepare(engine, alice, 500);
  await engine.library.putUploadBytes(alice, uploadId, new Uint8Array(500));
  assert.equal((await engine.library.sweepUploads()).expired, 0);
  assert.equal(await spool.list(), [uploadId]);
  clock.advance(60_001);
  assert.equal(await engine.library.sweepUploads(), { expired: 1, released: 0, orphans: 0 });
  assert.equal(await spool.list(), []);
  const put = await refusal(engine.library.putUploadBytes(alice, uploadId, new Uint8Array(500)));
  assert.equal([put.code, /expired/.test(put.message)], ['CONFLICT', true]);
  const finish = await refusal(run(engine, alice, { type: 'finish-upload', uploadId, idempotencyKey: key() }));
  assert.equal([finish.code, finish.fields], ['CONFLICT', ['uploadId']]);
  await prepare(engine, alice, 500);
  await engine.close();
});

test('a restart sweeps what an earlier process left: expired uploads and spool files no upload claims', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-spool-'));
  const clock = manualClock();
  const spoolDir = join(dir, 'uploads');
  try {
    const first = libraryEngine(server(), { clock, library: { uploadTtlMs: 60_000, uploadSpool: fileUploadSpool({ dir: spoolDir }) } }, await lowdbStorage({ dir }));
    const stale = await prepare(first, alice, 500);
    await first.library.putUploadBytes(alice, stale, new Uint8Array(500));
    clock.advance(30_000);
    const fresh = await prepare(first, alice, 500);
    await first.library.putUploadBytes(alice, fresh, new Uint8Array(500));
    await first.close();
    // A file left by a crash between a commit and a spool removal: no upload claims it.
    await writeFile(join(spoolDir, 'lupl_0123456789abcdef01234567.part'), 'orphan');
    clock.advance(30_001);
    const spool = fileUploadSpool({ dir: spoolDir });
    const second = libraryEngine(server(), { clock, library: { uploadTtlMs: 60_000, uploadSpool: spool } }, await lowdbStorage({ dir }));
    // The start sweep runs before any upload write; a second sweep finds nothing more to do.
    assert.equal(await second.library.sweepUploads(), { expired: 0, released: 0, orphans: 0 });
    assert.equal(await spool.list(), [fresh]);
    assert.match((await refusal(second.library.putUploadBytes(alice, stale, new Uint8Array(500)))).message, /expired/);
    assert.equal((await second.library.putUploadBytes(alice, fresh, new Uint8Array(500))).receivedBytes, 500);
    await second.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a PUT goes to the spool chunk by chunk; more bytes than declared drop what was sent; one PUT per upload at a time', async () => {
  const appends: number[] = [];
  const inner = memoryUploadSpool();
  let gate: (() => void) | null = null;
  const spool = {
    ...inner,
    async append(id: string, chunk: Uint8Array) {
      appends.push(chunk.byteLength);
      if (gate === null && appends.length === 1) await new Promise<void>((r) => (gate = r));
      return inner.append(id, chunk);
    },
  };
  const engine = libraryEngine(server(), { library: { uploadSpool: spool } });
  const uploadId = await prepare(engine, alice, 3 * MiB);
  async function* body(n: number) {
    for (let i = 0; i < n; i++) yield new Uint8Array(MiB).fill(i);
  }
  const sending = engine.library.putUploadBytes(alice, uploadId, body(3));
  while (gate === null) await new Promise((r) => setTimeout(r, 1));
  const concurrent = await refusal(engine.library.putUploadBytes(alice, uploadId, body(1)));
  assert.equal([concurrent.code, /another request/.test(concurrent.message)], ['CONFLICT', true]);
  (gate as unknown as () => void)();
  assert.is((await sending).receivedBytes, 3 * MiB);
  assert.equal(appends, [MiB, MiB, MiB]);
  const tooMany = await refusal(engine.library.putUploadBytes(alice, uploadId, body(4)));
  assert.equal([tooMany.code, tooMany.fields], ['INVALID_REQUEST', ['body']]);
  assert.equal(await inner.list(), [], 'the bytes of the refused PUT are dropped');
  assert.match((await refusal(run(engine, alice, { type: 'finish-upload', uploadId, idempotencyKey: key() }))).message, /no bytes/);
  await engine.close();
});

test.run();
