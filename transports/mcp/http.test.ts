/**
 * The MCP endpoint's edge over a real socket: authentication before a session exists, session caps
 * per credential and in all, idle expiry that really frees sessions, Host/Origin checks (DNS
 * rebinding) and the cookie-plus-bearer refusal.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import { createEngine } from '../../src/engine.ts';
import { listen } from '../http/index.ts';
import { mountMcp, type McpHttpOptions } from './index.ts';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

async function endpoint(options: Partial<McpHttpOptions> = {}) {
  const operatorKey = randomBytes(32).toString('base64url');
  const engine = createEngine({ storage: memoryStorage() });
  const handler = createApiHandler({ engine, operatorKey, log: () => undefined });
  const listening = await listen(handler, { port: 0 });
  const mcp = mountMcp(listening.server, { handler, ...options });
  const token = async () => {
    const res = await fetch(`${listening.url}/operator/v1/credentials`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'mcp', scopes: ['document:read', 'document:create'] }),
    });
    return ((await res.json()) as { data: { token: string } }).data.token;
  };
  /** One raw request to /mcp (node:http, so that Host can be set). */
  const raw = (headers: Record<string, string>, body = INITIALIZE, method = 'POST') =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: any }>((resolve, reject) => {
      const req = httpRequest(
        `${listening.url}/mcp`,
        { method, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let json: unknown = null;
            try {
              json = JSON.parse(text);
            } catch {
              json = text;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
          });
        },
      );
      req.on('error', reject);
      req.end(method === 'POST' ? body : undefined);
    });
  const client = async (tok: string) => {
    const c = new Client({ name: 'http-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${listening.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tok}` } } });
    await c.connect(transport);
    return { c, transport };
  };
  return {
    url: listening.url,
    mcp,
    token,
    raw,
    client,
    async close() {
      await mcp.close();
      await listening.close();
      await engine.close();
    },
  };
}

test('initialize with junk bearer strings is 401 in the error envelope and opens no session', async () => {
  const e = await endpoint();
  try {
    for (let i = 0; i < 300; i++) {
      const r = await e.raw({ authorization: `Bearer junk-${i}-${randomBytes(8).toString('hex')}` });
      assert.is(r.status, 401);
      assert.is(r.json.error.code, 'AUTH_REQUIRED');
      assert.is(r.json.meta.apiVersion, '1');
    }
    const none = await e.raw({});
    assert.is(none.status, 401);
    assert.is(none.headers['www-authenticate'], 'Bearer');
    assert.is(none.json.error.code, 'AUTH_REQUIRED');
    assert.is(e.mcp.sessionCount(), 0, 'no session was made for any of them');
    const real = await e.raw({ authorization: `Bearer ${await e.token()}` });
    assert.is(real.status, 200);
    assert.ok(typeof real.headers['mcp-session-id'] === 'string');
    assert.is(e.mcp.sessionCount(), 1);
  } finally {
    await e.close();
  }
});

test('sessions are capped per credential (429 RATE_LIMITED) and in all (503 TEMPORARILY_UNAVAILABLE), with Retry-After', async () => {
  const e = await endpoint({ maxSessionsPerCredential: 2, maxSessions: 3 });
  try {
    const alice = await e.token();
    const a1 = await e.client(alice);
    const a2 = await e.client(alice);
    const third = await e.raw({ authorization: `Bearer ${alice}` });
    assert.is(third.status, 429);
    assert.is(third.json.error.code, 'RATE_LIMITED');
    assert.is(third.json.error.retryable, true);
    assert.ok(Number(third.headers['retry-after']) >= 1);
    assert.is(e.mcp.sessionCount(), 2, 'the capped credential opened nothing more');

    const bob = await e.token();
    const b1 = await e.client(bob);
    assert.is(e.mcp.sessionCount(), 3);
    const carol = await e.raw({ authorization: `Bearer ${await e.token()}` });
    assert.is(carol.status, 503);
    assert.is(carol.json.error.code, 'TEMPORARILY_UNAVAILABLE');
    assert.ok(Number(carol.headers['retry-after']) >= 1);

    await a1.transport.terminateSession();
    await a1.c.close();
    assert.is(e.mcp.sessionCount(), 2, 'an ended session frees its place');
    const again = await e.raw({ authorization: `Bearer ${alice}` });
    assert.is(again.status, 200);
    await a2.c.close();
    await b1.c.close();
  } finally {
    await e.close();
  }
});

test('idle sessions are closed and forgotten after sessionIdleMs (injected clock)', async () => {
  let now = 1_000_000;
  const e = await endpoint({ sessionIdleMs: 60_000, now: () => now });
  try {
    const tok = await e.token();
    const first = await e.raw({ authorization: `Bearer ${tok}` });
    const id = first.headers['mcp-session-id'] as string;
    await e.raw({ authorization: `Bearer ${tok}` });
    assert.is(e.mcp.sessionCount(), 2);
    now += 59_000;
    assert.is(await e.mcp.sweepIdle(), 0, 'not idle long enough yet');
    now += 1_000;
    assert.is(await e.mcp.sweepIdle(), 2);
    assert.is(e.mcp.sessionCount(), 0, 'the session map is empty');
    const stale = await e.raw({ authorization: `Bearer ${tok}`, 'mcp-session-id': id }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    assert.is(stale.status, 404);
    assert.is(stale.json.error.code, 'NOT_FOUND');
  } finally {
    await e.close();
  }
});

test('Host and Origin are checked (DNS rebinding); cookie plus bearer is 401 AUTH_AMBIGUOUS', async () => {
  const e = await endpoint();
  try {
    const tok = await e.token();
    const port = new URL(e.url).port;
    const rebound = await e.raw({ host: `attacker.example:${port}`, authorization: `Bearer ${tok}` });
    assert.is(rebound.status, 403);
    assert.is(rebound.json.error.code, 'FORBIDDEN');
    const otherPort = await e.raw({ host: `127.0.0.1:1`, authorization: `Bearer ${tok}` });
    assert.is(otherPort.status, 403);
    const foreign = await e.raw({ origin: 'http://attacker.example', authorization: `Bearer ${tok}` });
    assert.is(foreign.status, 403);
    assert.match(foreign.json.error.message, /Origin/);
    const ambiguous = await e.raw({ cookie: 'kw_session=abc', authorization: `Bearer ${tok}` });
    assert.is(ambiguous.status, 401);
    assert.is(ambiguous.json.error.code, 'AUTH_AMBIGUOUS');
    assert.is(e.mcp.sessionCount(), 0);
    const local = await e.raw({ host: `localhost:${port}`, origin: `http://localhost:${port}`, authorization: `Bearer ${tok}` });
    assert.is(local.status, 200, JSON.stringify(local.json));
    assert.is(e.mcp.sessionCount(), 1);
  } finally {
    await e.close();
  }
  const configured = await endpoint({ allowedHosts: ['kw.internal'], allowedOrigins: ['https://app.example'] });
  try {
    const tok = await configured.token();
    assert.is((await configured.raw({ host: 'kw.internal', origin: 'https://app.example', authorization: `Bearer ${tok}` })).status, 200);
    assert.is((await configured.raw({ authorization: `Bearer ${tok}` })).status, 403, 'only the configured hosts once allowedHosts is given');
  } finally {
    await configured.close();
  }
});

test('many sessions opened and left idle are freed: memory comes back', async () => {
  let now = 0;
  const e = await endpoint({ sessionIdleMs: 1000, maxSessionsPerCredential: 1000, maxSessions: 1000, now: () => now });
  try {
    const tok = await e.token();
    for (let i = 0; i < 200; i++) assert.is((await e.raw({ authorization: `Bearer ${tok}` })).status, 200);
    assert.is(e.mcp.sessionCount(), 200);
    now += 1000;
    const closed = await e.mcp.sweepIdle();
    assert.is(closed, 200);
    assert.is(e.mcp.sessionCount(), 0);
  } finally {
    await e.close();
  }
});

test.run();
