/**
 * The API edge over a real socket: routing, envelopes, request ids, the order of checks,
 * authentication, scopes, budgets, activation, the operator API and the surfaces without a domain yet.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { manualClock } from '../clock.ts';
import { Patterns } from '../ids.ts';
import { ALL_SCOPES, startServer, type Reply, type TestServer } from '../../fixtures/http-kit.ts';
import { ErrorEnvelopeSchema, PrincipalEnvelopeSchema } from '../contract/response-schemas.ts';
import { specBody } from '../jobs/jobs-kit.ts';

/** The body conforms to a published response schema. */
function conforms(schema: v.GenericSchema, value: unknown): void {
  const r = v.safeParse(schema, value);
  assert.ok(r.success, r.success ? '' : JSON.stringify(r.issues.map((i) => [i.path?.map((p) => p.key).join('.'), i.message])));
}

const FIELD = /^(\$|[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*)$/;
const KEY = 'idem-key-0000000000000001';

/** Every error answer: the envelope, X-Request-Id equal to meta.requestId, the code and status. */
function assertError(r: Reply, status: number, code: string): void {
  assert.is(r.status, status, `status of ${r.text}`);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  assert.is(r.json.error.code, code, r.text);
  assert.type(r.json.error.message, 'string');
  assert.type(r.json.error.retryable, 'boolean');
  assert.is(r.json.meta.apiVersion, '1');
  assert.match(r.json.meta.requestId, Patterns.requestId);
  assert.is(r.headers['x-request-id'], r.json.meta.requestId);
  for (const fe of r.json.error.fieldErrors ?? []) assert.match(fe.field, FIELD);
  conforms(ErrorEnvelopeSchema, r.json);
  if (status === 429 || status === 503) {
    assert.match(String(r.headers['retry-after']), /^\d+$/);
    assert.type(r.json.error.retryAfterMs, 'number');
    assert.is(Number(r.headers['retry-after']), Math.ceil(r.json.error.retryAfterMs / 1000));
  }
}

function fieldsOf(r: Reply): string[] {
  return (r.json.error.fieldErrors ?? []).map((f: { field: string }) => f.field);
}

/** A minimal well-formed ProposalRequest. */
function proposal(pad = ''): Record<string, unknown> {
  return {
    v: 2,
    entities: [
      {
        key: 'ada',
        name: `Ada Lovelace${pad}`,
        description: null,
        language: 'en',
        identifiers: ['https://en.wikipedia.org/wiki/Ada_Lovelace', 'urn:isni:0000000121314739'],
        concepts: ['person'],
      },
    ],
    facts: [{ key: 'f1', subject: 'ada', predicate: 'name', stance: 'reports', object: { kind: 'string', value: 'Ada' } }],
    evidence: [
      { key: 'e1', factKey: 'f1', bearing: 'supports', selector: null, source: { kind: 'uri', uri: 'https://example.org/ada' } },
    ],
    inquiries: [{ key: 'q1', question: 'Who was Ada?', answerForm: 'person', language: 'en', parentKeys: [] }],
  };
}

/** A well-formed ResearchReportSpec for a new document. */
const SPEC = specBody({ question: 'What is the boiling point of water at altitude?', spaceRef: { kind: 'new-document', title: 'Boiling' } });

// ---------------------------------------------------------------------------------------------

const edge = suite<{ s: TestServer; all: string }>('api edge');

edge.before(async (ctx) => {
  ctx.s = await startServer();
  ctx.all = (await ctx.s.credential({ scopes: ALL_SCOPES })).token;
});
edge.after(async (ctx) => {
  await ctx.s.close();
});

edge('unknown /api/v1 path answers JSON 404 NOT_FOUND with a minted request id', async ({ s }) => {
  const r = await s.req('/api/v1/nope');
  assertError(r, 404, 'NOT_FOUND');
  assert.is(r.json.error.retryable, false);
  assertError(await s.req('/api/v1/documents/x/y/z'), 404, 'NOT_FOUND');
  assertError(await s.req('/api/v1/documents/'), 404, 'NOT_FOUND');
});

edge('paths outside /api/v1, /operator/v1, /openapi.json and the home page answer JSON 404 too', async ({ s }) => {
  for (const path of ['/api', '/index.html', '/api/v2/auth', '/operator/v1/nope', '/favicon.ico', '/documents']) {
    assertError(await s.req(path), 404, 'NOT_FOUND');
  }
});

edge('known path with a method it lacks answers 405 METHOD_NOT_ALLOWED with Allow', async ({ s }) => {
  let r = await s.req('/api/v1/documents', { method: 'DELETE', token: s.operatorKey });
  assertError(r, 405, 'METHOD_NOT_ALLOWED');
  assert.is(r.headers.allow, 'GET, HEAD, POST');
  r = await s.req('/api/v1/auth', { method: 'POST' });
  assertError(r, 405, 'METHOD_NOT_ALLOWED');
  assert.is(r.headers.allow, 'GET, HEAD');
  r = await s.req('/api/v1/search', { method: 'GET' });
  assert.is(r.headers.allow, 'POST');
  r = await s.req('/api/v1/proposals', { method: 'PUT' });
  assert.is(r.headers.allow, 'POST');
  r = await s.req('/operator/v1/activation', { method: 'DELETE' });
  assert.is(r.headers.allow, 'GET, HEAD, POST');
  r = await s.req('/api/v1/research-jobs/kjob_x/events', { method: 'POST' });
  assertError(r, 405, 'METHOD_NOT_ALLOWED');
  r = await s.req('/api/v1/auth', { method: 'OPTIONS' });
  assertError(r, 405, 'METHOD_NOT_ALLOWED');
});

edge('HEAD on a GET route answers the headers (with the GET Content-Length) without a body', async ({ s, all }) => {
  const get = await s.req('/openapi.json');
  const r = await s.req('/openapi.json', { method: 'HEAD' });
  assert.is(r.status, 200);
  assert.is(r.text, '');
  assert.is(r.headers['content-length'], String(Buffer.byteLength(get.text)));
  const auth = await s.req('/api/v1/auth', { method: 'HEAD', token: all });
  assert.is(auth.status, 200);
  assert.is(auth.text, '');
  assert.ok(auth.headers['x-service-requests-remaining']);
  const missing = await s.req('/api/v1/nope', { method: 'HEAD' });
  assert.is(missing.status, 404);
  assert.is(missing.text, '');
});

edge('X-Request-Id: minted always; a valid client id (16 and 128 chars) is echoed as meta.clientRequestId', async ({ s, all }) => {
  const plain = await s.req('/api/v1/auth', { token: all });
  assert.is(plain.status, 200);
  assert.match(String(plain.headers['x-request-id']), Patterns.requestId);
  assert.is(plain.json.meta.requestId, plain.headers['x-request-id']);
  assert.not.ok('clientRequestId' in plain.json.meta);
  const again = await s.req('/api/v1/auth', { token: all });
  assert.is.not(again.json.meta.requestId, plain.json.meta.requestId);
  for (const id of ['a'.repeat(16), `Z${'_-9'.repeat(42)}x`, '_leading-underscore-ok']) {
    const r = await s.req('/api/v1/auth', { token: all, headers: { 'x-request-id': id } });
    assert.is(r.status, 200, id);
    assert.is(r.json.meta.clientRequestId, id);
    assert.is.not(r.headers['x-request-id'], id, 'the server mints its own');
  }
  assert.is(`Z${'_-9'.repeat(42)}x`.length, 128);
});

edge('X-Request-Id of 15 or 129 characters, or with other characters, is 400 INVALID_REQUEST', async ({ s, all }) => {
  for (const id of ['a'.repeat(15), 'a'.repeat(129), 'has spaces in it ok?', 'abcdefghijklmnop.']) {
    const r = await s.req('/api/v1/auth', { token: all, headers: { 'x-request-id': id } });
    assertError(r, 400, 'INVALID_REQUEST');
    assert.equal(fieldsOf(r), ['X_Request_Id']);
    assert.not.ok('clientRequestId' in r.json.meta);
  }
});

edge('errors echo a valid client X-Request-Id too', async ({ s }) => {
  const r = await s.req('/api/v1/auth', { headers: { 'x-request-id': 'client-request-0001' } });
  assertError(r, 401, 'AUTH_REQUIRED');
  assert.is(r.json.meta.clientRequestId, 'client-request-0001');
});

edge('a Cookie together with a bearer token is 401 AUTH_AMBIGUOUS before anything else', async ({ s, all }) => {
  const cookie = { cookie: 'session=abc' };
  assertError(await s.req('/api/v1/auth', { token: all, headers: cookie }), 401, 'AUTH_AMBIGUOUS');
  // before routing, request-id validation and token validation
  assertError(await s.req('/api/v1/nope', { token: 'garbage', headers: cookie }), 401, 'AUTH_AMBIGUOUS');
  assertError(await s.req('/api/v1/auth', { method: 'DELETE', token: all, headers: { ...cookie, 'x-request-id': 'short' } }), 401, 'AUTH_AMBIGUOUS');
  assertError(
    await s.req(`/api/v1/public/artifacts/entity/kent_${'a'.repeat(24)}/${'0'.repeat(64)}`, { token: all, headers: cookie }),
    401,
    'AUTH_AMBIGUOUS',
  );
  // a cookie alone is not a credential of this API
  const r = await s.req('/api/v1/auth', { headers: cookie });
  assertError(r, 401, 'AUTH_REQUIRED');
});

edge('missing, malformed, unknown or wrong bearer tokens are 401 AUTH_REQUIRED with requiredAction authenticate', async ({ s, all }) => {
  const wrongSecret = all.slice(0, -2) + (all.endsWith('AA') ? 'BB' : 'AA');
  const unknown = `svc_agent_v1_scred_${'0'.repeat(24)}_${'x'.repeat(43)}`;
  const cases: Record<string, string>[] = [
    {},
    { authorization: 'Bearer' },
    { authorization: 'Basic dXNlcjpwYXNz' },
    { authorization: 'Bearer not-a-token' },
    { authorization: `Bearer ${unknown}` },
    { authorization: `Bearer ${wrongSecret}` },
    { authorization: `Bearer ${all} extra` },
  ];
  for (const headers of cases) {
    const r = await s.req('/api/v1/auth', { headers });
    assertError(r, 401, 'AUTH_REQUIRED');
    assert.is(r.json.error.requiredAction, 'authenticate');
    assert.is(r.headers['x-service-requests-remaining'], undefined);
  }
  const lower = await s.req('/api/v1/auth', { headers: { authorization: `bearer ${all}` } });
  assert.is(lower.status, 200, 'the scheme is case-insensitive');
});

edge('GET /api/v1/auth returns the Principal and charges the budget', async ({ s }) => {
  const cred = await s.credential({ scopes: ['document:read', 'library:read'], label: 'reader', requestBudget: 10 });
  const r = await s.req('/api/v1/auth', { token: cred.token });
  assert.is(r.status, 200);
  conforms(PrincipalEnvelopeSchema, r.json);
  const p = r.json.data;
  assert.is(p.v, 1);
  assert.is(p.credentialRef, cred.credentialRef);
  assert.match(p.displayPrefix, Patterns.displayPrefix);
  assert.is(p.displayPrefix, `svc_agent_v1_scred_${cred.credentialRef.slice(6, 14)}\u2026`);
  assert.is(p.label, 'reader');
  assert.equal(p.scopes, ['document:read', 'library:read']);
  assert.is(p.requestBudget, 10);
  assert.is(p.remainingBudget, 9);
  assert.is(p.expiresAt, cred.expiresAt);
  assert.match(p.expiresAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.not.ok('documentRef' in p);
  assert.not.ok('token' in p);
  assert.is(r.headers['x-service-requests-remaining'], '9');
  const again = await s.req('/api/v1/auth', { token: cred.token });
  assert.is(again.json.data.remainingBudget, 8);
  assert.is(again.headers['x-service-requests-remaining'], '8');
});

edge('a missing scope is 403 FORBIDDEN and is not charged', async ({ s }) => {
  const cred = await s.credential({ scopes: ['library:read'], requestBudget: 10 });
  const r = await s.req('/api/v1/documents', { token: cred.token });
  assertError(r, 403, 'FORBIDDEN');
  assert.is(r.headers['x-service-requests-remaining'], '10');
  assertError(await s.req('/api/v1/documents', { method: 'POST', token: cred.token, body: { v: 1, title: 't' } }), 403, 'FORBIDDEN');
  assertError(await s.req('/api/v1/research-jobs', { token: cred.token }), 403, 'FORBIDDEN');
  assertError(await s.req('/api/v1/proposals', { method: 'POST', token: cred.token, body: proposal() }), 403, 'FORBIDDEN');
  // Activation-blocked surfaces answer 503 to every authenticated request, whatever its scopes.
  assertError(await s.req('/api/v1/search', { method: 'POST', token: cred.token, body: {} }), 503, 'TEMPORARILY_UNAVAILABLE');
  assertError(await s.req(`/api/v1/reviews/krvw_${'0'.repeat(48)}`, { token: cred.token }), 503, 'TEMPORARILY_UNAVAILABLE');
  const p = await s.req('/api/v1/auth', { token: cred.token });
  assert.is(p.json.data.remainingBudget, 9, 'only GET /auth was charged');
});

edge('research job start: 410 FEATURE_RETIRED after auth, scope and validation; charged', async ({ s, all }) => {
  const ok = await s.req('/api/v1/research-jobs', { method: 'POST', token: all, headers: { 'idempotency-key': KEY }, body: SPEC });
  assertError(ok, 410, 'FEATURE_RETIRED');
  assert.is(ok.json.error.retryable, false);
  const before = Number(ok.headers['x-service-requests-remaining']);
  const missingKey = await s.req('/api/v1/research-jobs', { method: 'POST', token: all, body: SPEC });
  assertError(missingKey, 400, 'IDEMPOTENCY_REQUIRED');
  assert.is(Number(missingKey.headers['x-service-requests-remaining']), before - 1);
  const bad = await s.req('/api/v1/research-jobs', {
    method: 'POST',
    token: all,
    headers: { 'idempotency-key': KEY },
    body: { ...SPEC, profile: 'shallow', extra: 1 },
  });
  assertError(bad, 400, 'INVALID_REQUEST');
  assert.ok(fieldsOf(bad).includes('profile'));
  assert.ok(fieldsOf(bad).includes('extra'));
  const noDoc = await s.req('/api/v1/research-jobs', {
    method: 'POST',
    token: all,
    headers: { 'idempotency-key': KEY },
    body: { ...SPEC, spaceRef: { kind: 'document', documentRef: `sdoc_${'0'.repeat(48)}` } },
  });
  assertError(noDoc, 404, 'NOT_FOUND');
  const partial = await s.credential({ scopes: ['research:run', 'inquiry:create'] });
  assertError(
    await s.req('/api/v1/research-jobs', { method: 'POST', token: partial.token, headers: { 'idempotency-key': KEY }, body: SPEC }),
    403,
    'FORBIDDEN',
  );
  assertError(await s.req('/api/v1/research-jobs', { method: 'POST', body: SPEC }), 401, 'AUTH_REQUIRED');
});

edge('research reads without jobs: an empty page, 404 for unknown jobs, 400 for malformed cursors before the lookup, charged', async ({ s }) => {
  const cred = await s.credential({ scopes: ['research:read', 'research:run'], requestBudget: 50 });
  const job = `kjob_${'a'.repeat(48)}`;
  const list = await s.req('/api/v1/research-jobs', { token: cred.token });
  assert.is(list.status, 200);
  assert.equal(list.json.data, { items: [], nextCursor: null });
  assert.is(list.headers['x-service-requests-remaining'], '49');
  assertError(await s.req('/api/v1/research-jobs?limit=51', { token: cred.token }), 400, 'INVALID_REQUEST');
  assertError(await s.req('/api/v1/research-jobs?cursor=abc', { token: cred.token }), 400, 'INVALID_REQUEST');
  assertError(await s.req(`/api/v1/research-jobs/${job}`, { token: cred.token }), 404, 'NOT_FOUND');
  assertError(await s.req(`/api/v1/research-jobs/nonsense`, { token: cred.token }), 404, 'NOT_FOUND');
  assertError(await s.req(`/api/v1/research-jobs/${job}/events`, { token: cred.token }), 404, 'NOT_FOUND');
  assertError(await s.req(`/api/v1/research-jobs/${job}/events?after=x1`, { token: cred.token }), 400, 'INVALID_REQUEST');
  assertError(await s.req(`/api/v1/research-jobs/${job}/events`, { token: cred.token, headers: { 'last-event-id': '-3' } }), 400, 'INVALID_REQUEST');
  assertError(await s.req(`/api/v1/research-jobs/${job}/report`, { token: cred.token }), 400, 'INVALID_REQUEST');
  assertError(await s.req(`/api/v1/research-jobs/${job}/report?format=markdown`, { token: cred.token }), 404, 'NOT_FOUND');
  assertError(await s.req(`/api/v1/research-jobs/${job}/report?format=rich-json`, { token: cred.token }), 403, 'FORBIDDEN');
  const cancel = (headers: Record<string, string>, body: object) =>
    s.req(`/api/v1/research-jobs/${job}/cancellations`, { method: 'POST', token: cred.token, headers, body });
  assertError(await cancel({}, { v: 1 }), 400, 'IDEMPOTENCY_REQUIRED');
  assertError(await cancel({ 'idempotency-key': 'cancel-key-000000001' }, { v: 1 }), 428, 'PRECONDITION_REQUIRED');
  assertError(await cancel({ 'idempotency-key': 'cancel-key-000000001', 'service-if-revision': 'r1' }, { v: 1, extra: true }), 400, 'INVALID_REQUEST');
  assertError(await cancel({ 'idempotency-key': 'cancel-key-000000001', 'service-if-revision': 'r1' }, { v: 1 }), 404, 'NOT_FOUND');
  assertError(await s.req(`/api/v1/research-jobs/${job}`), 401, 'AUTH_REQUIRED');
  const readOnly = await s.credential({ scopes: ['research:read'] });
  assertError(await s.req(`/api/v1/research-jobs/${job}/cancellations`, { method: 'POST', token: readOnly.token, body: { v: 1 } }), 403, 'FORBIDDEN');
});

edge('public artifacts: anonymous; a well-formed locator is 404 (nothing released); malformed parts 400 or 404', async ({ s }) => {
  const rev = 'ab'.repeat(32);
  for (const [kind, prefix] of [
    ['entity', 'kent_'],
    ['inquiry', 'kinq_'],
    ['edition', 'kedn_'],
  ]) {
    const r = await s.req(`/api/v1/public/artifacts/${kind}/${prefix}${'a1'.repeat(12)}/${rev}`);
    assertError(r, 404, 'NOT_FOUND');
    assert.is(r.headers['x-service-requests-remaining'], undefined);
  }
  assertError(await s.req(`/api/v1/public/artifacts/person/kent_${'a'.repeat(24)}/${rev}`), 404, 'NOT_FOUND');
  let r = await s.req(`/api/v1/public/artifacts/entity/kinq_${'a'.repeat(24)}/${rev}`);
  assertError(r, 400, 'INVALID_REQUEST');
  assert.equal(fieldsOf(r), ['path.artifactId']);
  r = await s.req(`/api/v1/public/artifacts/edition/kedn_${'A'.repeat(24)}/${'AB'.repeat(32)}`);
  assertError(r, 400, 'INVALID_REQUEST');
  assert.equal(fieldsOf(r), ['path.artifactId', 'path.revision']);
  r = await s.req(`/api/v1/public/artifacts/entity/kent_${'a'.repeat(24)}/${'a'.repeat(63)}`);
  assert.equal(fieldsOf(r), ['path.revision']);
  const head = await s.req(`/api/v1/public/artifacts/entity/kent_${'a'.repeat(24)}/${rev}`, { method: 'HEAD' });
  assert.is(head.status, 404);
  assert.is(head.text, '');
});

edge('request bodies: 256 KB pass, one byte more is 400 INVALID_REQUEST on field $', async ({ s, all }) => {
  const base = JSON.stringify(proposal('#'));
  const exact = JSON.stringify(proposal('#'.repeat(256 * 1024 - base.length + 1)));
  assert.is(Buffer.byteLength(exact), 256 * 1024);
  const r1 = await s.req('/api/v1/proposals', { method: 'POST', token: all, headers: { 'idempotency-key': KEY, 'content-type': 'application/json' }, body: exact });
  assertError(r1, 409, 'AGENT_RUN_REQUIRED');
  const over = JSON.stringify(proposal('#'.repeat(256 * 1024 - base.length + 2)));
  const r2 = await s.req('/api/v1/proposals', { method: 'POST', token: all, headers: { 'idempotency-key': KEY, 'content-type': 'application/json' }, body: over });
  assertError(r2, 400, 'INVALID_REQUEST');
  assert.equal(fieldsOf(r2), ['$']);
  assert.match(r2.json.error.message, /256 KB/);
});

edge('JSON bodies: Content-Type must be JSON, the body must be present and parse', async ({ s, all }) => {
  const h = { 'idempotency-key': KEY };
  let r = await s.req('/api/v1/proposals', { method: 'POST', token: all, headers: { ...h, 'content-type': 'text/plain' }, body: '{}' });
  assertError(r, 400, 'INVALID_REQUEST');
  assert.equal(fieldsOf(r), ['Content_Type']);
  r = await s.req('/api/v1/proposals', { method: 'POST', token: all, headers: h, body: '{"v":2' });
  assertError(r, 400, 'INVALID_REQUEST');
  r = await s.req('/api/v1/proposals', { method: 'POST', token: all, headers: { ...h, 'content-type': 'application/json' }, body: '{"v":2' });
  assertError(r, 400, 'INVALID_REQUEST');
  assert.equal(fieldsOf(r), ['$']);
  r = await s.req('/api/v1/proposals', { method: 'POST', token: all, headers: h });
  assertError(r, 400, 'INVALID_REQUEST');
  assert.equal(fieldsOf(r), ['$']);
  r = await s.req('/api/v1/proposals', {
    method: 'POST',
    token: all,
    headers: { ...h, 'content-type': 'application/json' },
    body: new Uint8Array([0x7b, 0xff, 0x7d]),
  });
  assertError(r, 400, 'INVALID_REQUEST');
  r = await s.req('/api/v1/proposals', { method: 'POST', token: all, headers: { ...h, 'content-type': 'application/merge-patch+json; charset=utf-8' }, body: JSON.stringify(proposal()) });
  assertError(r, 409, 'AGENT_RUN_REQUIRED');
});

edge('proposals: well-formed → 409 AGENT_RUN_REQUIRED, malformed → 400, neither charged', async ({ s }) => {
  const cred = await s.credential({ scopes: ['knowledge:propose'], requestBudget: 5 });
  const send = (body: unknown, headers: Record<string, string> = { 'idempotency-key': KEY }) =>
    s.req('/api/v1/proposals', { method: 'POST', token: cred.token, headers, body: body as object });
  const r = await send(proposal());
  assertError(r, 409, 'AGENT_RUN_REQUIRED');
  assert.is(r.json.error.requiredAction, 'submit-through-research-job');
  assert.is(r.headers['x-service-requests-remaining'], '5');
  assertError(await send(proposal(), {}), 400, 'IDEMPOTENCY_REQUIRED');
  assertError(await send(proposal(), { 'idempotency-key': 'x'.repeat(15) }), 400, 'INVALID_REQUEST');
  let bad = await send({ ...proposal(), v: 1 });
  assertError(bad, 400, 'INVALID_REQUEST');
  assert.equal(fieldsOf(bad), ['v']);
  const p = proposal();
  (p.facts as Record<string, unknown>[])[0]!.subject = 'nobody';
  (p.evidence as Record<string, unknown>[])[0]!.factKey = 'f9';
  ((p.entities as Record<string, unknown>[])[0]!.identifiers as string[])[0] = 'ftp://example.org/x';
  (p.inquiries as Record<string, unknown>[])[0]!.parentKeys = ['q1'];
  bad = await send(p);
  assertError(bad, 400, 'INVALID_REQUEST');
  assert.equal(fieldsOf(bad).sort(), ['entities.0.identifiers.0', 'evidence.0.factKey', 'facts.0.subject', 'inquiries.0.parentKeys.0']);
  const wrongKind = proposal();
  (wrongKind.facts as Record<string, unknown>[])[0]!.object = { kind: 'colour', value: 'red' };
  bad = await send(wrongKind);
  assertError(bad, 400, 'INVALID_REQUEST');
  assert.ok(fieldsOf(bad).includes('facts.0.object.kind'));
  const tooMany = proposal();
  tooMany.entities = Array.from({ length: 33 }, (_, i) => ({ ...(proposal().entities as object[])[0]!, key: `e${i}` }));
  assertError(await send(tooMany), 400, 'INVALID_REQUEST');
  const auth = await s.req('/api/v1/auth', { token: cred.token });
  assert.is(auth.json.data.remainingBudget, 4, 'only GET /auth was charged');
});

edge('openapi.json is served anonymously and omits the operator API', async ({ s }) => {
  const r = await s.req('/openapi.json');
  assert.is(r.status, 200);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  assert.match(r.json.openapi, /^3\.1/);
  assert.is(r.json.info.version, '1.0.0');
  assert.ok(r.headers['x-request-id']);
  assert.not.ok(Object.keys(r.json.paths ?? {}).some((p) => p.startsWith('/operator')));
});

edge.run();

// ---------------------------------------------------------------------------------------------

const operator = suite<{ s: TestServer }>('operator api');
operator.before(async (ctx) => {
  ctx.s = await startServer();
});
operator.after(async (ctx) => {
  await ctx.s.close();
});

operator('missing or wrong operator key is 401; a credential token is not an operator key', async ({ s }) => {
  const body = { label: 'x', scopes: ['document:read'] };
  assertError(await s.req('/operator/v1/credentials', { method: 'POST', body }), 401, 'AUTH_REQUIRED');
  assertError(await s.req('/operator/v1/credentials', { method: 'POST', body, token: `${s.operatorKey}x` }), 401, 'AUTH_REQUIRED');
  const cred = await s.credential({ scopes: ['document:read'] });
  assertError(await s.req('/operator/v1/activation', { token: cred.token }), 401, 'AUTH_REQUIRED');
  assertError(await s.req('/api/v1/auth', { token: s.operatorKey }), 401, 'AUTH_REQUIRED');
});

operator('POST /operator/v1/credentials: 201 with the token shown once and the credential fields', async ({ s }) => {
  const r = await s.req('/operator/v1/credentials', {
    method: 'POST',
    token: s.operatorKey,
    body: { account: 'acme', label: 'ci agent', scopes: ['document:read', 'document:write'], requestBudget: 42, expiresInDays: 7 },
  });
  assert.is(r.status, 201);
  const d = r.json.data;
  assert.match(d.token, /^svc_agent_v1_scred_[a-f0-9]{24}_[A-Za-z0-9_-]{32,}$/);
  assert.match(d.credentialRef, Patterns.credentialRef);
  assert.is(d.token.slice(19, 43), d.credentialRef.slice(6));
  assert.match(d.displayPrefix, Patterns.displayPrefix);
  assert.is(d.accountId, 'acme');
  assert.is(d.label, 'ci agent');
  assert.equal(d.scopes, ['document:read', 'document:write']);
  assert.is(d.requestBudget, 42);
  assert.is(d.documentRef, null);
  const days = (Date.parse(d.expiresAt) - Date.parse(d.createdAt)) / 86_400_000;
  assert.is(days, 7);
  assert.is(r.headers['x-service-requests-remaining'], undefined);
  const def = await s.credential({ scopes: ['document:read'] });
  assert.is(def.accountId, 'owner');
  assert.is(def.requestBudget, 10_000);
  assert.is((Date.parse(def.expiresAt as string) - Date.parse(def.createdAt as string)) / 86_400_000, 90);
});

operator('POST /operator/v1/credentials validates with fieldErrors; an unknown documentRef is 404', async ({ s }) => {
  let r = await s.req('/operator/v1/credentials', {
    method: 'POST',
    token: s.operatorKey,
    body: { label: 'x'.repeat(81), scopes: ['document:read', 'root'], requestBudget: 0, expiresInDays: 91, extra: true },
  });
  assertError(r, 400, 'INVALID_REQUEST');
  assert.equal(fieldsOf(r).sort(), ['expiresInDays', 'extra', 'label', 'requestBudget', 'scopes.1']);
  r = await s.req('/operator/v1/credentials', { method: 'POST', token: s.operatorKey, body: { scopes: [] } });
  assert.equal(fieldsOf(r).sort(), ['label', 'scopes']);
  for (const [field, ok, bad] of [
    ['requestBudget', 10_000, 10_001],
    ['requestBudget', 1, 0],
    ['expiresInDays', 90, 91],
    ['expiresInDays', 1, 0],
  ] as const) {
    const good = await s.req('/operator/v1/credentials', { method: 'POST', token: s.operatorKey, body: { label: 'x', scopes: ['document:read'], [field]: ok } });
    assert.is(good.status, 201, `${field}=${ok}`);
    const wrong = await s.req('/operator/v1/credentials', { method: 'POST', token: s.operatorKey, body: { label: 'x', scopes: ['document:read'], [field]: bad } });
    assertError(wrong, 400, 'INVALID_REQUEST');
  }
  r = await s.req('/operator/v1/credentials', {
    method: 'POST',
    token: s.operatorKey,
    body: { label: 'x', scopes: ['document:read'], documentRef: `sdoc_${'0'.repeat(48)}` },
  });
  assertError(r, 404, 'NOT_FOUND');
});

operator('activation: GET and POST answer the whole state; bad values are 400', async ({ s }) => {
  let r = await s.req('/operator/v1/activation', { token: s.operatorKey });
  assert.is(r.status, 200);
  assert.equal(r.json.data, { search: false, reviews: false, proposals: true });
  r = await s.req('/operator/v1/activation', { method: 'POST', token: s.operatorKey, body: { reviews: true } });
  assert.equal(r.json.data, { search: false, reviews: true, proposals: true });
  r = await s.req('/operator/v1/activation', { method: 'POST', token: s.operatorKey, body: {} });
  assert.equal(r.json.data, { search: false, reviews: true, proposals: true });
  r = await s.req('/operator/v1/activation', { method: 'POST', token: s.operatorKey, body: { search: 'yes', billing: true } });
  assertError(r, 400, 'INVALID_REQUEST');
  assert.equal(fieldsOf(r).sort(), ['billing', 'search']);
});

operator('the operator API is disabled without an operator key', async () => {
  const { createApiHandler } = await import('./handler.ts');
  const { createEngine } = await import('../engine.ts');
  const { memoryStorage } = await import('../../adapters/memory/index.ts');
  const engine = createEngine({ storage: memoryStorage() });
  const handler = createApiHandler({ engine });
  const r = await handler({ method: 'POST', url: '/operator/v1/activation', headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, body: new TextEncoder().encode('{}') });
  assert.is(r.status, 401);
  await engine.close();
});

operator.run();

// ---------------------------------------------------------------------------------------------

const switches = suite('activation switches');

switches('search and reviews are activation-blocked by default: 503 with Retry-After, uncharged; after activation they answer', async () => {
  const s = await startServer();
  try {
    const cred = await s.credential({ scopes: ['public:read', 'knowledge:read', 'review:read'], requestBudget: 3 });
    const review = `/api/v1/reviews/krvw_${'1'.repeat(48)}`;
    for (let i = 0; i < 5; i++) {
      const r = await s.req('/api/v1/search', { method: 'POST', token: cred.token, body: { scope: { kind: 'public' } } });
      assertError(r, 503, 'TEMPORARILY_UNAVAILABLE');
      assert.match(r.json.error.message, /not activated/);
      assert.is(r.headers['x-service-requests-remaining'], '3');
      assertError(await s.req(review, { token: cred.token }), 503, 'TEMPORARILY_UNAVAILABLE');
    }
    assertError(await s.req('/api/v1/search', { method: 'POST', body: {} }), 401, 'AUTH_REQUIRED');
    await s.req('/operator/v1/activation', { method: 'POST', token: s.operatorKey, body: { search: true, reviews: true } });
    const r = await s.req('/api/v1/search', { method: 'POST', token: cred.token, body: { v: 1, scope: { kind: 'public' }, query: 'anything' } });
    assert.is(r.status, 200);
    assert.equal(r.json.data, { items: [], nextCursor: null });
    assertError(await s.req(review, { token: cred.token }), 404, 'NOT_FOUND');
    const p = await s.req('/api/v1/auth', { token: cred.token });
    assert.is(p.json.data.remainingBudget, 0);
  } finally {
    await s.close();
  }
});

switches('proposals blocked by the operator: 503 for every authenticated request, uncharged', async () => {
  const s = await startServer();
  try {
    const cred = await s.credential({ scopes: ['knowledge:propose'], requestBudget: 2 });
    const r0 = await s.req('/operator/v1/activation', { method: 'POST', token: s.operatorKey, body: { proposals: false } });
    assert.equal(r0.json.data, { search: false, reviews: false, proposals: false });
    for (const body of [proposal(), { junk: true }]) {
      const r = await s.req('/api/v1/proposals', { method: 'POST', token: cred.token, body });
      assertError(r, 503, 'TEMPORARILY_UNAVAILABLE');
      assert.is(r.headers['x-service-requests-remaining'], '2');
    }
    await s.req('/operator/v1/activation', { method: 'POST', token: s.operatorKey, body: { proposals: true } });
    const r = await s.req('/api/v1/proposals', { method: 'POST', token: cred.token, headers: { 'idempotency-key': KEY }, body: proposal() });
    assertError(r, 409, 'AGENT_RUN_REQUIRED');
  } finally {
    await s.close();
  }
});

switches('activationOverrides of the embedding program take precedence', async () => {
  const s = await startServer({ activationOverrides: { search: true } });
  try {
    const cred = await s.credential({ scopes: ['public:read'] });
    const r = await s.req('/api/v1/search', { method: 'POST', token: cred.token, body: { v: 1, scope: { kind: 'public' }, query: 'x' } });
    assert.is(r.status, 200);
    const st = await s.req('/operator/v1/activation', { method: 'POST', token: s.operatorKey, body: { search: false } });
    assert.is(st.json.data.search, true);
  } finally {
    await s.close();
  }
});

switches.run();

// ---------------------------------------------------------------------------------------------

const budgets = suite('budgets');

budgets('requestBudget 3: three requests pass, the fourth is 429 RATE_LIMITED with Retry-After to the window end', async () => {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const s = await startServer({ clock, budgetWindowMs: 60_000 });
  try {
    const cred = await s.credential({ scopes: ['document:read'], requestBudget: 3 });
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await s.req('/api/v1/auth', { token: cred.token });
      assert.is(r.status, 200);
      remaining.push(String(r.headers['x-service-requests-remaining']));
    }
    assert.equal(remaining, ['2', '1', '0']);
    clock.advance(15_000);
    const r = await s.req('/api/v1/documents', { token: cred.token });
    assertError(r, 429, 'RATE_LIMITED');
    assert.is(r.json.error.retryAfterMs, 45_000);
    assert.is(r.headers['retry-after'], '45');
    assert.is(r.json.error.retryable, true);
    assert.is(r.headers['x-service-requests-remaining'], '0');
    // free operations stay free and answer their own status
    assertError(await s.req('/api/v1/search', { method: 'POST', token: cred.token, body: {} }), 503, 'TEMPORARILY_UNAVAILABLE');
    clock.advance(45_000);
    const after = await s.req('/api/v1/auth', { token: cred.token });
    assert.is(after.status, 200);
    assert.is(after.json.data.remainingBudget, 2);
  } finally {
    await s.close();
  }
});

budgets('expired credentials are 401 AUTH_REQUIRED', async () => {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const s = await startServer({ clock });
  try {
    const cred = await s.credential({ scopes: ['document:read'], expiresInDays: 1 });
    assert.is((await s.req('/api/v1/auth', { token: cred.token })).status, 200);
    clock.advance(86_400_000);
    const r = await s.req('/api/v1/auth', { token: cred.token });
    assertError(r, 401, 'AUTH_REQUIRED');
    assert.match(r.json.error.message, /expired/);
  } finally {
    await s.close();
  }
});

budgets.run();

// ---------------------------------------------------------------------------------------------

const faults = suite('faults');

faults('an unexpected throwable is 500 INTERNAL_ERROR, logged once with the requestId', async () => {
  const s = await startServer({
    patchEngine(engine) {
      (engine.documents as { list: unknown }).list = async () => {
        throw new TypeError('boom');
      };
    },
  });
  try {
    const cred = await s.credential({ scopes: ['document:read'] });
    const r = await s.req('/api/v1/documents', { token: cred.token });
    assertError(r, 500, 'INTERNAL_ERROR');
    assert.is(r.json.error.retryable, true);
    assert.not.ok(r.text.includes('boom'), 'internals do not leak');
    assert.is(s.logs.length, 1);
    const line = s.logs[0] as Record<string, unknown>;
    assert.is(line.requestId, r.json.meta.requestId);
    assert.is(line.error, 'boom');
  } finally {
    await s.close();
  }
});

faults('odd requests in-process: absolute-form URLs route; prototype names are not methods', async () => {
  const { createApiHandler } = await import('./handler.ts');
  const { createEngine } = await import('../engine.ts');
  const { memoryStorage } = await import('../../adapters/memory/index.ts');
  const engine = createEngine({ storage: memoryStorage() });
  try {
    const handler = createApiHandler({ engine, log: () => undefined });
    const abs = await handler({ method: 'GET', url: 'http://example.test/openapi.json', headers: {}, body: null });
    assert.is(abs.status, 200);
    for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const r = await handler({ method, url: '/api/v1/auth', headers: {}, body: null });
      assert.is(r.status, 405, method);
      assert.is(r.headers.allow, 'GET, HEAD');
    }
    const weird = await handler({ method: 'GET', url: '/api/v1/documents/%ZZ', headers: {}, body: null });
    assert.is(weird.status, 401);
  } finally {
    await engine.close();
  }
});

faults.run();
