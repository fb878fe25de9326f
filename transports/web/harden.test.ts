/**
 * The browser app against a prober on loopback: requests with a wrong secret naming a real
 * credentialRef cannot flush that token's rows from the request inspector, and HEAD on a sign-in link
 * (a link scanner) does not use it up.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { listen } from '../../transports/http/listener.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import { signIn, signInLink, startWebServer } from './web-kit.ts';

const start = () => startWebServer({ listen, storage: memoryStorage(), createApiHandler });

test("400 requests with a wrong secret naming a token's credentialRef do not flush the token's own rows from /requests", async () => {
  const s = await start();
  try {
    const { cookie } = await signIn(s);
    const real = await s.engine.credentials.create({ accountId: 'demo', label: 'Agent', scopes: ['document:read'] });
    const own = await fetch(`${s.url}/api/v1/documents/sdoc_${'9'.repeat(48)}`, { headers: { authorization: `Bearer ${real.token}` } });
    const requestId = ((await own.json()) as { meta: { requestId: string } }).meta.requestId;
    // The same credentialRef, another secret (the token's last characters changed).
    const forged = real.token.slice(0, -6) + (real.token.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA');
    for (let i = 0; i < 400; i++) {
      const r = await fetch(`${s.url}/api/v1/auth`, { headers: { authorization: `Bearer ${forged}` } });
      assert.is(r.status, 401);
      await r.arrayBuffer();
    }
    const page = await (await fetch(`${s.url}/requests?token=${real.credential.credentialRef}`, { headers: { cookie } })).text();
    assert.ok(page.includes(requestId), "the token's own request is still listed");
    assert.ok(page.includes('AUTH_REQUIRED'), 'refused requests are listed too (the most recent ones)');
  } finally {
    await s.close();
  }
});

test('HEAD on a sign-in link does not use it up; GET then signs in', async () => {
  const s = await start();
  try {
    const { data } = (await (await signInLink(s)).json()) as { data: { url: string } };
    const head = await fetch(data.url, { method: 'HEAD', redirect: 'manual' });
    assert.is(head.status, 200);
    assert.is(head.headers.get('set-cookie'), null);
    const get = await fetch(data.url, { redirect: 'manual' });
    assert.is(get.status, 303);
    assert.match(get.headers.get('set-cookie') ?? '', /kw_session=/);
  } finally {
    await s.close();
  }
});

test.run();
