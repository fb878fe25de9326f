/**
 * Grants that outlive their request end with it: a live co-editing socket opened with a token is
 * closed (4401) when the token is revoked, and what it typed before is not committed; a person's
 * socket and their document's event stream end when they sign out. Also: the upgrade is a request
 * of the token's budget (a spent token is refused 429), and cookie plus bearer is 401
 * AUTH_AMBIGUOUS, as over REST. `kw serve`'s server in process, memory storage, loopback.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { serve, type DevServer } from './serve.ts';
import { SyncClient, refusal } from '../transports/sync/sync-kit.ts';
import { GRANT_ENDED_CLOSE } from '../transports/sync/limits.ts';
import { OPERATOR_KEY, post, signIn, streamText, type Running } from '../transports/web/web-kit.ts';

let s: DevServer;

test.before(async () => {
  s = await serve({ port: 0, storage: 'memory', seed: 'demo', operatorKey: OPERATOR_KEY, sync: { timing: { pauseMs: 300, maxMs: 1_000 } } });
});
test.after(async () => {
  await s.close();
});

const wsUrl = (ref: string) => `${s.url.replace('http', 'ws')}/documents/${ref}/sync`;
const running = () => ({ url: s.url, engine: s.engine, app: s.browserApp!, close: () => s.close() }) as Running;

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function version(ref: string): Promise<number> {
  const r = await fetch(`${s.url}/api/v1/documents/${ref}`, { headers: { authorization: `Bearer ${s.demo!.token}` } });
  return ((await r.json()) as { data: { version: number } }).data.version;
}

test('revoking a token closes its open socket (4401); what it typed just before is not committed', async () => {
  const ref = s.demo!.documentRef;
  const { token, credential } = await s.engine.credentials.create({ label: 'live', scopes: ['document:read', 'document:write'], accountId: s.localAccount });
  const client = await SyncClient.connect(wsUrl(ref), token);
  const closed = new Promise<number>((resolve) => client.socket.once('close', (code: number) => resolve(code)));
  const before = await version(ref);
  const first = client.blocks()[0]!;
  client.type(first.id, 'WRITTEN AFTER REVOKE ');
  await s.engine.credentials.revoke(s.localAccount, credential.credentialRef);
  assert.is(await within(closed, 10_000, 'the socket to close'), GRANT_ENDED_CLOSE);
  await s.sync.flush();
  await new Promise((r) => setTimeout(r, 600)); // past the pause: a commit would have happened
  assert.is(await version(ref), before, 'no version from a revoked token');
  const again = await refusal(wsUrl(ref), { authorization: `Bearer ${token}` });
  assert.is(again.status, 401);
  await client.awareness.destroy();
});

test("signing out closes the person's socket (4401) and ends their document's event stream", async () => {
  const ref = s.demo!.documentRef;
  const { cookie, csrf } = await signIn(running());
  const socket = new WebSocket(wsUrl(ref), { headers: { cookie } });
  socket.on('error', () => {});
  await within(new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('unexpected-response', (_q, res) => reject(new Error(`refused ${res.statusCode}`)));
  }), 10_000, 'the upgrade');
  const closed = new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code)));
  const events = await fetch(`${s.url}/documents/${ref}/events`, { headers: { cookie } });
  assert.is(events.status, 200);
  const stream = streamText(events);
  await within(stream.until('retry:'), 10_000, 'the stream to start');
  const out = await post(running(), '/sign-out', cookie, { csrf });
  assert.is(out.status, 303);
  assert.is(await within(closed, 10_000, 'the socket to close'), GRANT_ENDED_CLOSE);
  await within(stream.until('never sent'), 10_000, 'the stream to end').then(
    () => assert.unreachable('the stream went on'),
    (e: Error) => assert.match(e.message, /the stream ended/),
  );
});

test('a spent token is refused before the upgrade (429); cookie plus bearer is 401 AUTH_AMBIGUOUS', async () => {
  const ref = s.demo!.documentRef;
  const { token } = await s.engine.credentials.create({ label: 'small', scopes: ['document:read'], accountId: s.localAccount, requestBudget: 2 });
  for (let i = 0; i < 2; i++) assert.is((await fetch(`${s.url}/api/v1/auth`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  const spent = await refusal(wsUrl(ref), { authorization: `Bearer ${token}` });
  assert.is(spent.status, 429);
  assert.is(spent.body.error.code, 'RATE_LIMITED');
  const { cookie } = await signIn(running());
  const both = await refusal(wsUrl(ref), { authorization: `Bearer ${s.demo!.token}`, cookie });
  assert.is(both.status, 401);
  assert.is(both.body.error.code, 'AUTH_AMBIGUOUS');
});

test.run();
