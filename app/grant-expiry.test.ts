/**
 * A token's grant ends on a live socket when the token expires, not only when it is revoked: the
 * engine's clock is set so that the token has two seconds left when its co-editing socket opens;
 * the socket is closed with 4401 when they pass, and a new upgrade is refused 401. And a token whose
 * request budget runs out while its socket is open gets no more versions committed for it. Public
 * surfaces only: createEngine with a clock, the API handler on node:http, attachSync, a y-websocket
 * peer over loopback.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../adapters/memory/index.ts';
import { createApiHandler } from '../src/api/handler.ts';
import { createEngine } from '../src/engine.ts';
import { listen } from '../transports/http/index.ts';
import { attachSync } from '../transports/sync/index.ts';
import { GRANT_ENDED_CLOSE } from '../transports/sync/limits.ts';
import { SyncClient, refusal } from '../transports/sync/sync-kit.ts';

test('a token that expires while its co-editing socket is open: the socket is closed (4401), a new upgrade is refused 401', async () => {
  let offset = 0;
  const engine = createEngine({ storage: memoryStorage(), clock: { now: () => Date.now() + offset } });
  const server = await listen(createApiHandler({ engine }), { port: 0 });
  const sync = attachSync(server.server, engine);
  try {
    const actor = { accountId: 'acct', credentialRef: null, documentRef: null };
    const { document } = await engine.documents.create(actor, { idempotencyKey: 'expiry-create-000001', body: { v: 1, title: 'Expiring' } });
    const { token, credential } = await engine.credentials.create({ label: 'short', scopes: ['document:read', 'document:write'], accountId: 'acct', expiresInDays: 1 });
    offset = credential.expiresAt - Date.now() - 2_000; // the token has two seconds left from here
    const url = `${server.url.replace('http', 'ws')}/documents/${document.documentRef}/sync`;
    const client = await SyncClient.connect(url, token);
    const closed = new Promise<{ code: number; at: number }>((resolve) => client.socket.once('close', (code: number) => resolve({ code, at: Date.now() })));
    const opened = Date.now();
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the socket stayed open past the expiry')), 15_000).unref());
    const { code, at } = await Promise.race([closed, timeout]);
    assert.is(code, GRANT_ENDED_CLOSE);
    assert.ok(at - opened >= 1_000, `closed at the expiry, not before (${at - opened} ms)`);
    assert.is((await refusal(url, { authorization: `Bearer ${token}` })).status, 401);
    await client.awareness.destroy();
  } finally {
    await sync.close();
    await server.close();
    await engine.close();
  }
});

test("a token whose budget is spent while its socket is open: what it types is not committed as a version", async () => {
  const engine = createEngine({ storage: memoryStorage() });
  const server = await listen(createApiHandler({ engine }), { port: 0 });
  const sync = attachSync(server.server, engine, { timing: { pauseMs: 200, maxMs: 600 } });
  try {
    const actor = { accountId: 'acct', credentialRef: null, documentRef: null };
    const { document } = await engine.documents.create(actor, { idempotencyKey: 'budget-create-000001', body: { v: 1, title: 'Budget' } });
    const ref = document.documentRef;
    await engine.documents.mutate(actor, ref, {
      idempotencyKey: 'budget-build-0000001',
      ifRevision: document.revision,
      body: { v: 1, intent: 'a block', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: 'Start' }] } },
    });
    const { token } = await engine.credentials.create({ label: 'small', scopes: ['document:read', 'document:write'], accountId: 'acct', requestBudget: 5 });
    const url = `${server.url.replace('http', 'ws')}/documents/${ref}/sync`;
    const client = await SyncClient.connect(url, token);
    // Spend what is left of the budget through the API.
    let status = 0;
    for (let i = 0; i < 10 && status !== 429; i++) status = (await fetch(`${server.url}/api/v1/auth`, { headers: { authorization: `Bearer ${token}` } })).status;
    assert.is(status, 429, 'the budget is spent');
    const before = (await engine.documents.head(actor, ref)).version;
    client.type(client.blocks()[0]!.id, 'TYPED ON A SPENT BUDGET ');
    await new Promise((r) => setTimeout(r, 1_500)); // past the pause and the longest rhythm
    await sync.flush();
    assert.is((await engine.documents.head(actor, ref)).version, before, 'no version for a token whose budget is spent');
    await client.awareness.destroy();
    client.socket.close();
  } finally {
    await sync.close();
    await server.close();
    await engine.close();
  }
});

test.run();
