import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { contentExtractor, nodeFetcher } from '../../../adapters/capture/index.ts';
import { startServer } from '../../../fixtures/http-kit.ts';
import { pageBytes, startPageServer } from '../../../fixtures/pages/server.ts';

let n = 0;
const key = () => `library-http-key-${String(++n).padStart(6, '0')}`;

test('the library over HTTP: scopes per command, 201 then 200 on a retry, capture state, reader page, highlights, reading state, uploads', async () => {
  const pages = await startPageServer();
  const s = await startServer({ engine: { fetcher: nodeFetcher({ testAllowOrigins: [pages.origin] }), extractor: contentExtractor() } });
  try {
    const writer = (await s.credential({ scopes: ['library:read', 'library:write'], requestBudget: 200 })).token;
    const reader = (await s.credential({ scopes: ['library:read'] })).token;
    const call = (body: object, token = writer) => s.req('/api/v1/library', { method: 'POST', token, body });

    const unknown = await call({ type: 'tag', idempotencyKey: key() });
    assert.is(unknown.status, 400);
    assert.is((await call({ type: 'save-link', url: `${pages.origin}/article-1.html`, idempotencyKey: key() }, reader)).status, 403);
    const extra = await call({ type: 'list', colour: 'red' }, reader);
    assert.is(extra.status, 400);
    assert.ok(extra.json.error.fieldErrors.length > 0);

    const k = key();
    const saved = await call({ type: 'save-link', url: `${pages.origin}/article-1.html`, idempotencyKey: k });
    assert.is(saved.status, 201);
    assert.is(Number(saved.headers['x-service-requests-remaining']), Number(unknown.headers['x-service-requests-remaining']) - 1, 'library commands are charged');
    const item = saved.json.data.item;
    const retry = await call({ type: 'save-link', url: `${pages.origin}/article-1.html`, idempotencyKey: k });
    assert.is(retry.status, 200);
    assert.is(retry.json.data.item.itemId, item.itemId);
    assert.is((await call({ type: 'save-link', url: `${pages.origin}/article-2.html`, idempotencyKey: k })).json.error.code, 'IDEMPOTENCY_CONFLICT');

    await s.engine.library.idle();
    const got = await call({ type: 'get', itemId: item.itemId }, reader);
    assert.is(got.status, 200);
    assert.is(got.json.data.item.itemId, item.itemId);
    const list = await call({ type: 'list' }, reader);
    assert.is(list.json.data.items.length, 1);

    const page = (await call({ type: 'reader-page', sourceId: item.itemId }, reader)).json.data.page.capture;
    assert.ok(page && page.blocks.length > 0, JSON.stringify(page).slice(0, 300));
    const block = page.blocks.find((b: { text: string }) => b.text.length > 40);
    const chars = [...block.text];
    const selection = {
      exact: chars.slice(10, 30).join(''),
      prefix: chars.slice(0, 10).join(''),
      suffix: chars.slice(30, 40).join(''),
      start: 10,
      end: 30,
      captureId: page.captureId,
      representationId: page.representationId,
      blockId: block.blockId,
    };
    const miss = await call({ type: 'highlight', sourceId: item.itemId, selections: [{ ...selection, exact: `${selection.exact.slice(0, -1)}#` }], idempotencyKey: key() });
    assert.is(miss.status, 400);
    assert.ok(miss.json.error.fieldErrors.some((f: { field: string }) => f.field.startsWith('selections.0')), JSON.stringify(miss.json.error));
    const hit = await call({ type: 'highlight', sourceId: item.itemId, selections: [selection], idempotencyKey: key() });
    assert.is(hit.status, 201, JSON.stringify(hit.json));

    const current = (await call({ type: 'get', itemId: item.itemId }, reader)).json.data.item;
    const stale = await call({ type: 'set-reading-state', itemId: item.itemId, expectedRevision: current.revision + 5, read: true, archived: false, idempotencyKey: key() });
    assert.is(stale.status, 412);
    const read = await call({ type: 'set-reading-state', itemId: item.itemId, expectedRevision: current.revision, read: true, archived: false, idempotencyKey: key() });
    assert.is(read.status, 200, 'a reading-state change stores no new item');
    assert.is(read.json.data.item.read, true);

    const pdf = pageBytes('tide-pools.pdf');
    const prepared = await call({ type: 'prepare-upload', fileName: 'tide-pools.pdf', contentType: 'application/pdf', byteLength: pdf.byteLength, idempotencyKey: key() });
    assert.is(prepared.status, 201, JSON.stringify(prepared.json));
    const upload = prepared.json.data.upload;
    assert.is(upload.method, 'PUT');
    const put = await s.req(upload.path, { method: 'PUT', token: writer, headers: { 'content-type': 'application/pdf' }, body: pdf });
    assert.is(put.status, 200, JSON.stringify(put.json));
    assert.is(put.json.data.receivedBytes, pdf.byteLength);
    const sha256 = createHash('sha256').update(pdf).digest('hex');
    const finished = await call({ type: 'finish-upload', uploadId: upload.uploadId, sha256, idempotencyKey: key() });
    assert.is(finished.status, 201, JSON.stringify(finished.json));
    assert.is((await s.req(upload.path, { method: 'PUT', token: reader, body: pdf })).status, 403);
    assert.is((await call({ type: 'prepare-import', idempotencyKey: key() })).status, 403);
  } finally {
    await s.close();
    await pages.close();
  }
});

test('an upload body over 256 KB is accepted by the upload route only; JSON routes still refuse it', async () => {
  const s = await startServer();
  try {
    const writer = (await s.credential({ scopes: ['library:read', 'library:write', 'document:create'] })).token;
    const big = new Uint8Array(300 * 1024).fill(65);
    const json = await s.req('/api/v1/documents', { method: 'POST', token: writer, headers: { 'idempotency-key': key(), 'content-type': 'application/json' }, body: big });
    assert.is(json.status, 400);
    const prepared = await s.req('/api/v1/library', {
      method: 'POST',
      token: writer,
      body: { type: 'prepare-upload', fileName: 'big.html', contentType: 'text/html', byteLength: big.byteLength, idempotencyKey: key() },
    });
    const put = await s.req(prepared.json.data.upload.path, { method: 'PUT', token: writer, body: big });
    assert.is(put.status, 200, JSON.stringify(put.json));
    assert.is(put.json.data.receivedBytes, big.byteLength);
  } finally {
    await s.close();
  }
});

test.run();
