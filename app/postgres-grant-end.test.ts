/**
 * Grants end on every process: two `kw serve --storage postgres` children on one fresh database. A
 * token revoked through process B closes its co-editing socket on process A (4401), and a person
 * signing out on B closes their socket on A (4401): the storage's change notification (LISTEN/NOTIFY)
 * carries both. Skipped (printed) without a PostgreSQL server.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { freshDatabase, serverUnavailableReason, type FreshDatabase } from '../adapters/postgres/postgres-kit.ts';
import { SyncClient } from '../transports/sync/sync-kit.ts';
import { GRANT_ENDED_CLOSE } from '../transports/sync/limits.ts';
import { call, createDocument, startProcesses, type ServerProcess } from './postgres-cluster-kit.ts';

const test = suite('postgres: grants end on every process');
const reason = await serverUnavailableReason();
let db: FreshDatabase | null = null;
let procs: ServerProcess[] = [];

test.before(async () => {
  if (reason !== null) return;
  db = await freshDatabase();
  procs = await startProcesses(2, db.url);
});
test.after(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await db?.drop();
});

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A person signed in on `base`: the cookie header and the session's CSRF token. */
async function signIn(p: ServerProcess): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${p.url}/operator/v1/sign-in-links`, { method: 'POST', headers: { authorization: `Bearer ${p.operatorKey}`, 'content-type': 'application/json' }, body: '{}' });
  const { data } = (await res.json()) as { data: { url: string } };
  const signed = await fetch(data.url, { redirect: 'manual' });
  const cookie = signed.headers.get('set-cookie')!.split(';')[0]!;
  const html = await (await fetch(`${p.url}/settings/api`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(html)![1]! };
}

const form = (p: ServerProcess, path: string, cookie: string, fields: Record<string, string>) =>
  fetch(`${p.url}${path}`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });

test('signing out on B closes the person\'s socket on A; revoking a token on B closes its socket on A', async () => {
  if (reason !== null) {
    console.log(`  (skipped: ${reason})`);
    return;
  }
  const [a, b] = procs as [ServerProcess, ServerProcess];
  const token = a.demoToken!;
  const ref = await createDocument(a.url, token, 'Across');
  const person = await signIn(b);
  const socket = new WebSocket(`${a.url.replace('http', 'ws')}/documents/${ref}/sync`, { headers: { cookie: person.cookie } });
  socket.on('error', () => {});
  await within(new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('unexpected-response', (_q, res) => reject(new Error(`refused ${res.statusCode}`)));
  }), 20_000, 'the upgrade on A');
  const personClosed = new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code)));
  assert.is((await form(b, '/sign-out', person.cookie, { csrf: person.csrf })).status, 303);
  assert.is(await within(personClosed, 20_000, "the person's socket on A to close"), GRANT_ENDED_CLOSE);

  const client = await SyncClient.connect(`${a.url.replace('http', 'ws')}/api/v1/documents/${ref}/sync`, token);
  const tokenClosed = new Promise<number>((resolve) => client.socket.once('close', (code: number) => resolve(code)));
  const credentialRef = (await call(a.url, 'GET', '/api/v1/auth', token)).json.data.credentialRef as string;
  const owner = await signIn(b);
  const revoked = await form(b, `/settings/api/tokens/${credentialRef}/revoke`, owner.cookie, { csrf: owner.csrf });
  assert.ok(revoked.status < 400, `revoke answered ${revoked.status}`);
  assert.is(await within(tokenClosed, 20_000, "the token's socket on A to close"), GRANT_ENDED_CLOSE);
  client.awareness.destroy();
});

test('a token made on the settings page of A is shown once after the redirect, also when the GET reaches B (sealed in the shared storage, not in A\'s memory)', async () => {
  if (reason !== null) {
    console.log(`  (skipped: ${reason})`);
    return;
  }
  const [a, b] = procs as [ServerProcess, ServerProcess];
  const person = await signIn(a);
  const body = new URLSearchParams({ csrf: person.csrf, label: 'Made on A', document: '', requestBudget: '25', expiresInDays: '3' });
  body.append('scope', 'document:read');
  const made = await fetch(`${a.url}/settings/api/tokens`, { method: 'POST', redirect: 'manual', headers: { cookie: person.cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
  assert.is(made.status, 303);
  const shown = made.headers.get('location')!;
  const other = await signIn(b);
  const WHOLE_TOKEN = /svc_agent_v1_scred_[0-9a-f]{24}_[A-Za-z0-9_-]{32,}/;
  assert.not.match(await (await fetch(`${b.url}${shown}`, { headers: { cookie: other.cookie } })).text(), WHOLE_TOKEN, "another session's GET does not open it");
  const page = await (await fetch(`${b.url}${shown}`, { headers: { cookie: person.cookie } })).text();
  const token = WHOLE_TOKEN.exec(page)?.[0];
  assert.ok(token, 'the new token is on the page B answers');
  assert.is((await call(b.url, 'GET', '/api/v1/auth', token!)).status, 200);
  assert.ok(!(await (await fetch(`${a.url}${shown}`, { headers: { cookie: person.cookie } })).text()).includes(token!), 'shown once, on any process');
});

test.run();
