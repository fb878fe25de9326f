import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { alice, pageServerFor, bob, itemOf, key, libraryEngine, refusal, run } from '../../fixtures/pages/library-kit.ts';
import { pageBytes } from '../../fixtures/pages/server.ts';
import { manualClock } from '../clock.ts';
import type { Engine } from '../engine.ts';
import type { PendingUpload } from './uploads.ts';

const server = pageServerFor(test);

async function prepare(engine: Engine, fileName: string, contentType: string, byteLength: number): Promise<PendingUpload> {
  const r = await run(engine, alice, { type: 'prepare-upload', fileName, contentType, byteLength, idempotencyKey: key() });
  if (r.type !== 'prepare-upload') throw new Error('not an upload');
  return r.upload;
}

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

test('a PDF and a saved HTML page upload in two steps and are captured like links', async () => {
  const engine = libraryEngine(server());
  for (const [file, type, format, text] of [
    ['tide-pools.pdf', 'application/pdf', 'pdf', /Barnacles filter plankton/],
    ['saved-page.html', 'text/html', 'html', /Feed the starter the evening before baking/],
  ] as const) {
    const bytes = pageBytes(file);
    const upload = await prepare(engine, file, type, bytes.length);
    assert.equal(upload.byteLength, bytes.length);
    assert.not.ok('path' in upload, 'where the bytes go over HTTP is the edge\'s to say');
    const received = await engine.library.putUploadBytes(alice, upload.uploadId, bytes);
    assert.equal(received, { uploadId: upload.uploadId, receivedBytes: bytes.length, sha256: sha(bytes) });
    const finish = { type: 'finish-upload', uploadId: upload.uploadId, sha256: sha(bytes), idempotencyKey: key() };
    const item = await itemOf(engine, alice, finish);
    assert.equal([item.kind, item.origin, item.fileName, item.capture?.state], ['source', 'upload', file, 'pending']);
    const again = await itemOf(engine, alice, finish);
    assert.equal([again.itemId, again.created], [item.itemId, false]);
    await engine.library.idle();
    const captured = await itemOf(engine, alice, { type: 'get', itemId: item.itemId });
    assert.equal([captured.capture?.state, captured.capture?.format], ['ready', format]);
    const page = await run(engine, alice, { type: 'reader-page', sourceId: item.itemId });
    assert.match(page.type === 'reader-page' ? page.page.capture!.blocks.map((b) => b.text).join('\n') : '', text);
  }
  await engine.close();
});

test('EPUB is refused: when declared, and by its content when declared as PDF', async () => {
  const engine = libraryEngine(server());
  const epub = pageBytes('field-guide.epub');
  const declared = await refusal(run(engine, alice, { type: 'prepare-upload', fileName: 'guide.epub', contentType: 'application/epub+zip', byteLength: epub.length, idempotencyKey: key() }));
  assert.equal([declared.code, declared.fields], ['INVALID_REQUEST', ['contentType']]);
  assert.match(declared.message, /EPUB/);
  const upload = await prepare(engine, 'guide.pdf', 'application/pdf', epub.length);
  await engine.library.putUploadBytes(alice, upload.uploadId, epub);
  const byContent = await refusal(run(engine, alice, { type: 'finish-upload', uploadId: upload.uploadId, idempotencyKey: key() }));
  assert.equal([byContent.code, byContent.fields], ['INVALID_REQUEST', ['uploadId']]);
  assert.match(byContent.message, /EPUB/);
  const plain = await prepare(engine, 'notes.html', 'text/html', 11);
  await engine.library.putUploadBytes(alice, plain.uploadId, new TextEncoder().encode('just words.'));
  assert.match((await refusal(run(engine, alice, { type: 'finish-upload', uploadId: plain.uploadId, idempotencyKey: key() }))).message, /text\/plain/);
  const listed = await run(engine, alice, { type: 'list' });
  assert.equal(listed.type === 'list' && listed.items, []);
  await engine.close();
});

test('finish checks what arrived: missing bytes, short bytes, wrong checksum; PUT refuses extra bytes', async () => {
  const engine = libraryEngine(server());
  const pdf = pageBytes('tide-pools.pdf');
  const upload = await prepare(engine, 'a.pdf', 'application/pdf', pdf.length);
  const finish = (extra: object = {}) => run(engine, alice, { type: 'finish-upload', uploadId: upload.uploadId, idempotencyKey: key(), ...extra });
  assert.match((await refusal(finish())).message, /no bytes/);
  assert.equal((await refusal(engine.library.putUploadBytes(alice, upload.uploadId, new Uint8Array(pdf.length + 1)))).fields, ['body']);
  await engine.library.putUploadBytes(alice, upload.uploadId, pdf.subarray(0, 100));
  assert.match((await refusal(finish())).message, /received 100 bytes/);
  await engine.library.putUploadBytes(alice, upload.uploadId, pdf);
  assert.equal((await refusal(finish({ sha256: 'f'.repeat(64) }))).fields, ['sha256']);
  assert.is((await itemOf(engine, alice, { type: 'finish-upload', uploadId: upload.uploadId, idempotencyKey: key() })).origin, 'upload');
  assert.is((await refusal(engine.library.putUploadBytes(alice, upload.uploadId, pdf))).code, 'CONFLICT');
  await engine.library.idle();
  await engine.close();
});

test('uploads are private, bounded in size and expire', async () => {
  const clock = manualClock();
  const engine = libraryEngine(server(), { clock, library: { maxUploadBytes: 1000, uploadTtlMs: 60_000 } });
  const tooBig = await refusal(run(engine, alice, { type: 'prepare-upload', fileName: 'big.pdf', contentType: 'application/pdf', byteLength: 1001, idempotencyKey: key() }));
  assert.equal(tooBig.fields, ['byteLength']);
  assert.equal((await refusal(run(engine, alice, { type: 'prepare-upload', fileName: 'x.zip', contentType: 'application/zip', byteLength: 10, idempotencyKey: key() }))).fields, ['contentType']);
  const upload = await prepare(engine, 'small.pdf', 'application/pdf', 500);
  assert.is((await refusal(engine.library.putUploadBytes(bob, upload.uploadId, new Uint8Array(500)))).code, 'NOT_FOUND');
  assert.is((await refusal(run(engine, bob, { type: 'finish-upload', uploadId: upload.uploadId, idempotencyKey: key() }))).code, 'NOT_FOUND');
  await engine.library.putUploadBytes(alice, upload.uploadId, new Uint8Array(500));
  clock.advance(60_001);
  assert.match((await refusal(engine.library.putUploadBytes(alice, upload.uploadId, new Uint8Array(500)))).message, /expired/);
  assert.equal((await refusal(run(engine, alice, { type: 'finish-upload', uploadId: upload.uploadId, idempotencyKey: key() }))).fields, ['uploadId']);
  await engine.close();
});

test.run();
