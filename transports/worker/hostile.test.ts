/**
 * The worker transport under hostile input: malformed and huge messages posted to the engine's
 * worker thread, and through the host, bodies over the limit, bad and huge headers, odd URLs. Every
 * one gets an answer in the error envelope (or is ignored, for messages that name no request), and
 * the worker neither crashes nor stops serving.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PlainRequest } from '../../src/api/types.ts';
import type { WorkerMessage } from './protocol.ts';
import { spawnEngineWorker } from './spawn.ts';
import { startWorkerHost } from './index.ts';

const engineModule = new URL('../../fixtures/worker-engine.ts', import.meta.url).href;

test('malformed and huge messages posted to the worker are refused or ignored; it keeps serving', async () => {
  const worker = spawnEngineWorker({ module: engineModule, options: { storage: 'memory', operatorKey: 'o'.repeat(32) }, testHooks: false, generation: 0, ports: {} });
  const received: WorkerMessage[] = [];
  let exited: number | null = null;
  worker.on('message', (m: WorkerMessage) => received.push(m));
  worker.on('exit', (code) => (exited = code));
  const waitFor = async (probe: () => boolean, what: string) => {
    for (let i = 0; i < 2000 && !probe(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.ok(probe(), what);
  };
  try {
    await waitFor(() => received.some((m) => m.t === 'ready'), 'the worker is ready');
    const junk: unknown[] = [
      null,
      42,
      'req',
      [],
      {},
      { t: 'nope' },
      { t: 'req' },
      { t: 'req', id: 'seven', req: {} },
      { t: 'req', id: 1 },
      { t: 'req', id: 2, req: null },
      { t: 'req', id: 3, req: { method: 5, url: null, headers: 'x', body: 'not bytes' } },
      { t: 'req', id: 4, req: { method: 'GET', url: '/api/v1/auth', headers: { authorization: 7, 'x-request-id': ['a'] }, body: null } },
      { t: 'req', id: 5, req: { method: 'POST', url: '/api/v1/documents', headers: { 'content-type': 'application/json' }, body: new Uint8Array(8 * 1024 * 1024) } },
      { t: 'req', id: 6, req: { method: 'GET', url: `/api/v1/documents/${'x'.repeat(1_000_000)}`, headers: { authorization: `Bearer ${'y'.repeat(1_000_000)}` }, body: null } },
      { t: 'pull', id: 'x' },
      { t: 'pull', id: 999 },
      { t: 'abort' },
      { t: 'abort', id: { nested: true } },
      { t: 'crash', exitCode: 3 }, // test hooks are off: ignored
    ];
    for (const message of junk) worker.postMessage(message);
    worker.postMessage({ t: 'req', id: 100, req: { method: 'GET', url: '/api/v1/auth', headers: {}, body: null } });
    await waitFor(() => received.some((m) => m.t === 'res' && m.id === 100), 'a well-formed request after the junk is answered');
    for (const id of [1, 2, 3, 4, 5, 6]) {
      await waitFor(() => received.some((m) => (m.t === 'res' || m.t === 'fail') && m.id === id), `request ${id} is answered`);
    }
    const answer = (id: number) => received.find((m) => (m.t === 'res' || m.t === 'fail') && m.id === id)!;
    for (const id of [1, 2, 3]) assert.is(answer(id).t, 'fail', `a request message without a usable request (${id}) is refused`);
    assert.is((answer(4) as { status: number }).status, 401, 'non-string header values are not credentials');
    assert.ok([400, 401].includes((answer(5) as { status: number }).status), 'an 8 MiB body is refused (no credential: 401 comes first)');
    assert.ok([401, 404, 400].includes((answer(6) as { status: number }).status), 'a huge path and token are refused');
    assert.is((answer(100) as { status: number }).status, 401);
    assert.is(exited, null, 'the worker is still running');
  } finally {
    await worker.terminate();
  }
});

test('through the host: bodies over the limit, bad and huge headers and odd URLs get error envelopes; no crash', async () => {
  const host = await startWorkerHost({ module: engineModule, options: { storage: 'memory', operatorKey: 'o'.repeat(32) } });
  try {
    const send = (request: Partial<PlainRequest>) => host.handler({ method: 'GET', url: '/api/v1/auth', headers: {}, body: null, ...request } as PlainRequest);
    const cred = await host.fetch('http://kw.local/operator/v1/credentials', {
      method: 'POST',
      headers: { authorization: `Bearer ${'o'.repeat(32)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'hostile', scopes: ['document:create', 'document:read'] }),
    });
    const bearer = `Bearer ${((await cred.json()) as { data: { token: string } }).data.token}`;
    const json = { 'content-type': 'application/json', 'idempotency-key': 'hostile-create-0000001', authorization: bearer };
    const cases: [string, Partial<PlainRequest>, number[]][] = [
      ['a body over the limit, flagged by the listener', { method: 'POST', url: '/api/v1/documents', headers: json, body: new Uint8Array(1024), bodyTooLarge: true }, [400]],
      ['a body over the limit, unflagged', { method: 'POST', url: '/api/v1/documents', headers: json, body: randomBytes(2 * 1024 * 1024) }, [400]],
      ['a huge bearer token', { headers: { authorization: `Bearer ${'a'.repeat(200_000)}` } }, [401]],
      ['control characters in a header', { headers: { authorization: 'Bearer \u0000\u0001\u007f', 'x-request-id': '\u0000bad\r\nid' } }, [400, 401]],
      ['a non-string header value', { headers: { authorization: 12 as unknown as string } }, [401]],
      ['a malformed percent-encoding', { url: '/api/v1/documents/%E0%A4%A' }, [400, 401, 404]],
      ['an absolute-form URL', { url: 'http://evil.example/api/v1/auth' }, [401]],
      ['an unknown method', { method: 'BREW' }, [401, 404, 405]],
      ['JSON that is not JSON', { method: 'POST', url: '/api/v1/documents', headers: json, body: new TextEncoder().encode('{"v":1,') }, [400]],
      ['a deeply nested JSON body', { method: 'POST', url: '/api/v1/documents', headers: json, body: new TextEncoder().encode(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) }, [400]],
    ];
    for (const [what, request, statuses] of cases) {
      const res = await send(request);
      assert.ok(statuses.includes(res.status), `${what}: ${res.status}`);
      const text = typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body);
      const body = JSON.parse(text) as { error?: { code: string; message: string } };
      assert.ok(body.error?.code && body.error.message, `${what}: the error envelope`);
    }
    assert.is(host.stats().crashes, 0);
    assert.is((await send({})).status, 401, 'still serving');
  } finally {
    await host.close();
  }
});

test.run();
