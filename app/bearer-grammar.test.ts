/**
 * One bearer grammar on every surface of the dev server (src/contract/bearer.ts): the API, the
 * operator API, MCP at /mcp and the live co-editing upgrade accept and refuse the same
 * `Authorization` headers. (The upgrade used to refuse `Bearer  <token>` that the others accept.)
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { serve, type DevServer } from './serve.ts';

const ACCEPTED = (t: string) => [`Bearer ${t}`, `bearer ${t}`, `BEARER ${t}`, `Bearer  ${t}`, `Bearer ${t}  `];
const REFUSED = (t: string) => [`Bearer${t}`, 'Bearer', 'Bearer ', `Basic ${t}`, `Bearer ${t} extra`, `Bearer\t${t}`, `Token ${t}`];

/** The status the co-editing upgrade answers: 101 when the socket opened, else the HTTP refusal's. */
function upgradeStatus(server: DevServer, ref: string, authorization: string): Promise<number> {
  return new Promise((done, fail) => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/documents/${ref}/sync`, { headers: { authorization } });
    ws.once('open', () => {
      ws.close();
      done(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    ws.once('error', (error) => fail(error));
  });
}

async function mcpStatus(server: DevServer, authorization: string): Promise<number> {
  const res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'grammar', version: '1' } } }),
  });
  await res.body?.cancel();
  return res.status;
}

test('the API, the operator API, MCP and the co-editing upgrade accept and refuse the same bearer headers', async () => {
  const server = await serve({ port: 0, storage: 'memory', seed: 'demo', operatorKey: 'operator-key-for-the-bearer-grammar' });
  try {
    const { token, documentRef } = server.demo!;
    const rows: string[] = [];
    for (const [expected, headers] of [[true, ACCEPTED(token)], [false, REFUSED(token)]] as const) {
      for (const authorization of headers) {
        const api = (await fetch(`${server.url}/api/v1/auth`, { headers: { authorization } })).status;
        const operator = (
          await fetch(`${server.url}/operator/v1/activation`, {
            method: 'POST',
            headers: { authorization: authorization.replace(token, server.operatorKey), 'content-type': 'application/json' },
            body: '{}',
          })
        ).status;
        const mcp = await mcpStatus(server, authorization);
        const sync = await upgradeStatus(server, documentRef, authorization);
        const got = { api, operator, mcp, sync };
        const want = expected ? { api: 200, operator: 200, mcp: 200, sync: 101 } : { api: 401, operator: 401, mcp: 401, sync: 401 };
        if (JSON.stringify(got) !== JSON.stringify(want)) rows.push(`${JSON.stringify(authorization.replace(token, 'TOKEN'))}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
      }
    }
    assert.equal(rows, [], 'every surface answers every header alike');
  } finally {
    await server.close();
  }
});

test.run();
