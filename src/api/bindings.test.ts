import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startServer } from '../../fixtures/http-kit.ts';
import { declaredStatuses, type AnyOperation } from '../contract/define.ts';
import { contract, contractOperations } from '../contract/operations.ts';
import { buildOpenApi } from './openapi.ts';
import { listBindings } from './bindings.ts';

type Json = Record<string, any>;
const doc = buildOpenApi() as Json;
const ops = contractOperations;

test('every contract entry has exactly one binding, and every binding binds a contract entry', () => {
  const bound = listBindings().map((b) => b.operation);
  for (const op of contractOperations) assert.is(bound.filter((b) => b === op).length, 1, `${op.operationId} is bound once`);
  for (const op of bound) assert.ok(contractOperations.includes(op), `${op.operationId} is a contract entry`);
  assert.is(bound.length, contractOperations.length);
  for (const [id, op] of Object.entries(contract)) assert.is(op.operationId, id, 'the contract is keyed by operationId');
});

test('operation ids are unique and every (method, path) is declared once', () => {
  const ids = ops.map((op) => op.operationId);
  assert.is(new Set(ids).size, ids.length);
  const routes = ops.map((op) => `${op.method} ${op.path}`);
  assert.is(new Set(routes).size, routes.length);
});

test('every public operation is published with the scopes and every status it declares; nothing else is published', () => {
  const publicOps = ops.filter((op) => op.audience === 'public');
  for (const op of publicOps) {
    const published = doc.paths[op.path]?.[op.method.toLowerCase()];
    assert.ok(published, `${op.operationId} is published`);
    assert.is(published.operationId, op.operationId);
    const scopes = published.security.map((s: Json) => s.bearerAuth);
    if (op.auth !== 'bearer') assert.equal(scopes, []);
    else if (op.anyScopes) assert.equal(scopes, op.anyScopes.map((s) => [...(op.allScopes ?? []), s]));
    else assert.equal(scopes, [[...(op.allScopes ?? [])]]);
    for (const status of declaredStatuses(op)) assert.ok(published.responses[String(status)], `${op.operationId} publishes ${status}`);
    assert.equal(Object.keys(published.responses).map(Number).sort(), [...declaredStatuses(op)].sort());
  }
  let count = 0;
  for (const item of Object.values<Json>(doc.paths)) count += Object.keys(item).length;
  assert.is(count, publicOps.length, 'no operation is published that the registry does not declare');
  assert.not.ok(JSON.stringify(doc).includes('/operator/'), 'operator operations are omitted');
});

/** A syntactically valid value for each path parameter name. */
const SAMPLE: Record<string, string> = {
  documentRef: `sdoc_${'0'.repeat(48)}`,
  jobId: `kjob_${'0'.repeat(48)}`,
  reviewRef: `krvw_${'0'.repeat(48)}`,
  kind: 'entity',
  artifactId: `kent_${'0'.repeat(24)}`,
  revision: '0'.repeat(64),
};

function urlOf(op: AnyOperation): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => SAMPLE[name] ?? 'x');
}

test('what the handler enforces matches the declarations: no token, a token without the scopes, a method the path lacks', async () => {
  const s = await startServer();
  try {
    const weak = (await s.credential({ scopes: ['public:read'] })).token;
    for (const op of ops) {
      const url = urlOf(op);
      const anonymous = await s.req(url, op.input.body ? { method: op.method, body: {} } : { method: op.method });
      if (op.auth !== 'none') assert.is(anonymous.status, 401, `${op.operationId} without a credential`);
      const needsScope = op.auth === 'bearer' && ((op.allScopes?.length ?? 0) > 0 || (op.anyScopes !== undefined && !op.anyScopes.includes('public:read')));
      if (needsScope) {
        const r = await s.req(url, op.input.body ? { method: op.method, token: weak, body: {} } : { method: op.method, token: weak });
        assert.ok(r.status === 403 || (op.activation !== undefined && r.status === 503), `${op.operationId} without its scopes: ${r.status}`);
      }
      const other = op.method === 'GET' ? 'DELETE' : 'GET';
      if (!ops.some((o) => o.path === op.path && o.method === other)) {
        const r = await s.req(url, { method: other });
        assert.is(r.status, 405, `${other} ${op.path}`);
        assert.ok(String(r.headers.allow).includes(op.method));
      }
    }
  } finally {
    await s.close(); // fails the test if any answer above was not declared by its operation
  }
});

test('fieldErrors name inputs as the client sent them: a header by its name, query values as query.<name>', async () => {
  const s = await startServer();
  try {
    const token = (await s.credential({ scopes: ['document:create', 'document:read', 'document:write'] })).token;
    const missingKey = await s.req('/api/v1/documents', { method: 'POST', token, body: { v: 1, title: 'T' } });
    assert.is(missingKey.status, 400);
    assert.is(missingKey.json.error.code, 'IDEMPOTENCY_REQUIRED');
    assert.equal(missingKey.json.error.fieldErrors.map((f: Json) => f.field), ['Idempotency_Key']);
    const badKey = await s.req('/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': 'short' }, body: { v: 1, title: 'T' } });
    assert.equal(badKey.json.error.fieldErrors.map((f: Json) => f.field), ['Idempotency_Key']);
    const created = await s.req('/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': 'k'.repeat(20) }, body: { v: 1, title: 'T' } });
    const ref = created.json.data.documentRef;
    const badFormat = await s.req(`/api/v1/documents/${ref}?format=pdf`, { token });
    assert.equal(badFormat.json.error.fieldErrors.map((f: Json) => f.field), ['query.format']);
    const badLimit = await s.req('/api/v1/documents?limit=0', { token });
    assert.equal(badLimit.json.error.fieldErrors.map((f: Json) => f.field), ['query.limit']);
    const badBody = await s.req(`/api/v1/documents/${ref}/mutations`, {
      method: 'POST',
      token,
      headers: { 'idempotency-key': 'm'.repeat(20), 'service-if-revision': String(created.headers['service-revision']) },
      body: { v: 1, intent: 'x', mutation: { kind: 'edit' } },
    });
    assert.ok(badBody.json.error.fieldErrors.every((f: Json) => f.field.startsWith('mutation')), JSON.stringify(badBody.json.error));
  } finally {
    await s.close();
  }
});

test.run();
