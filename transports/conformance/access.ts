/**
 * API scenarios (see ./suite.ts): Authentication, scopes, boundaries, request budgets and routing (404 and 405).
 * @module
 */
import * as assert from 'uvu/assert';
import { ALL_SCOPES, DOC_SCOPES, a36, hex, newKey, type Reply } from './client.ts';
import { show, expectEnvelope, expectError, expectOk, checkDocument, checkMutationResult, proposalRequest, DAY, SESSION_COOKIE } from './assert.ts';
import type { Kit, Suite } from './scenario-kit.ts';


/** Register these scenarios on the suite. */
export function accessScenarios(s: Suite, k: Kit): void {
  const { c, createDoc, read, snapshot, mutate, p } = k;

  // ---- authentication and authorization -----------------------------------------------------

  s('no valid credential is 401 AUTH_REQUIRED', async () => {
    const token = await c.token();
    const forged = `svc_agent_v1_scred_${hex(24)}_${'A'.repeat(43)}`;
    const attempts: Reply[] = [
      await c.call('GET', '/api/v1/auth'),
      await c.call('GET', '/api/v1/documents'),
      await c.call('POST', '/api/v1/documents', { key: newKey(), body: { v: 1, title: 'x' } }),
      await c.call('GET', '/api/v1/auth', { token: forged }),
      await c.call('GET', '/api/v1/auth', { token: `${token}x` }),
      await c.call('GET', '/api/v1/auth', { headers: { Authorization: 'Basic dXNlcjpwYXNz' } }),
      await c.call('GET', '/api/v1/auth', { headers: { Authorization: 'Bearer' } }),
      await c.call('GET', '/api/v1/auth', { headers: { Cookie: SESSION_COOKIE } }),
    ];
    const lower = await c.call('GET', '/api/v1/auth', { headers: { Authorization: `bearer ${token}` } });
    assert.is(lower.status, 200, `the auth scheme is case-insensitive: ${show(lower)}`);
    for (const r of attempts) {
      const error = expectError(r, 401, 'AUTH_REQUIRED');
      if ('requiredAction' in error) assert.is(error.requiredAction, 'authenticate');
    }
  });

  s('a bearer token together with a session cookie is 401 AUTH_AMBIGUOUS before anything else', async () => {
    const token = await c.token(ALL_SCOPES);
    const doc = await createDoc(token);
    const headers = { Cookie: SESSION_COOKIE };
    const cases: Reply[] = [
      await c.call('GET', '/api/v1/auth', { token, headers }),
      await c.call('GET', `/api/v1/documents/${doc.documentRef}`, { token, headers }),
      // an invalid body, a missing key, an unknown path, a wrong method, an anonymous route, a forged token:
      await c.call('POST', '/api/v1/documents', { token, headers, body: { nope: true } }),
      await c.call('GET', '/api/v1/no-such-route', { token, headers }),
      await c.call('DELETE', '/api/v1/documents', { token, headers }),
      await c.call('GET', `/api/v1/public/artifacts/entity/kent_${a36(24)}/${hex(64)}`, { token, headers }),
      await c.call('POST', '/api/v1/search', { token, headers, body: { scope: { kind: 'public' }, query: 'x' } }),
      await c.call('GET', '/api/v1/auth', { token: `svc_agent_v1_scred_${hex(24)}_${'B'.repeat(43)}`, headers }),
    ];
    for (const r of cases) expectError(r, 401, 'AUTH_AMBIGUOUS');
  });

  s('a missing scope is 403 FORBIDDEN', async () => {
    const account = c.account();
    const full = (await c.credential({ scopes: DOC_SCOPES, account })).token;
    const doc = await createDoc(full);
    const readOnly = (await c.credential({ scopes: ['document:read'], account })).token;
    const createOnly = (await c.credential({ scopes: ['document:create'], account })).token;
    expectError(await c.call('POST', '/api/v1/documents', { token: readOnly, key: newKey(), body: { v: 1, title: 'x' } }), 403, 'FORBIDDEN');
    expectError(await c.call('GET', '/api/v1/documents', { token: createOnly }), 403, 'FORBIDDEN');
    expectError(await read(createOnly, doc.documentRef), 403, 'FORBIDDEN');
    const { rev } = await snapshot(full, doc.documentRef);
    expectError(await mutate(readOnly, doc.documentRef, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [p('x')] }, { revision: rev }), 403, 'FORBIDDEN');
    expectError(await c.call('GET', '/api/v1/research-jobs', { token: full }), 403, 'FORBIDDEN');
    expectError(await c.call('POST', '/api/v1/proposals', { token: full, key: newKey(), body: proposalRequest() }), 403, 'FORBIDDEN');
    expectOk(await c.call('GET', '/api/v1/auth', { token: createOnly }), 200);
  });

  s("another account's document is 404, never 403", async () => {
    const a = await c.token();
    const b = await c.token(ALL_SCOPES);
    const doc = await createDoc(a);
    const { rev } = await snapshot(a, doc.documentRef);
    expectError(await read(b, doc.documentRef), 404, 'NOT_FOUND');
    expectError(await read(b, doc.documentRef, '?format=markdown'), 404, 'NOT_FOUND');
    expectError(await mutate(b, doc.documentRef, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [p('x')] }, { revision: rev }), 404, 'NOT_FOUND');
    const list = expectOk(await c.call('GET', '/api/v1/documents', { token: b }));
    assert.not.ok(list.items.some((x: any) => x.documentRef === doc.documentRef), 'not listed for another account');
    // Even a credential without the read scope cannot tell an out-of-boundary document from an absent one.
    const createOnly = await c.token(['document:create']);
    const r = await read(createOnly, doc.documentRef);
    assert.ok(r.status === 404 || r.status === 403, show(r));
  });

  s('a document-bound credential sees only its document: other documents 404, creating 403, list of one', async () => {
    const account = c.account();
    const owner = (await c.credential({ scopes: DOC_SCOPES, account })).token;
    const mine = await createDoc(owner, 'bound target');
    const other = await createDoc(owner, 'other document');
    const bound = (await c.credential({ scopes: ALL_SCOPES, account, documentRef: mine.documentRef })).token;
    checkDocument(expectOk(await read(bound, mine.documentRef)));
    expectError(await read(bound, other.documentRef), 404, 'NOT_FOUND');
    const otherRev = (await snapshot(owner, other.documentRef)).rev;
    expectError(
      await mutate(bound, other.documentRef, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [p('x')] }, { revision: otherRev }),
      404,
      'NOT_FOUND',
    );
    expectError(await c.call('POST', '/api/v1/documents', { token: bound, key: newKey(), body: { v: 1, title: 'nope' } }), 403, 'FORBIDDEN');
    const list = expectOk(await c.call('GET', '/api/v1/documents', { token: bound }));
    assert.equal(
      list.items.map((x: any) => x.documentRef),
      [mine.documentRef],
    );
    const mineRev = (await snapshot(bound, mine.documentRef)).rev;
    checkMutationResult(await mutate(bound, mine.documentRef, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [p('bound edit')] }, { revision: mineRev }), {
      documentRef: mine.documentRef,
    });
  });
  // ---- budgets ------------------------------------------------------------------------------

  s('request budget 2: the third request is 429 RATE_LIMITED with Retry-After and error.retryAfterMs', async () => {
    const token = (await c.credential({ scopes: ['document:read'], account: c.account(), requestBudget: 2 })).token;
    const one = await c.call('GET', '/api/v1/auth', { token });
    expectOk(one);
    assert.is(one.headers.get('x-service-requests-remaining'), '1');
    const two = await c.call('GET', '/api/v1/documents', { token });
    expectOk(two);
    assert.is(two.headers.get('x-service-requests-remaining'), '0');
    const three = await c.call('GET', '/api/v1/auth', { token });
    const error = expectError(three, 429, 'RATE_LIMITED');
    const retryAfter = three.headers.get('retry-after')!;
    assert.match(retryAfter, /^\d+$/, 'Retry-After in seconds');
    assert.ok(Number.isInteger(error.retryAfterMs), 'error.retryAfterMs present');
    assert.ok(error.retryAfterMs > DAY - 10 * 60_000 && error.retryAfterMs <= DAY, `retryAfterMs ${error.retryAfterMs} is the time until the 24 h window ends`);
    assert.ok(Math.abs(Number(retryAfter) - error.retryAfterMs / 1000) <= 1.5, 'Retry-After and retryAfterMs agree');
    assert.is(error.retryable, true);
    expectError(await c.call('GET', '/api/v1/documents', { token }), 429, 'RATE_LIMITED');
  });

  s('authenticated answers carry X-Service-Requests-Remaining, successes and errors alike', async () => {
    const token = await c.token(DOC_SCOPES);
    const doc = await createDoc(token);
    const etag = (await read(token, doc.documentRef)).headers.get('etag')!;
    const answers = [
      await c.call('GET', '/api/v1/auth', { token }),
      await c.call('POST', '/api/v1/documents', { token, key: newKey(), body: { v: 1, title: 'budget' } }),
      await read(token, doc.documentRef),
      await read(token, doc.documentRef, '', { 'If-None-Match': etag }),
      await read(token, doc.documentRef, '?format=markdown'),
      await read(token, `sdoc_${hex(48)}`),
      await c.call('POST', '/api/v1/documents', { token, key: newKey(), body: { v: 1 } }),
      await c.call('GET', '/api/v1/research-jobs', { token }),
    ];
    let last = Infinity;
    for (const r of answers) {
      const h = r.headers.get('x-service-requests-remaining');
      assert.ok(h !== null && /^\d+$/.test(h), `X-Service-Requests-Remaining on ${r.method} ${r.path} (${r.status})`);
      assert.ok(Number(h) <= last, 'remaining never rises within a window');
      last = Number(h);
    }
  });
  // ---- routing ------------------------------------------------------------------------------

  s('an unknown path under /api/v1 answers a JSON 404 NOT_FOUND envelope', async () => {
    const token = await c.token();
    for (const path of ['/api/v1/nope', '/api/v1/documents/extra/segments/here', `/api/v1/documents/sdoc_${hex(48)}/unknown`, '/api/v1/']) {
      expectError(await c.call('GET', path, { token }), 404, 'NOT_FOUND');
    }
    expectError(await c.call('PUT', '/api/v1/nope', { token }), 404, 'NOT_FOUND');
    // Anonymous: 404 (unknown path) or 401 (only public artifacts are anonymous) are both readings.
    const anon = await c.call('GET', '/api/v1/nope');
    assert.ok(anon.status === 404 || anon.status === 401, show(anon));
    expectEnvelope(anon);
  });

  s('a known path with a method it lacks is 405 METHOD_NOT_ALLOWED with an Allow header', async () => {
    const token = await c.token(ALL_SCOPES);
    const doc = await createDoc(token);
    const cases: [string, string, string[]][] = [
      ['DELETE', '/api/v1/documents', ['GET', 'POST']],
      ['PUT', '/api/v1/auth', ['GET']],
      ['PATCH', `/api/v1/documents/${doc.documentRef}`, ['GET']],
      ['DELETE', `/api/v1/documents/${doc.documentRef}`, ['GET']],
      ['GET', `/api/v1/documents/${doc.documentRef}/mutations`, ['POST']],
      ['GET', '/api/v1/proposals', ['POST']],
      ['PUT', '/api/v1/research-jobs', ['GET', 'POST']],
      ['POST', `/api/v1/public/artifacts/entity/kent_${a36(24)}/${hex(64)}`, ['GET']],
      ['GET', '/api/v1/library', ['POST']],
    ];
    for (const [method, path, allowed] of cases) {
      const r = await c.call(method, path, { token, key: newKey(), body: method === 'GET' ? undefined : {} });
      expectError(r, 405, 'METHOD_NOT_ALLOWED');
      const allow = (r.headers.get('allow') ?? '').split(',').map((x) => x.trim().toUpperCase());
      for (const m of allowed) assert.ok(allow.includes(m), `Allow of ${method} ${path} includes ${m}: ${r.headers.get('allow')}`);
      assert.not.ok(allow.includes(method), `Allow of ${path} does not offer ${method}`);
    }
  });
}
