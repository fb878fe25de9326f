/**
 * The SSE parser and the job-events iterator: resume with Last-Event-ID after a stream closes or
 * drops, the end at the terminal event or on 204, errors as ApiClientError. The server side is a
 * scripted handler behind the in-process fetch.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PlainRequest, PlainResponse } from '../api/types.ts';
import { createFetch } from '../../transports/inproc/index.ts';
import { createClient, isApiClientError, parseSse, type SseItem } from './index.ts';

const jobId = `kjob_${'b'.repeat(48)}`;
const eventsPath = `/api/v1/research-jobs/${jobId}/events`;

function streamOf(text: string, splitEvery = 7): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at + splitEvery));
      at += splitEvery;
    },
  });
}

async function items(text: string, split?: number): Promise<SseItem[]> {
  const out: SseItem[] = [];
  for await (const item of parseSse(streamOf(text, split))) out.push(item);
  return out;
}

test('the SSE parser: CRLF/CR/LF, multi-line data, comments, id persistence, retry, chunk splits', async () => {
  const got = await items('\uFEFFretry: 25\r\n: keep-alive\r\nid: 7\nevent: research-job\ndata: a\ndata:b\r\rdata: c\n\nid\ndata: d\n\ndata: unterminated', 3);
  assert.equal(got, [
    { type: 'retry', ms: 25 },
    { type: 'event', event: { id: '7', event: 'research-job', data: 'a\nb' } },
    { type: 'event', event: { id: '7', event: 'message', data: 'c' } },
    { type: 'event', event: { id: '', event: 'message', data: 'd' } },
  ]);
  for (const split of [1, 2, 5, 64]) assert.equal(await items('id: 1\r\ndata: x\r\n\r\n', split), [{ type: 'event', event: { id: '1', event: 'message', data: 'x' } }]);
});

const event = (id: number, kind: string, state = 'running') =>
  `id: ${id}\nevent: research-job\ndata: ${JSON.stringify({ v: 1, eventId: String(id), jobId, kind, state, phase: 'research', progress: { percent: id, summary: kind }, createdAt: '2026-11-26T00:00:00.000Z' })}\n\n`;

/** A scripted events endpoint: each connection gets the next script entry. */
function scripted(scripts: ((request: PlainRequest) => PlainResponse)[]) {
  const requests: PlainRequest[] = [];
  const handler = async (request: PlainRequest): Promise<PlainResponse> => {
    requests.push(request);
    const script = scripts[requests.length - 1];
    if (!script || !request.url.startsWith(eventsPath)) return { status: 500, headers: {}, body: 'unexpected request' };
    return script(request);
  };
  return { requests, fetch: createFetch(handler) };
}

const sse = (...chunks: string[]): PlainResponse => ({
  status: 200,
  headers: { 'content-type': 'text/event-stream' },
  stream: (async function* () {
    for (const c of chunks) yield c;
  })(),
});

test('job events: yields in order, resumes with Last-Event-ID after a close and after a drop, ends at the terminal event', async () => {
  const server = scripted([
    () => sse('retry: 5000\n\n', event(1, 'job.created', 'queued'), ': keep-alive\n\n', event(2, 'job.progress')),
    () => ({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      stream: (async function* () {
        yield event(3, 'job.phase');
        throw new Error('connection reset');
      })(),
    }),
    () => sse(event(4, 'job.succeeded', 'succeeded'), event(5, 'job.progress')),
  ]);
  const client = createClient({ baseUrl: 'http://kw.local', token: 't', fetch: server.fetch });
  const kinds: string[] = [];
  for await (const e of client.jobEvents(jobId, { maxReconnectDelayMs: 5 })) kinds.push(`${e.eventId}:${e.kind}`);
  assert.equal(kinds, ['1:job.created', '2:job.progress', '3:job.phase', '4:job.succeeded']);
  assert.equal(
    server.requests.map((r) => [r.headers.accept, r.headers['last-event-id']]),
    [
      ['text/event-stream', undefined],
      ['text/event-stream', '2'],
      ['text/event-stream', '3'],
    ],
  );
});

test('job events: 204 ends at once; an error answer throws its contract code; idle reconnects are bounded', async () => {
  const done = scripted([() => ({ status: 204, headers: {} })]);
  const none: unknown[] = [];
  for await (const e of createClient({ baseUrl: 'http://kw.local', token: 't', fetch: done.fetch }).jobEvents(jobId, { lastEventId: '9' })) none.push(e);
  assert.equal(none, []);
  assert.is(done.requests[0]!.headers['last-event-id'], '9');

  const missing = scripted([
    () => ({
      status: 404,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { code: 'NOT_FOUND', message: 'no such job', retryable: false }, meta: { apiVersion: '1', requestId: 'req_0000000000000000000000000000' } }),
    }),
  ]);
  let code = '';
  try {
    for await (const _ of createClient({ baseUrl: 'http://kw.local', token: 't', fetch: missing.fetch }).jobEvents(jobId)) void _;
  } catch (e) {
    code = isApiClientError(e) ? e.code : String(e);
  }
  assert.is(code, 'NOT_FOUND');

  const garbled = scripted([() => sse('id: 1\nevent: research-job\ndata: {not json\n\n')]);
  let garbledError = '';
  try {
    for await (const _ of createClient({ baseUrl: 'http://kw.local', token: 't', fetch: garbled.fetch }).jobEvents(jobId)) void _;
  } catch (e) {
    garbledError = isApiClientError(e) ? e.code : String(e);
  }
  assert.is(garbledError, 'INVALID_RESPONSE');
  assert.is(garbled.requests.length, 1, 'a garbled event is reported, not retried');

  const broken = (): PlainResponse => ({
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    stream: (async function* () {
      throw new Error('connection reset before any byte');
    })(),
  });
  const dead = scripted(Array.from({ length: 5 }, () => broken));
  let idleError = '';
  try {
    for await (const _ of createClient({ baseUrl: 'http://kw.local', token: 't', fetch: dead.fetch }).jobEvents(jobId, { maxReconnectDelayMs: 1, maxIdleReconnects: 3 })) void _;
  } catch (e) {
    idleError = isApiClientError(e) ? e.code : String(e);
  }
  assert.is(idleError, 'NETWORK_ERROR', 'connections that break before delivering anything are bounded');
  assert.is(dead.requests.length, 4);
});

test('job events: keep-alives and clean closes are liveness: a quiet job is followed past maxIdleReconnects to its terminal event', async () => {
  const quiet = scripted([
    ...Array.from({ length: 8 }, (_, i) => () => (i % 2 === 0 ? sse(': keep-alive\n\n') : sse())),
    () => ({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      stream: (async function* () {
        yield ': keep-alive\n\n';
        throw new Error('dropped after a keep-alive');
      })(),
    }),
    () => sse(event(1, 'job.cancelled', 'cancelled')),
  ]);
  const kinds: string[] = [];
  for await (const e of createClient({ baseUrl: 'http://kw.local', token: 't', fetch: quiet.fetch }).jobEvents(jobId, { maxReconnectDelayMs: 1, maxIdleReconnects: 2 })) kinds.push(e.kind);
  assert.equal(kinds, ['job.cancelled']);
  assert.is(quiet.requests.length, 10);
});

test('job events over the real API: a waiting job whose streams keep closing is followed until it ends', async () => {
  const { memoryStorage } = await import('../../adapters/memory/index.ts');
  const { createEngine } = await import('../engine.ts');
  const { createApiHandler } = await import('../api/handler.ts');
  const { ScriptedRunner, specBody, untilAborted } = await import('../jobs/jobs-kit.ts');
  const runner = new ScriptedRunner([(ctx) => ctx.setPhase('planning'), untilAborted], true);
  const engine = createEngine({ storage: memoryStorage(), runner });
  const operatorKey = 'k'.repeat(32);
  // Streams close after 30 ms, keep-alives every 10 ms: the contract's 20 s and 15 s, shrunk.
  const handler = createApiHandler({ engine, operatorKey, log: () => undefined, eventStreams: { maxMs: 30, keepAliveMs: 10, retryMs: 1 } });
  const fetch = createFetch(handler);
  try {
    const res = await fetch('http://kw.local/operator/v1/credentials', {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'events', scopes: ['research:read', 'research:run', 'inquiry:create', 'knowledge:propose', 'document:create', 'document:read', 'document:write'] }),
    });
    const token = ((await res.json()) as { data: { token: string } }).data.token;
    const started = await fetch('http://kw.local/api/v1/research-jobs', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'quiet-job-start-0001' },
      body: JSON.stringify(specBody()),
    });
    assert.is(started.status, 202, await started.clone().text());
    const job = ((await started.json()) as { data: { jobId: string } }).data;
    let connections = 0;
    const counting = createClient({
      baseUrl: 'http://kw.local',
      token,
      fetch: (input, init) => {
        if (String(input instanceof Request ? input.url : input).includes('/events')) connections++;
        return fetch(input, init);
      },
    });
    const kinds: string[] = [];
    for await (const e of counting.jobEvents(job.jobId, { maxReconnectDelayMs: 1, maxIdleReconnects: 2 })) {
      kinds.push(e.kind);
      if (e.kind === 'job.phase') {
        // Quiet from here: let several streams close with nothing but keep-alives, then cancel.
        void (async () => {
          while (connections < 8) await new Promise((r) => setTimeout(r, 5));
          const head = await fetch(`http://kw.local/api/v1/research-jobs/${job.jobId}`, { headers: { authorization: `Bearer ${token}` } });
          await fetch(`http://kw.local/api/v1/research-jobs/${job.jobId}/cancellations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'quiet-job-cancel-0002', 'service-if-revision': head.headers.get('service-revision')! },
            body: JSON.stringify({ v: 1 }),
          });
        })();
      }
    }
    assert.ok(connections >= 8, `followed across ${connections} connections`);
    assert.is(kinds.at(-1), 'job.cancelled', kinds.join(','));
  } finally {
    await engine.close();
  }
});

test('job events over the real API: an unknown job is NOT_FOUND', async () => {
  const { memoryStorage } = await import('../../adapters/memory/index.ts');
  const { createEngine } = await import('../engine.ts');
  const { createApiHandler } = await import('../api/handler.ts');
  const engine = createEngine({ storage: memoryStorage() });
  const handler = createApiHandler({ engine, operatorKey: 'k'.repeat(32), log: () => undefined });
  const fetch = createFetch(handler);
  const res = await fetch('http://kw.local/operator/v1/credentials', {
    method: 'POST',
    headers: { authorization: `Bearer ${'k'.repeat(32)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: 'events', scopes: ['research:read'] }),
  });
  const token = ((await res.json()) as { data: { token: string } }).data.token;
  let code = '';
  try {
    for await (const _ of createClient({ baseUrl: 'http://kw.local', token, fetch }).jobEvents(jobId)) void _;
  } catch (e) {
    code = isApiClientError(e) ? e.code : String(e);
  }
  assert.is(code, 'NOT_FOUND');
  await engine.close();
});

test.run();
