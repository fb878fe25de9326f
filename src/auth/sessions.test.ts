/**
 * `engine.sessions` through the package's root exports: sign-in links spent once, sessions read,
 * ended and watched, new tokens kept for one session's next page — on one storage shared by two
 * engines, and in the collections the browser app used before the service moved into the engine.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createApiHandler, createEngine, isServiceError, manualClock } from '../index.ts';

const START = Date.UTC(2026, 10, 29);

test('a link signs into its account once, within 15 minutes; the session lasts 7 days', async () => {
  const clock = manualClock(START);
  const engine = createEngine({ storage: memoryStorage(), clock });
  try {
    const link = await engine.sessions.createLink('demo');
    assert.match(link.secret, /^[A-Za-z0-9_-]{43}$/);
    assert.is(link.expiresAt, START + 15 * 60_000);
    const redeemed = await engine.sessions.redeem(link.secret);
    assert.ok(redeemed);
    assert.is(redeemed.session.accountId, 'demo');
    assert.is(redeemed.session.expiresAt, START + 7 * 86_400_000);
    assert.match(redeemed.cookie, /^[A-Za-z0-9_-]{43}$/);
    assert.match(redeemed.session.csrf, /^[A-Za-z0-9_-]{43}$/);
    assert.is(await engine.sessions.redeem(link.secret), null, 'spent');
    assert.equal(await engine.sessions.lookup(redeemed.cookie), redeemed.session);

    const late = await engine.sessions.createLink('demo');
    clock.advance(15 * 60_000);
    assert.is(await engine.sessions.redeem(late.secret), null, 'expired');
    assert.is(await engine.sessions.redeem('not-a-secret'), null);
    assert.is(await engine.sessions.lookup('not-a-cookie'), null);

    clock.advance(7 * 86_400_000);
    assert.is(await engine.sessions.lookup(redeemed.cookie), null, 'the session expired');
  } finally {
    await engine.close();
  }
});

test('a link for something that is not an account id is INVALID_REQUEST naming account', async () => {
  const engine = createEngine({ storage: memoryStorage() });
  try {
    const refused = await engine.sessions.createLink('not an account!').then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(isServiceError(refused));
    assert.is(refused.code, 'INVALID_REQUEST');
    assert.equal(refused.fieldErrors?.map((f) => f.field), ['account']);
  } finally {
    await engine.close();
  }
});

test('two engines on one storage: a link spent on one is spent on both, a session ended on one ends on both and its watch fires', async () => {
  const storage = memoryStorage();
  const a = createEngine({ storage });
  const b = createEngine({ storage });
  try {
    const link = await a.sessions.createLink('owner');
    const redeemed = await b.sessions.redeem(link.secret);
    assert.ok(redeemed);
    assert.is(await a.sessions.redeem(link.secret), null);
    const session = await a.sessions.lookup(redeemed.cookie);
    assert.ok(session);

    const reasons: string[] = [];
    const stop = a.sessions.watch(redeemed.cookie, session, (reason) => reasons.push(reason));
    await b.sessions.end(redeemed.cookie);
    for (let i = 0; i < 50 && reasons.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    stop();
    assert.equal(reasons, ['the session ended (signed out)']);
    assert.is(await a.sessions.lookup(redeemed.cookie), null);
  } finally {
    await b.close().catch(() => undefined);
    await a.close().catch(() => undefined);
  }
});

test('the records stay in the collections the browser app kept them in (existing data folders keep working)', async () => {
  const storage = memoryStorage();
  const engine = createEngine({ storage });
  try {
    const link = await engine.sessions.createLink('owner');
    assert.is((await storage.listRecords('web-sign-in-links')).length, 1);
    const redeemed = (await engine.sessions.redeem(link.secret))!;
    assert.equal([(await storage.listRecords('web-sign-in-links')).length, (await storage.listRecords('web-sessions')).length], [0, 1]);
    const id = await engine.sessions.keepNewToken(redeemed.cookie, 'svc_the_token');
    assert.is((await storage.listRecords('web-new-tokens')).length, 1);
    const stored = JSON.stringify(await storage.listRecords('web-new-tokens'));
    assert.not.ok(stored.includes('svc_the_token'), 'sealed: the storage never holds the token');
    assert.not.ok(stored.includes(redeemed.cookie) || JSON.stringify(await storage.listRecords('web-sessions')).includes(redeemed.cookie), 'only hashes of secrets are stored');
    assert.is(await engine.sessions.takeNewToken('x'.repeat(43), id), undefined, "another session's cookie does not open it");
    assert.is(await engine.sessions.takeNewToken(redeemed.cookie, id), 'svc_the_token');
    assert.is(await engine.sessions.takeNewToken(redeemed.cookie, id), undefined, 'once');
  } finally {
    await engine.close();
  }
});

test('POST /operator/v1/sign-in-links is an operation of the API handler: operator key, the local account by default, the error envelope', async () => {
  const clock = manualClock(START);
  const engine = createEngine({ storage: memoryStorage(), clock, baseUrl: 'http://kw.test' });
  const api = createApiHandler({ engine, operatorKey: 'the-operator-key', localAccount: 'demo' });
  const post = (headers: Record<string, string>, body: string | null) =>
    api({ method: 'POST', url: '/operator/v1/sign-in-links', headers, body: body === null ? null : new TextEncoder().encode(body) });
  const json = (r: { body?: unknown }) => JSON.parse(String(r.body)) as { data?: { url: string; expiresAt: string }; error?: { code: string; fieldErrors?: { field: string }[] } };
  const auth = { authorization: 'Bearer the-operator-key' };
  try {
    const made = await post(auth, null);
    assert.is(made.status, 201, 'no body: the local account');
    assert.is(made.headers['cache-control'], 'no-store');
    const { data } = json(made);
    assert.match(data!.url, /^http:\/\/kw\.test\/sign-in\/[A-Za-z0-9_-]{43}$/);
    assert.is(data!.expiresAt, new Date(START + 15 * 60_000).toISOString());
    const redeemed = await engine.sessions.redeem(data!.url.slice(data!.url.lastIndexOf('/') + 1));
    assert.is(redeemed?.session.accountId, 'demo');

    const other = json(await post({ ...auth, 'content-type': 'application/json' }, '{"account":"alice"}'));
    assert.is((await engine.sessions.redeem(other.data!.url.slice(other.data!.url.lastIndexOf('/') + 1)))?.session.accountId, 'alice');

    const bad = await post({ ...auth, 'content-type': 'application/json' }, '{"account":"not an account!"}');
    assert.is(bad.status, 400);
    assert.equal(json(bad).error!.fieldErrors!.map((f) => f.field), ['account']);
    assert.is((await post({ ...auth, 'content-type': 'application/json' }, '{"acount":"demo"}')).status, 400, 'unknown fields are refused');
    const refused = await post({ authorization: 'Bearer another-key' }, null);
    assert.is(refused.status, 401);
    assert.is(json(refused).error!.code, 'AUTH_REQUIRED');
    assert.is(json(await post({ ...auth, cookie: 'kw_session=x' }, null)).error!.code, 'AUTH_AMBIGUOUS');
  } finally {
    await engine.close();
  }
});

test.run();
