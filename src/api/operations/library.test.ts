import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { contentExtractor, nodeFetcher } from '../../../adapters/capture/index.ts';
import { startServer } from '../../../fixtures/http-kit.ts';
import { pageBytes, startPageServer } from '../../../fixtures/pages/server.ts';

let n = 0;
const key = () => `library-http-key-${String(++n).padStart(6, '0')}`;

test('the library over HTTP: scopes per command, 201 then 201 (replayed) on a retry, capture state, reader page, highlights, reading state, uploads', async () => {
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
    assert.is(retry.status, 201, "a replay answers the first application's status");
    assert.is(retry.json.receipt.idempotency, 'replayed');
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

test('library identifiers by role: get and set-reading-state take sourceId or itemId (both is 400); set-reading-state needs no key; keys are 16-256 characters without control characters', async () => {
  const s = await startServer();
  try {
    const writer = (await s.credential({ scopes: ['library:read', 'library:write'] })).token;
    const call = (body: object) => s.req('/api/v1/library', { method: 'POST', token: writer, body });
    const spaced = 'a key with spaces, dots. and ünïcödé';
    const saved = await call({ type: 'save-link', url: 'https://example.org/roles', idempotencyKey: spaced });
    assert.is(saved.status, 201, saved.text);
    assert.is(saved.json.receipt.idempotency, 'created');
    const replay = await call({ type: 'save-link', url: 'https://example.org/roles', idempotencyKey: spaced });
    assert.is(replay.json.receipt.idempotency, 'replayed');
    assert.is(replay.json.receipt.receiptRef, saved.json.receipt.receiptRef);
    assert.is(replay.json.data.receipt, undefined, 'the receipt travels in the envelope, not in data');
    assert.is((await call({ type: 'save-link', url: 'https://example.org/k', idempotencyKey: 'k'.repeat(256) })).status, 201);
    for (const bad of ['k'.repeat(257), 'k'.repeat(15), 'tab\tin-the-key-0000']) {
      const r = await call({ type: 'save-link', url: 'https://example.org/bad', idempotencyKey: bad });
      assert.is(r.status, 400, bad);
      assert.equal(r.json.error.fieldErrors.map((f: { field: string }) => f.field), ['idempotencyKey']);
    }
    await s.engine.library.idle();
    const sourceId = saved.json.data.item.itemId;
    const bySource = await call({ type: 'get', sourceId });
    assert.is(bySource.status, 200);
    assert.is(bySource.json.data.item.itemId, sourceId);
    assert.equal((await call({ type: 'get', itemId: sourceId })).json.data.item, bySource.json.data.item);
    const both = await call({ type: 'get', itemId: sourceId, sourceId });
    assert.is(both.status, 400);
    assert.equal(both.json.error.fieldErrors.map((f: { field: string }) => f.field).sort(), ['itemId', 'sourceId']);
    assert.is((await call({ type: 'get' })).status, 400);
    const note = await call({ type: 'create-note', sourceId, markdown: 'A note', idempotencyKey: 'note-key-0000000001' });
    const noteAsSource = await call({ type: 'get', sourceId: note.json.data.item.itemId });
    assert.is(noteAsSource.status, 400, 'a sourceId must name a source');
    const revision = bySource.json.data.item.revision;
    const marked = await call({ type: 'set-reading-state', sourceId, expectedRevision: revision, read: true, archived: false });
    assert.is(marked.status, 200, marked.text);
    assert.is(marked.json.data.item.read, true);
    assert.is(marked.json.receipt, undefined, 'no key, no receipt');
    const stale = await call({ type: 'set-reading-state', itemId: sourceId, expectedRevision: revision, read: false, archived: true });
    assert.is(stale.status, 412, 'guarded by expectedRevision');
    const bothSet = await call({ type: 'set-reading-state', itemId: sourceId, sourceId, expectedRevision: revision + 1, read: false, archived: false });
    assert.is(bothSet.status, 400);
    const unchanged = await call({ type: 'get', itemId: sourceId });
    assert.is(unchanged.json.data.item.revision, revision + 1, 'refused commands changed nothing');
  } finally {
    await s.close();
  }
});

test('a document-bound credential gets 403 FORBIDDEN for every library command', async () => {
  const s = await startServer();
  try {
    const owner = (await s.credential({ account: 'alice', scopes: ['document:create', 'library:read', 'library:write'] })).token;
    const doc = await s.req('/api/v1/documents', { method: 'POST', token: owner, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Bound' } });
    const bound = (await s.credential({ account: 'alice', documentRef: doc.json.data.documentRef, scopes: ['library:read', 'library:write'] })).token;
    const prepared = await s.req('/api/v1/library', { method: 'POST', token: owner, body: { type: 'prepare-upload', fileName: 'a.pdf', contentType: 'application/pdf', byteLength: 4, idempotencyKey: key() } });
    const saved = await s.req('/api/v1/library', { method: 'POST', token: owner, body: { type: 'save-link', url: 'https://example.org/bound', idempotencyKey: key() } });
    const itemId = saved.json.data.item.itemId;
    const commands = [
      { type: 'save-link', url: 'https://example.org/x', idempotencyKey: key() },
      { type: 'list' },
      { type: 'get', itemId },
      { type: 'reader-page', sourceId: itemId },
      { type: 'create-note', sourceId: itemId, markdown: 'n', idempotencyKey: key() },
      { type: 'set-reading-state', itemId, expectedRevision: 1, read: true, archived: false },
      { type: 'prepare-upload', fileName: 'b.pdf', contentType: 'application/pdf', byteLength: 4, idempotencyKey: key() },
      { type: 'finish-upload', uploadId: prepared.json.data.upload.uploadId, idempotencyKey: key() },
      { type: 'prepare-import', idempotencyKey: key() },
    ];
    for (const body of commands) {
      const r = await s.req('/api/v1/library', { method: 'POST', token: bound, body });
      assert.is(r.status, 403, `${body.type}: ${r.text}`);
      assert.is(r.json.error.code, 'FORBIDDEN');
    }
    const put = await s.req(prepared.json.data.upload.path, { method: 'PUT', token: bound, body: new Uint8Array([1, 2, 3, 4]) });
    assert.is(put.status, 403);
    const list = await s.req('/api/v1/library', { method: 'POST', token: owner, body: { type: 'list' } });
    assert.is(list.json.data.items.length, 1, 'nothing was stored by the bound credential');
  } finally {
    await s.close();
  }
});

test("every creating library command replays with the first application's status (201) and receipt", async () => {
  const s = await startServer();
  try {
    const writer = (await s.credential({ scopes: ['library:read', 'library:write'] })).token;
    const call = (body: object) => s.req('/api/v1/library', { method: 'POST', token: writer, body });
    const save = { type: 'save-link', url: 'https://example.org/replayed', idempotencyKey: key() };
    const saved = await call(save);
    assert.is(saved.status, 201, saved.text);
    const sourceId = saved.json.data.item.itemId as string;
    const note = { type: 'create-note', sourceId, markdown: 'A note.', idempotencyKey: key() };
    const upload = { type: 'prepare-upload', fileName: 'a.html', contentType: 'text/html', byteLength: 3, idempotencyKey: key() };
    for (const command of [save, note, upload]) {
      const first = command === save ? saved : await call(command);
      const again = await call(command);
      assert.is(first.status, 201, `${command.type}: ${first.text}`);
      assert.equal([again.status, again.json.receipt.idempotency, again.json.receipt.receiptRef], [201, 'replayed', first.json.receipt.receiptRef], command.type);
    }
  } finally {
    await s.close();
  }
});

test.run();
