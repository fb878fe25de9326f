import http from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { contentExtractor } from '../../../adapters/capture/index.ts';
import { startServer, type TestServer } from '../../../fixtures/http-kit.ts';
import { memoryUploadSpool } from '../../library/upload-spool.ts';

let n = 0;
const key = () => `capture-limits-key-${String(++n).padStart(6, '0')}`;
const encode = (s: string) => new TextEncoder().encode(s);
/**
 * Two hostile pages: 78 runs of 127 nested divs (110 KB; Readability needs 1.2-1.3 s of CPU for it on
 * a quiet machine here, seconds under load), read under a 300 ms limit: at least four times over it,
 * so the pages time out however fast the machine (a 1 s limit let a quiet machine read them in time).
 * (The report's 1,000 nested divs and 20,000 paragraphs are read in well under a second now.)
 */
const deep = (text: string) => encode(`<!doctype html><html><body>${`${'<div>'.repeat(127)}${text}${'</div>'.repeat(127)}`.repeat(78)}</body></html>`);
const HOSTILE = { nested: deep('deep text'), paragraphs: deep('other text') };

async function upload(s: TestServer, token: string, fileName: string, bytes: Uint8Array): Promise<string> {
  const call = (body: object) => s.req('/api/v1/library', { method: 'POST', token, body });
  const prepared = await call({ type: 'prepare-upload', fileName, contentType: 'text/html', byteLength: bytes.byteLength, idempotencyKey: key() });
  assert.is(prepared.status, 201, prepared.text);
  const put = await s.req(prepared.json.data.upload.path, { method: 'PUT', token, body: bytes });
  assert.is(put.status, 200, put.text);
  const finished = await call({ type: 'finish-upload', uploadId: prepared.json.data.upload.uploadId, idempotencyKey: key() });
  assert.is(finished.status, 201, finished.text);
  return finished.json.data.item.itemId;
}

test('hostile HTML uploads in flight never stall the server; past the time limit they end failed with a reason', async () => {
  const extractor = contentExtractor({ threads: 1, timeLimitMs: 300 });
  const s = await startServer({ engine: { extractor } });
  try {
    const { token } = await s.credential({ scopes: ['library:read', 'library:write'] });
    const ids = [await upload(s, token, 'nested.html', HOSTILE.nested), await upload(s, token, 'paragraphs.html', HOSTILE.paragraphs)];
    const state = async (itemId: string) => (await s.req('/api/v1/library', { method: 'POST', token, body: { type: 'get', itemId } })).json.data.item.capture;
    // Each page needs over a second of CPU; with one thread and a 300 ms limit the second cannot end
    // before the first's 300 ms, a fresh thread's start and its own 300 ms.
    const started = performance.now();
    const auth = await s.req('/api/v1/auth', { token });
    const authMs = performance.now() - started;
    assert.is(auth.status, 200);
    const during = await Promise.all(ids.map(state));
    assert.ok(
      during.some((c) => c.state === 'pending'),
      `GET /api/v1/auth answered (${authMs.toFixed(0)} ms) while a hostile capture was still running: ${JSON.stringify(during)}`,
    );
    assert.ok(authMs < 2000, `GET /api/v1/auth took ${authMs.toFixed(0)} ms`);
    await s.engine.library.idle();
    for (const itemId of ids) {
      const capture = await state(itemId);
      assert.is(capture.state, 'failed');
      assert.is(capture.reason.code, 'timeout');
      assert.match(capture.reason.message, /300 ms limit/);
    }
    assert.is(extractor.pool!.stats.timedOut, 2);
    // The pool goes on: an ordinary page is read by the fresh thread.
    const fine = await upload(s, token, 'fine.html', encode('<!doctype html><html><head><title>Fine</title></head><body><article><p>An ordinary page after the hostile ones.</p></article></body></html>'));
    await s.engine.library.idle();
    assert.is((await state(fine)).state, 'ready');
  } finally {
    await s.close();
    await extractor.close();
  }
});


test('a 20 MiB PUT reaches the upload spool in chunks as it arrives, never as one body', async () => {
  const inner = memoryUploadSpool();
  const appends: number[] = [];
  const spool = { ...inner, append: (id: string, chunk: Uint8Array) => (appends.push(chunk.byteLength), inner.append(id, chunk)) };
  const s = await startServer({ engine: { library: { uploadSpool: spool } } });
  try {
    const { token } = await s.credential({ scopes: ['library:read', 'library:write'] });
    const bytes = new Uint8Array(20 * 1024 * 1024).map((_, i) => i & 0xff);
    const prepared = await s.req('/api/v1/library', { method: 'POST', token, body: { type: 'prepare-upload', fileName: 'big.pdf', contentType: 'application/pdf', byteLength: bytes.byteLength, idempotencyKey: key() } });
    const put = await s.req(prepared.json.data.upload.path, { method: 'PUT', token, body: bytes });
    assert.is(put.status, 200, put.text);
    assert.is(put.json.data.receivedBytes, bytes.byteLength);
    assert.is(appends.reduce((a, b) => a + b, 0), bytes.byteLength);
    assert.ok(appends.length >= 20, `${appends.length} appends`);
    assert.ok(Math.max(...appends) <= 1024 * 1024, `largest append ${Math.max(...appends)} bytes`);
  } finally {
    await s.close();
  }
});

test('over HTTP: the unfinished-upload cap answers 409 CONFLICT in the error envelope; an oversized PUT answers 400 and keeps nothing', async () => {
  const spool = memoryUploadSpool();
  const s = await startServer({ engine: { library: { maxOpenUploads: 1, uploadSpool: spool } } });
  try {
    const { token } = await s.credential({ scopes: ['library:read', 'library:write'] });
    const prepare = (byteLength: number) => s.req('/api/v1/library', { method: 'POST', token, body: { type: 'prepare-upload', fileName: 'a.html', contentType: 'text/html', byteLength, idempotencyKey: key() } });
    const first = await prepare(100);
    assert.is(first.status, 201);
    const capped = await prepare(100);
    assert.is(capped.status, 409);
    assert.is(capped.json.error.code, 'CONFLICT');
    assert.is(capped.json.error.retryable, true);
    assert.equal(capped.json.error.fieldErrors.map((f: { field: string }) => f.field), ['type']);
    assert.match(capped.json.error.message, /1 unfinished uploads/);
    const tooMany = await s.req(first.json.data.upload.path, { method: 'PUT', token, body: new Uint8Array(150_000) });
    assert.is(tooMany.status, 400);
    assert.is(tooMany.json.error.code, 'INVALID_REQUEST');
    assert.equal(tooMany.json.error.fieldErrors.map((f: { field: string }) => f.field), ['body']);
    assert.equal(await spool.list(), []);
    // The server still answers on new connections, and the same upload takes a right-sized body.
    assert.is((await s.req(first.json.data.upload.path, { method: 'PUT', token, body: new Uint8Array(100) })).status, 200);
  } finally {
    await s.close();
  }
});

test('a client that leaves in the middle of a PUT leaves no bytes behind, and the upload takes a whole PUT afterwards', async () => {
  const inner = memoryUploadSpool();
  const appended: number[] = [];
  const removed: string[] = [];
  const spool = { ...inner, append: (id: string, c: Uint8Array) => (appended.push(c.byteLength), inner.append(id, c)), remove: (id: string) => (removed.push(id), inner.remove(id)) };
  const s = await startServer({ engine: { library: { uploadSpool: spool } } });
  try {
    const { token } = await s.credential({ scopes: ['library:read', 'library:write'] });
    const size = 1024 * 1024;
    const prepared = await s.req('/api/v1/library', { method: 'POST', token, body: { type: 'prepare-upload', fileName: 'a.pdf', contentType: 'application/pdf', byteLength: size, idempotencyKey: key() } });
    const path = prepared.json.data.upload.path;
    await new Promise<void>((resolve) => {
      const req = http.request(`${s.url}${path}`, { method: 'PUT', agent: false, headers: { authorization: `Bearer ${token}`, 'content-length': String(size) } });
      req.on('error', () => resolve());
      req.write(new Uint8Array(128 * 1024), () => setTimeout(() => req.destroy(), 50));
    });
    // The server notices the cut body and drops what arrived (within a generous bound).
    for (let i = 0; i < 200 && !removed.length; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(appended.length > 0, 'part of the body had arrived');
    assert.equal(removed, [prepared.json.data.upload.uploadId]);
    assert.equal(await spool.list(), [], 'the partial bytes are dropped');
    const put = await s.req(path, { method: 'PUT', token, body: new Uint8Array(size) });
    assert.is(put.status, 200, put.text);
    assert.is(put.json.data.receivedBytes, size);
    assert.equal(await spool.list(), [prepared.json.data.upload.uploadId]);
    assert.is((await spool.read(prepared.json.data.upload.uploadId))!.byteLength, size);
  } finally {
    await s.close();
  }
});

test.run();
