/**
 * The worker transport's own behaviour: streams cross the boundary chunk by chunk, a host-side abort
 * reaches the worker's request signal, a crash answers 503 to requests in flight, restarts the worker
 * and loses no acknowledged (fsynced) write.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { createWorkerHandler as streamEngine } from '../../fixtures/worker-stream-module.ts';
import { createClient } from '../../src/client/index.ts';
import { listen } from '../http/index.ts';
import { serveStorage } from '../../adapters/worker-proxy/index.ts';
import { startWorkerHost, type WorkerHost, type WorkerHostEvent } from './index.ts';

const streamModule = new URL('../../fixtures/worker-stream-module.ts', import.meta.url);
const engineModule = new URL('../../fixtures/worker-engine.ts', import.meta.url);
const base = 'http://kw.local';

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const stats = async (host: WorkerHost) => (await (await host.fetch(`${base}/stats`)).json()) as { aborted: number; active: number };

test('a streamed response arrives chunk by chunk and cancelling the body aborts the worker-side signal', async () => {
  const host = await startWorkerHost({ module: streamModule });
  try {
    const res = await host.fetch(`${base}/stream`);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('tick 2')) text += decoder.decode((await reader.read()).value);
    assert.match(text, /^tick 0\ntick 1\ntick 2\n/);
    await reader.cancel();
    const s = await until(async () => {
      const s = await stats(host);
      return s.aborted === 1 && s.active === 0 ? s : undefined;
    }, 'the worker-side stream to stop');
    assert.equal(s, { aborted: 1, active: 0 });
  } finally {
    await host.close();
  }
});

test('aborting the request signal stops the stream in the worker', async () => {
  const host = await startWorkerHost({ module: streamModule });
  try {
    const abort = new AbortController();
    const res = await host.fetch(`${base}/stream`, { signal: abort.signal });
    await res.body!.getReader().read();
    abort.abort();
    await until(async () => ((await stats(host)).aborted === 1 ? true : undefined), 'the abort to reach the worker');
  } finally {
    await host.close();
  }
});

test('an event stream crosses the worker and node:http alike: the client resumes with Last-Event-ID and stops at the terminal event', async () => {
  const jobId = `kjob_${'f'.repeat(48)}`;
  const host = await startWorkerHost({ module: streamModule });
  const server = await listen(streamEngine().handler, { port: 0 });
  try {
    for (const [baseUrl, fetch] of [[base, host.fetch], [server.url, globalThis.fetch]] as const) {
      const seen: string[] = [];
      for await (const e of createClient({ baseUrl, token: 't', fetch }).jobEvents(jobId, { maxReconnectDelayMs: 20 })) seen.push(`${e.eventId}:${e.kind}`);
      assert.equal(seen, ['1:job.progress', '2:job.progress', '3:job.progress', '4:job.succeeded'], baseUrl);
    }
  } finally {
    await server.close();
    await host.close();
  }
});

test('the host knows each operation’s body limit without asking the worker (uploads are larger)', async () => {
  const host = await startWorkerHost({ module: streamModule });
  try {
    const limit = host.handler.bodyLimit!;
    assert.is(limit('POST', '/api/v1/documents'), 256 * 1024);
    assert.ok(limit('PUT', '/api/v1/library/uploads/lup_x?y=1') > 256 * 1024);
  } finally {
    await host.close();
  }
});

test('request bodies and headers cross intact; a handler that throws answers 500 INTERNAL_ERROR', async () => {
  const host = await startWorkerHost({ module: streamModule });
  try {
    const bytes = randomBytes(70_000);
    const echo = await host.fetch(`${base}/echo`, { method: 'POST', body: bytes });
    assert.equal(echo.headers.get('x-length'), '70000');
    assert.ok(Buffer.from(await echo.arrayBuffer()).equals(bytes));
    const bug = await host.fetch(`${base}/throw`, { headers: { 'x-request-id': 'client-request-0001' } });
    assert.is(bug.status, 500);
    const body = (await bug.json()) as { error: { code: string }; meta: { requestId: string; clientRequestId: string } };
    assert.is(body.error.code, 'INTERNAL_ERROR');
    assert.is(body.meta.clientRequestId, 'client-request-0001');
    assert.is(bug.headers.get('x-request-id'), body.meta.requestId);
  } finally {
    await host.close();
  }
});

test('a graceful close lets requests under way finish; later requests get 503', async () => {
  const host = await startWorkerHost({ module: streamModule });
  const underway = host.fetch(`${base}/slow`);
  await until(async () => (host.stats().inFlight === 1 ? true : undefined), 'the slow request to reach the worker');
  const closed = host.close();
  const early = await host.fetch(`${base}/stats`);
  assert.is(early.status, 503, 'no new request once closing');
  assert.ok(early.headers.get('retry-after'));
  assert.is((await underway).status, 200, 'the request under way was answered, not cut');
  await closed;
});

test('a module without createWorkerHandler fails the start with a message naming it', async () => {
  const bad = new URL('./protocol.ts', import.meta.url);
  let message = '';
  try {
    await startWorkerHost({ module: bad, restart: false });
  } catch (e) {
    message = (e as Error).message;
  }
  assert.match(message, /does not export createWorkerHandler/);
});

test('a crash mid-stream fails the stream; the worker restarts and answers again', async () => {
  const events: WorkerHostEvent[] = [];
  const host = await startWorkerHost({ module: streamModule, testHooks: true, onEvent: (e) => events.push(e) });
  try {
    const res = await host.fetch(`${base}/stream`);
    const reader = res.body!.getReader();
    await reader.read();
    host.crashForTest(3);
    let failed = false;
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch {
      failed = true;
    }
    assert.ok(failed, 'the interrupted stream errors instead of ending as if complete');
    assert.equal((await stats(host)).active, 0);
    assert.equal(events.map((e) => e.kind), ['crash', 'restarted']);
    assert.equal(host.stats().generation, 1);
  } finally {
    await host.close();
  }
});

test('a restart that fails is tried again with backoff; requests wait for it', async () => {
  const events: WorkerHostEvent[] = [];
  const host = await startWorkerHost({ module: streamModule, options: { failGeneration: 1 }, testHooks: true, onEvent: (e) => events.push(e) });
  try {
    host.crashForTest();
    await until(async () => (events.length >= 1 ? true : undefined), 'the crash');
    const answer = await host.fetch(`${base}/stats`);
    assert.is(answer.status, 200, 'answered by the third start');
    assert.equal(events.map((e) => `${e.kind}:${e.generation}`), ['crash:0', 'restart-failed:1', 'restarted:2']);
    assert.match((events[1] as { message: string }).message, /start 1 fails/);
  } finally {
    await host.close();
  }
});

interface Outcome {
  key: string;
  status: number;
  ref?: string;
  retryAfter?: string | null;
  code?: string;
}

test('a crash under load: in-flight requests get 503 with Retry-After, no acknowledged write is lost', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-worker-crash-'));
  const operatorKey = randomBytes(32).toString('base64url');
  const options = { storage: 'lowdb', dir, operatorKey };
  let host = await startWorkerHost({ module: engineModule, options, testHooks: true, retryAfterMs: 700 });
  try {
    const cred = await host.fetch(`${base}/operator/v1/credentials`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'crash test', scopes: ['document:create', 'document:read'] }),
    });
    assert.is(cred.status, 201);
    const token = ((await cred.json()) as { data: { token: string } }).data.token;
    let n = 0;
    const create = async (key = `crash-key-${String(n++).padStart(8, '0')}`): Promise<Outcome> => {
      const res = await host.fetch(`${base}/api/v1/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ v: 1, title: `doc ${key}` }),
      });
      const body = (await res.json()) as { data?: { documentRef: string }; error?: { code: string } };
      const out: Outcome = { key, status: res.status, retryAfter: res.headers.get('retry-after') };
      if (body.data) out.ref = body.data.documentRef;
      if (body.error) out.code = body.error.code;
      return out;
    };

    // Acknowledged before the crash.
    const before = await Promise.all(Array.from({ length: 12 }, () => create()));
    assert.ok(before.every((o) => o.status === 201));
    // In flight at the crash: posted, then the crash message follows them to the worker.
    const inFlight = Array.from({ length: 10 }, () => create());
    host.crashForTest();
    const during = await Promise.all(inFlight);
    const unavailable = during.filter((o) => o.status === 503);
    assert.ok(unavailable.length > 0, 'requests in flight at the crash are answered 503');
    for (const o of during) assert.ok(o.status === 201 || o.status === 503, `in flight: ${o.status}`);
    for (const o of unavailable) {
      assert.is(o.code, 'TEMPORARILY_UNAVAILABLE');
      assert.is(o.retryAfter, '1');
    }
    // After the restart: the same keys either replay a write that committed before the crash, or apply it now.
    const retried = await Promise.all(unavailable.map((o) => create(o.key)));
    for (const o of retried) assert.ok(o.status === 201 || o.status === 200, `retry: ${o.status} ${o.code ?? ''}`);
    assert.is(host.stats().crashes, 1);

    const acknowledged = [...before, ...during, ...retried].filter((o) => o.ref !== undefined);
    await host.close();
    host = await startWorkerHost({ module: engineModule, options });
    for (const o of acknowledged) {
      const read = await host.fetch(`${base}/api/v1/documents/${o.ref}`, { headers: { authorization: `Bearer ${token}` } });
      assert.is(read.status, 200, `acknowledged ${o.key} → ${o.ref} is readable after the crash and a reopen`);
      await read.arrayBuffer();
    }
  } finally {
    await host.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('two engine workers share one lowdb folder through the storage proxy', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-worker-shared-'));
  const operatorKey = randomBytes(32).toString('base64url');
  const storage = await lowdbStorage({ dir });
  const server = serveStorage(storage);
  const start = () => startWorkerHost({ module: engineModule, options: { storage: 'remote', operatorKey }, ports: () => ({ storage: server.connect() }) });
  const [a, b] = await Promise.all([start(), start()]);
  try {
    const cred = await a.fetch(`${base}/operator/v1/credentials`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'shared', scopes: ['document:create', 'document:read'] }),
    });
    const token = ((await cred.json()) as { data: { token: string } }).data.token;
    const created = await a.fetch(`${base}/api/v1/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'shared-folder-key-01', 'content-type': 'application/json' },
      body: JSON.stringify({ v: 1, title: 'Written by A' }),
    });
    const ref = ((await created.json()) as { data: { documentRef: string } }).data.documentRef;
    const read = await b.fetch(`${base}/api/v1/documents/${ref}`, { headers: { authorization: `Bearer ${token}` } });
    assert.is(read.status, 200, 'the credential and the document written through A are visible through B');
    assert.is(((await read.json()) as { data: { title: string } }).data.title, 'Written by A');
    let refused = '';
    try {
      await lowdbStorage({ dir });
    } catch (e) {
      refused = (e as Error).message;
    }
    assert.match(refused, /is locked by this process/, 'a second direct open is still refused: sharing goes through the proxy');
  } finally {
    await Promise.all([a.close(), b.close()]);
    server.close();
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
