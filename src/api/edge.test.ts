/**
 * The edge's own rules over a real socket (decisions.md "Every answer under /api/v1"): X-Request-Id
 * on every answer (the unknown-path 404 and the 405 included), nosniff on JSON, no-store on private
 * answers, no framing of HTML pages, the OpenAPI document's own schema, the events cursor when both
 * `after` and Last-Event-ID are sent, the typed inputs (limit), and what is published about the
 * 256-block cap and the failed job's report. Every answer also passes the contract check of the
 * test server (fixtures/contract-check.ts: each one validated against the published document).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startServer, type Reply } from '../../fixtures/http-kit.ts';
import { HAPPY_STEPS, ScriptedRunner, specBody, until } from '../jobs/jobs-kit.ts';
import { Limits } from '../documents/schemas.ts';
import { buildOpenApi } from './openapi.ts';

const CLIENT_ID = 'client-request-id-0001';
const BAD_ID = 'short';
let keys = 0;
const key = () => `edge-test-key-${String(++keys).padStart(8, '0')}`;

function assertEchoed(r: Reply, status: number, code: string): void {
  assert.is(r.status, status, r.text);
  assert.is(r.json.error.code, code, r.text);
  assert.is(r.json.meta.clientRequestId, CLIENT_ID, 'meta.clientRequestId echoes X-Request-Id');
}

test('X-Request-Id is checked and echoed on every answer: the unknown-path 404, the 405, the AUTH_AMBIGUOUS 401', async () => {
  const s = await startServer();
  try {
    const headers = { 'x-request-id': CLIENT_ID };
    assertEchoed(await s.req('/api/v1/nothing-here', { headers }), 404, 'NOT_FOUND');
    const notAllowed = await s.req('/api/v1/auth', { method: 'DELETE', headers });
    assertEchoed(notAllowed, 405, 'METHOD_NOT_ALLOWED');
    assert.match(String(notAllowed.headers.allow), /GET/);
    assertEchoed(await s.req('/api/v1/auth', { headers: { ...headers, cookie: 'session=x', authorization: 'Bearer x' } }), 401, 'AUTH_AMBIGUOUS');
    for (const [path, method] of [['/api/v1/nothing-here', 'GET'], ['/api/v1/auth', 'DELETE'], ['/api/v1/documents', 'GET']] as const) {
      const bad = await s.req(path, { method, headers: { 'x-request-id': BAD_ID } });
      assert.is(bad.status, 400, `${method} ${path}: ${bad.text}`);
      assert.equal(bad.json.error.fieldErrors.map((f: { field: string }) => f.field), ['X_Request_Id']);
      assert.is(bad.json.meta.clientRequestId, undefined, 'a malformed id is not echoed');
    }
  } finally {
    await s.close();
  }
});

test('JSON answers carry nosniff; private answers no-store; public ones keep their own caching', async () => {
  const s = await startServer();
  try {
    const { token } = await s.credential({ scopes: ['document:create', 'document:read'] });
    const auth = await s.req('/api/v1/auth', { token });
    assert.is(auth.status, 200);
    assert.is(auth.headers['x-content-type-options'], 'nosniff');
    assert.is(auth.headers['cache-control'], 'no-store');
    const created = await s.req('/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Edge' } });
    assert.is(created.headers['cache-control'], 'no-store');
    const ref = created.json.data.documentRef;
    const read = await s.req(`/api/v1/documents/${ref}`, { token });
    assert.is(read.headers['cache-control'], 'no-store');
    const denied = await s.req('/api/v1/auth');
    assert.is(denied.status, 401);
    assert.is(denied.headers['x-content-type-options'], 'nosniff');
    assert.is(denied.headers['cache-control'], 'no-store', 'an answer of a private operation, even an error');
    const unknown = await s.req('/api/v1/nothing-here');
    assert.is(unknown.headers['x-content-type-options'], 'nosniff');
    const openapi = await s.req('/openapi.json');
    assert.is(openapi.headers['x-content-type-options'], 'nosniff');
    assert.is(openapi.headers['cache-control'], 'public, max-age=300');
    const operator = await s.req('/operator/v1/activation', { headers: { authorization: `Bearer ${s.operatorKey}` } });
    assert.is(operator.headers['cache-control'], 'no-store');
  } finally {
    await s.close();
  }
});

test("HTML pages carry frame-ancestors 'none' and X-Frame-Options: DENY", async () => {
  const s = await startServer();
  try {
    const pages = [
      await s.req(`/documents/sdoc_${'a'.repeat(48)}`),
      await s.req(`/k/entity/kent_${'0'.repeat(24)}/${'0'.repeat(64)}`),
      await s.req(`/reviews/krvw_${'a'.repeat(48)}`),
    ];
    for (const page of pages) {
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'/, 'the page keeps its own policy');
      assert.is(page.headers['x-frame-options'], 'DENY');
    }
    assert.is(pages[0]!.status, 401);
    assert.is(pages[1]!.status, 404);
  } finally {
    await s.close();
  }
});

test('/openapi.json publishes its own 200 body as an object schema, and the body it serves validates against it', async () => {
  const s = await startServer();
  try {
    const r = await s.req('/openapi.json');
    assert.is(r.status, 200);
    const published = r.json.paths['/openapi.json'].get.responses['200'].content['application/json'].schema;
    const name = String(published.$ref).replace('#/components/schemas/', '');
    assert.is(r.json.components.schemas[name].type, 'object');
    assert.equal(r.json.components.schemas[name].required.sort(), ['components', 'info', 'openapi', 'paths']);
  } finally {
    await s.close(); // the contract check validated the served document against that schema
  }
});

test('typed inputs at the edge: limit is one rule (1-50, default 20) for every list, named query.limit', async () => {
  const s = await startServer();
  try {
    const { token } = await s.credential({ scopes: ['document:read', 'research:read'] });
    for (const list of ['/api/v1/documents', '/api/v1/research-jobs']) {
      for (const bad of ['0', '51', 'x', '1.5', '-1', '', '007a']) {
        const r = await s.req(`${list}?limit=${bad}`, { token });
        assert.is(r.status, 400, `${list} limit=${bad}`);
        assert.equal(r.json.error.fieldErrors.map((f: { field: string }) => f.field), ['query.limit']);
      }
      assert.is((await s.req(`${list}?limit=50`, { token })).status, 200);
      assert.is((await s.req(list, { token })).status, 200);
      const cursor = await s.req(`${list}?cursor=not-a-cursor`, { token });
      assert.equal(cursor.json.error.fieldErrors.map((f: { field: string }) => f.field), ['query.cursor']);
    }
  } finally {
    await s.close();
  }
});

test('GET …/events: an invalid `after` is 400 even when Last-Event-ID is also sent', async () => {
  const runner = new ScriptedRunner(HAPPY_STEPS, true);
  const s = await startServer({ engine: { runner } });
  try {
    const { token } = await s.credential({ scopes: ['research:read', 'research:run', 'inquiry:create', 'knowledge:propose'] });
    const started = await s.req('/api/v1/research-jobs', { method: 'POST', token, headers: { 'idempotency-key': key() }, body: specBody() });
    assert.is(started.status, 202, started.text);
    const jobId = started.json.data.jobId;
    const events = `/api/v1/research-jobs/${jobId}/events`;
    await until(async () => (await s.req(`/api/v1/research-jobs/${jobId}`, { token })).json.data.state === 'succeeded', 'the job succeeds');
    const all = (await s.req(events, { token })).json.data.items;
    assert.ok(all.length >= 2);
    const first = all[0].eventId;
    assert.is((await s.req(`${events}?after=${first}`, { token, headers: { 'last-event-id': first } })).status, 200, 'both valid');
    for (const after of ['true', encodeURIComponent('٣'), '-1', '99999999']) {
      const r = await s.req(`${events}?after=${after}`, { token, headers: { 'last-event-id': first } });
      assert.is(r.status, 400, `after=${after} with Last-Event-ID: ${r.text}`);
      assert.equal(r.json.error.fieldErrors.map((f: { field: string }) => f.field), ['query.after']);
    }
    const header = await s.req(events, { token, headers: { 'last-event-id': 'x' } });
    assert.equal(header.json.error.fieldErrors.map((f: { field: string }) => f.field), ['Last_Event_ID']);
  } finally {
    await s.close();
  }
});

test('the 256-block cap of one create and the failed job’s report answer are published and answered', async () => {
  const doc = buildOpenApi() as Record<string, any>;
  const mutate = doc.paths['/api/v1/documents/{documentRef}/mutations'].post;
  assert.match(mutate.description, new RegExp(`at most ${Limits.affectedMax} blocks counting their children`));
  assert.match(mutate.responses['400'].description, new RegExp(`more than ${Limits.affectedMax} blocks`));
  const report = doc.paths['/api/v1/research-jobs/{jobId}/report'].get;
  assert.match(report.responses['409'].description, /CONFLICT \(not retryable\): the job ended failed or cancelled without a report/);

  const runner = new ScriptedRunner([(ctx) => ctx.fail({ message: 'No sources found' })], true);
  const s = await startServer({ engine: { runner } });
  try {
    const { token } = await s.credential({ scopes: ['research:read', 'research:run', 'inquiry:create', 'knowledge:propose', 'document:create', 'document:read', 'document:write'] });
    const started = await s.req('/api/v1/research-jobs', { method: 'POST', token, headers: { 'idempotency-key': key() }, body: specBody() });
    const jobId = started.json.data.jobId;
    await until(async () => (await s.req(`/api/v1/research-jobs/${jobId}`, { token })).json.data.state === 'failed', 'the job fails');
    const r = await s.req(`/api/v1/research-jobs/${jobId}/report?format=markdown`, { token });
    assert.is(r.status, 409);
    assert.is(r.json.error.code, 'CONFLICT');
    assert.is(r.json.error.retryable, false);

    const created = await s.req('/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Cap' } });
    const ref = created.json.data.documentRef;
    const child = { type: 'paragraph', markdown: 'c' };
    // 50 top-level blocks with 5 children each: 300 blocks in one create.
    const blocks = Array.from({ length: Limits.createBlocksMax }, () => ({ type: 'bulletListItem', markdown: 'p', children: Array.from({ length: 5 }, () => child) }));
    const tooMany = await s.req(`/api/v1/documents/${ref}/mutations`, {
      method: 'POST',
      token,
      headers: { 'idempotency-key': key(), 'service-if-revision': created.headers['service-revision'] as string },
      body: { v: 1, intent: 'too many', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks } },
    });
    assert.is(tooMany.status, 400, tooMany.text);
    assert.equal(tooMany.json.error.fieldErrors.map((f: { field: string }) => f.field), ['mutation.blocks']);
    assert.is((await s.req(`/api/v1/documents/${ref}`, { token })).headers['service-revision'], created.headers['service-revision'], 'nothing was written');
  } finally {
    await s.close();
  }
});

test.run();
