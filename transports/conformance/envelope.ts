/**
 * API scenarios (see ./suite.ts): Envelopes, request ids and the principal of GET /auth.
 * @module
 */
import * as assert from 'uvu/assert';
import { DOC_SCOPES, F, apiErrorProblems, hex } from './client.ts';
import { show, expectError, expectOk, DAY } from './assert.ts';
import type { Kit, Suite } from './scenario-kit.ts';


/** Register these scenarios on the suite. */
export function envelopeScenarios(s: Suite, k: Kit): void {
  const { c, createDoc } = k;

  // ---- envelopes ----------------------------------------------------------------------------

  s('a success answer is {data, meta} with apiVersion "1", a server-minted requestId and a matching X-Request-Id', async () => {
    const token = await c.token(['document:read']);
    const a = await c.call('GET', '/api/v1/auth', { token });
    expectOk(a);
    assert.is(a.json.meta.apiVersion, '1');
    assert.match(a.json.meta.requestId, F.requestId);
    assert.is(a.headers.get('x-request-id'), a.json.meta.requestId);
    assert.not.ok('clientRequestId' in a.json.meta, 'no clientRequestId without an X-Request-Id');
    const b = await c.call('GET', '/api/v1/auth', { token });
    assert.is.not(b.json.meta.requestId, a.json.meta.requestId, 'every answer has its own requestId');
  });

  s('an error answer is {error, meta} with code, message and retryable, and X-Request-Id equals meta.requestId', async () => {
    const r = await c.call('GET', '/api/v1/auth');
    const error = expectError(r, 401, 'AUTH_REQUIRED');
    assert.type(error.message, 'string');
    assert.type(error.retryable, 'boolean');
    assert.equal(Object.keys(r.json).sort(), ['error', 'meta']);
    assert.equal(apiErrorProblems(error), []);
  });

  s('a client X-Request-Id is echoed as meta.clientRequestId while requestId stays server-minted', async () => {
    const token = await c.token(['document:read']);
    const mine = `client-${hex(20)}`;
    const r = await c.call('GET', '/api/v1/auth', { token, headers: { 'X-Request-Id': mine } });
    expectOk(r);
    assert.is(r.json.meta.clientRequestId, mine);
    assert.is.not(r.json.meta.requestId, mine, 'meta.requestId is always server-minted');
    assert.is(r.headers.get('x-request-id'), r.json.meta.requestId, 'X-Request-Id is the server-minted id');
    // Conventions 3 does not limit the echo to successes.
    const e = await c.call('GET', '/api/v1/documents/sdoc_' + hex(48), { token, headers: { 'X-Request-Id': mine } });
    expectError(e, 404, 'NOT_FOUND');
    assert.is(e.json.meta.clientRequestId, mine, 'error envelopes echo clientRequestId too');
    assert.is.not(e.json.meta.requestId, mine);
  });

  s('X-Request-Id of 16 and 128 characters is accepted; 15, 129 or a foreign character is 400 INVALID_REQUEST', async () => {
    const token = await c.token(['document:read']);
    for (const len of [16, 128]) {
      const id = `r${'a'.repeat(len - 1)}`;
      const r = await c.call('GET', '/api/v1/auth', { token, headers: { 'X-Request-Id': id } });
      expectOk(r);
      assert.is(r.json.meta.clientRequestId, id, `${len}-char id echoed`);
    }
    for (const id of ['r'.repeat(15), 'r'.repeat(129), 'request.id.with.dots']) {
      expectError(await c.call('GET', '/api/v1/auth', { token, headers: { 'X-Request-Id': id } }), 400, 'INVALID_REQUEST');
    }
  });
  // ---- GET /auth ----------------------------------------------------------------------------

  s('operator-created token has the documented format and is shown once', async () => {
    const cred = await c.credential({ scopes: ['document:read'], account: c.account(), label: 'format check' });
    const m = F.token.exec(cred.token);
    assert.ok(m, `token ${cred.token} is svc_agent_v1_scred_<24 hex>_<32+ base64url>`);
    assert.match(cred.credentialRef, F.credentialRef);
    assert.is(`scred_${m![1]}`, cred.credentialRef, 'the token carries the 24 hex of its credentialRef');
    assert.match(cred.displayPrefix, F.displayPrefix);
    assert.match(cred.expiresAt, F.timestamp);
    const principal = expectOk(await c.call('GET', '/api/v1/auth', { token: cred.token }));
    assert.not.ok(JSON.stringify(principal).includes(cred.token), 'GET /auth never shows the token again');
  });

  s('GET /auth returns the Principal with contract formats', async () => {
    const label = 'Principal check';
    const scopes = ['document:read', 'document:create', 'knowledge:read'];
    const cred = await c.credential({ scopes, account: c.account(), label, requestBudget: 500 });
    const r = await c.call('GET', '/api/v1/auth', { token: cred.token });
    const d = expectOk(r);
    for (const k of ['v', 'credentialRef', 'displayPrefix', 'label', 'scopes', 'requestBudget', 'remainingBudget', 'expiresAt']) assert.ok(k in d, `Principal.${k}`);
    assert.is(d.v, 1);
    assert.match(d.credentialRef, F.credentialRef);
    assert.is(d.credentialRef, cred.credentialRef);
    assert.is(d.displayPrefix.length, 28, 'displayPrefix is exactly 28 characters');
    assert.match(d.displayPrefix, F.displayPrefix);
    assert.ok(d.displayPrefix.startsWith('svc_agent_v1_scred_'));
    assert.ok(d.displayPrefix.endsWith('\u2026'), 'ends with U+2026');
    assert.is(d.displayPrefix, cred.displayPrefix);
    assert.is(d.label, label);
    assert.ok(d.label.length <= 80);
    assert.equal([...d.scopes].sort(), [...scopes].sort());
    assert.is(d.requestBudget, 500);
    assert.ok(Number.isInteger(d.remainingBudget) && d.remainingBudget >= 0 && d.remainingBudget <= 500, 'remainingBudget 0-requestBudget');
    // Whether this very request is already deducted is not stated: accept both.
    assert.ok(d.remainingBudget === 500 || d.remainingBudget === 499, `remainingBudget ${d.remainingBudget} right after creation`);
    assert.match(d.expiresAt, F.timestamp);
    const left = Date.parse(d.expiresAt) - Date.now();
    assert.ok(left <= 90 * DAY + 60_000, 'expiresAt within the 90-day ceiling');
    assert.ok(left >= 89 * DAY, 'default expiry is 90 days');
    if ('spaceRef' in d) assert.match(d.spaceRef, F.spaceRef);
    assert.not.ok('documentRef' in d, 'an account-wide credential has no documentRef');
    const header = r.headers.get('x-service-requests-remaining');
    assert.ok(header !== null && /^\d+$/.test(header), 'X-Service-Requests-Remaining on GET /auth');
    assert.is(Number(header), d.remainingBudget, 'header and body report the same remaining budget');
  });

  s('GET /auth of a document-bound credential carries its documentRef and browserHref', async () => {
    const account = c.account();
    const owner = (await c.credential({ scopes: DOC_SCOPES, account })).token;
    const doc = await createDoc(owner);
    const bound = await c.credential({ scopes: ['document:read', 'document:write'], account, documentRef: doc.documentRef, expiresInDays: 1 });
    const d = expectOk(await c.call('GET', '/api/v1/auth', { token: bound.token }));
    assert.is(d.documentRef, doc.documentRef);
    assert.type(d.browserHref, 'string');
    assert.ok(d.browserHref.length >= 1 && d.browserHref.length <= 2048);
    const left = Date.parse(d.expiresAt) - Date.now();
    assert.ok(left > DAY - 120_000 && left <= DAY + 60_000, 'expiresInDays 1 gives about one day');
  });

  s('operator credential creation refuses a budget outside 1-10000 and a lifetime over 90 days', async () => {
    for (const extra of [{ requestBudget: 0 }, { requestBudget: 10001 }, { expiresInDays: 91 }, { expiresInDays: 0 }]) {
      const r = await c.operator('/operator/v1/credentials', { account: c.account(), label: 'x', scopes: ['document:read'], ...extra });
      assert.is(r.status, 400, `${JSON.stringify(extra)}: ${show(r)}`);
    }
    const ok = await c.operator('/operator/v1/credentials', { account: c.account(), label: 'x', scopes: ['document:read'], requestBudget: 10000, expiresInDays: 90 });
    assert.is(ok.status, 201, show(ok));
  });
}
