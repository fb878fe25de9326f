import ky, { HTTPError } from 'ky';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import { MAX_REQUEST_BODY, type Handler, type PlainRequest } from '../../src/api/types.ts';
import { createEngine } from '../../src/engine.ts';
import { createFetch } from './index.ts';

/** A handler that records what it was given and echoes it back as JSON. */
function echoHandler(seen: PlainRequest[] = []): Handler {
  return async (request) => {
    seen.push(request);
    return {
      status: 200,
      headers: { 'content-type': 'application/json', 'x-echo': 'yes' },
      body: JSON.stringify({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: request.body ? new TextDecoder().decode(request.body) : null,
        bodyTooLarge: request.bodyTooLarge ?? false,
      }),
    };
  };
}

test('a Request becomes a plain request: method, path and query, lowercase headers, body bytes', async () => {
  const seen: PlainRequest[] = [];
  const fetch = createFetch(echoHandler(seen));
  const res = await fetch('http://kw.local/api/v1/documents?limit=5', {
    method: 'POST',
    headers: { 'Idempotency-Key': 'abc', 'Content-Type': 'application/json' },
    body: '{"v":1}',
  });
  assert.is(res.status, 200);
  assert.is(res.headers.get('x-echo'), 'yes');
  const echoed = (await res.json()) as { method: string; url: string; headers: Record<string, string>; body: string };
  assert.is(echoed.method, 'POST');
  assert.is(echoed.url, '/api/v1/documents?limit=5');
  assert.is(echoed.headers['idempotency-key'], 'abc');
  assert.is(echoed.body, '{"v":1}');
  assert.ok(seen[0]!.signal instanceof AbortSignal);
  const get = await fetch(new URL('http://kw.local/x'));
  assert.is(((await get.json()) as { body: unknown }).body, null, 'a GET has no body');
});

test('a body over the contract limit is cut at 256 KB and flagged bodyTooLarge', async () => {
  const seen: PlainRequest[] = [];
  const fetch = createFetch(echoHandler(seen));
  await fetch('http://kw.local/big', { method: 'POST', body: 'x'.repeat(MAX_REQUEST_BODY + 10) });
  assert.is(seen[0]!.bodyTooLarge, true);
  assert.is(seen[0]!.body!.byteLength, MAX_REQUEST_BODY);
  await fetch('http://kw.local/ok', { method: 'POST', body: 'x'.repeat(MAX_REQUEST_BODY) });
  assert.is(seen[1]!.bodyTooLarge, undefined);
});

test('204 and 304 answers have no body; binary bodies pass through unchanged', async () => {
  const fetch = createFetch(async (req) =>
    req.url === '/304'
      ? { status: 304, headers: { etag: 'W/"1"' }, body: 'ignored' }
      : req.url === '/204'
        ? { status: 204, headers: {} }
        : { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([0, 1, 255]) },
  );
  const a = await fetch('http://kw.local/304');
  assert.is(a.status, 304);
  assert.is(a.headers.get('etag'), 'W/"1"');
  assert.is(await a.text(), '');
  assert.is((await fetch('http://kw.local/204')).status, 204);
  assert.equal([...new Uint8Array(await (await fetch('http://kw.local/bin')).arrayBuffer())], [0, 1, 255]);
});

test('a streamed answer is pulled lazily, and cancelling it aborts the handler signal and ends the iterator', async () => {
  let signal: AbortSignal | undefined;
  let produced = 0;
  let finished = false;
  const fetch = createFetch(async (req) => {
    signal = req.signal;
    async function* frames() {
      try {
        for (;;) {
          produced++;
          yield `data: ${produced}\n\n`;
          await new Promise((r) => setTimeout(r, 1));
        }
      } finally {
        finished = true;
      }
    }
    return { status: 200, headers: { 'content-type': 'text/event-stream' }, stream: frames() };
  });
  const res = await fetch('http://kw.local/events', { headers: { accept: 'text/event-stream' } });
  assert.is(res.headers.get('content-type'), 'text/event-stream');
  const reader = res.body!.getReader();
  const first = await reader.read();
  assert.is(new TextDecoder().decode(first.value), 'data: 1\n\n');
  await reader.cancel();
  assert.ok(signal!.aborted, 'the handler saw the disconnect');
  assert.ok(finished, 'the iterator was closed');
  assert.ok(produced <= 3, `pulled lazily (${produced} frames produced)`);
});

test('aborting the request signal aborts the handler signal', async () => {
  const controller = new AbortController();
  let handlerSignal: AbortSignal | undefined;
  const fetch = createFetch(async (req) => {
    handlerSignal = req.signal;
    return { status: 200, headers: {}, stream: (async function* () { yield 'a'; })() };
  });
  const res = await fetch('http://kw.local/s', { signal: controller.signal });
  controller.abort();
  assert.ok(handlerSignal!.aborted);
  await res.body?.cancel().catch(() => undefined);
  const error = await fetch('http://kw.local/s', { signal: controller.signal }).then(
    () => null,
    (e: unknown) => e,
  );
  assert.is((error as Error | null)?.name, 'AbortError', 'an already-aborted request rejects');
});

test('ky works against an embedded engine with no socket', async () => {
  const engine = createEngine({ storage: memoryStorage() });
  try {
    const { token } = await engine.credentials.create({ accountId: 'acme', label: 'ky', scopes: ['document:create', 'document:read', 'document:write'] });
    const api = ky.create({
      prefixUrl: 'http://kw.local/api/v1',
      fetch: createFetch(createApiHandler({ engine, log: () => undefined })),
      headers: { authorization: `Bearer ${token}` },
      retry: 0,
    });
    const principal = await api.get('auth').json<{ data: { label: string } }>();
    assert.is(principal.data.label, 'ky');
    const created = await api.post('documents', { json: { v: 1, title: 'Via ky' }, headers: { 'idempotency-key': 'ky-create-key-0001' } });
    assert.is(created.status, 201);
    const revision = created.headers.get('service-revision')!;
    const { data } = await created.json<{ data: { documentRef: string } }>();
    const mutated = await api
      .post(`documents/${data.documentRef}/mutations`, {
        json: { v: 1, intent: 'Add a line', mutation: { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: [{ type: 'paragraph', markdown: 'Hello **ky**' }] } },
        headers: { 'idempotency-key': 'ky-mutate-key-0001', 'service-if-revision': revision },
      })
      .json<{ data: { receipt: { resultingVersion: number } } }>();
    assert.is(mutated.data.receipt.resultingVersion, 2);
    const md = await api.get(`documents/${data.documentRef}`, { searchParams: { format: 'markdown' } }).text();
    assert.match(md, /Hello \*\*ky\*\*/);
    const err = await api.get(`documents/sdoc_${'0'.repeat(48)}`).catch((e: unknown) => e);
    assert.ok(err instanceof HTTPError);
    assert.is(err.response.status, 404);
    assert.is(((await err.response.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
  } finally {
    await engine.close();
  }
});

test.run();
