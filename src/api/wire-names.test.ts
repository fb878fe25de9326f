/**
 * The domain names inputs logically (`idempotencyKey`, `ifRevision`); the edge answers with the
 * names the client sent, in fieldErrors and in messages.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startServer } from '../../fixtures/http-kit.ts';

test('errors over HTTP name the headers the client sent (Idempotency-Key, Service-If-Revision), in fieldErrors and messages', async () => {
  const s = await startServer();
  try {
    const { token } = await s.credential({ scopes: ['document:create', 'document:read', 'document:write'] });
    const noKey = await s.req('/api/v1/documents', { method: 'POST', token, body: { v: 1, title: 'T' } });
    assert.is(noKey.json.error.code, 'IDEMPOTENCY_REQUIRED');
    assert.match(noKey.json.error.message, 'Idempotency-Key');
    assert.not.match(noKey.json.error.message, 'idempotencyKey');
    assert.equal(noKey.json.error.fieldErrors.map((f: { field: string }) => f.field), ['Idempotency_Key']);
    const created = await s.req('/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': 'wire-names-key-000001' }, body: { v: 1, title: 'T' } });
    const path = `/api/v1/documents/${created.json.data.documentRef}/mutations`;
    const body = { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: ['blk_00000000000000000000000000'] } };
    const noRevision = await s.req(path, { method: 'POST', token, headers: { 'idempotency-key': 'wire-names-key-000002' }, body });
    assert.is(noRevision.json.error.code, 'PRECONDITION_REQUIRED');
    assert.match(noRevision.json.error.message, 'Service-If-Revision');
    assert.not.match(noRevision.json.error.message, 'ifRevision');
    const badRevision = await s.req(path, { method: 'POST', token, headers: { 'idempotency-key': 'wire-names-key-000003', 'service-if-revision': 'nope' }, body });
    assert.is(badRevision.json.error.code, 'INVALID_REQUEST');
    assert.match(badRevision.json.error.message, /^Service-If-Revision is not a revision/);
    assert.equal(badRevision.json.error.fieldErrors.map((f: { field: string }) => f.field), ['Service_If_Revision']);
  } finally {
    await s.close();
  }
});

test.run();
