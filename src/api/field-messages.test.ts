/**
 * Messages of refused bodies read as sentences (issue 29 item 4): a variant's discriminator says
 * which values it takes, once — "mutation.kind must be one of create, edit, move, delete", never
 * "mutation.kind kind must be one of …" nor valibot's "Invalid type: Expected …".
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALL_SCOPES, startServer } from '../../fixtures/http-kit.ts';

test('a wrong mutation kind and a wrong spaceRef kind name the field once and the values it takes', async () => {
  const s = await startServer();
  try {
    const { token } = await s.credential({ scopes: ALL_SCOPES });
    const created = await s.req('/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': 'field-messages-create-1' }, body: { v: 1, title: 'Messages' } });
    assert.is(created.status, 201, created.text);
    const ref = created.json.data.documentRef as string;
    const revision = String(created.headers['service-revision']);
    const bad = await s.req(`/api/v1/documents/${ref}/mutations`, {
      method: 'POST',
      token,
      headers: { 'idempotency-key': 'field-messages-mutate-1', 'service-if-revision': revision },
      body: { v: 1, intent: 'x', mutation: { kind: 'bogus' } },
    });
    assert.is(bad.status, 400, bad.text);
    assert.equal(bad.json.error.fieldErrors, [{ field: 'mutation.kind', message: 'must be one of create, edit, move, delete' }]);
    assert.match(bad.json.error.message, /: mutation\.kind must be one of create, edit, move, delete\.$/);

    const job = await s.req('/api/v1/research-jobs', {
      method: 'POST',
      token,
      headers: { 'idempotency-key': 'field-messages-job-0001' },
      body: { v: 1, question: 'Why?', profile: 'focused', visibilityIntent: 'private', deliverable: { kind: 'report', form: 'evidence-review', language: 'en' }, spaceRef: { kind: 'elsewhere' } },
    });
    assert.is(job.status, 400, job.text);
    const spaceRef = (job.json.error.fieldErrors as { field: string; message: string }[]).find((f) => f.field === 'spaceRef.kind');
    assert.ok(spaceRef, job.text);
    assert.match(spaceRef!.message, /^must be one of [a-z-]+(, [a-z-]+)+$/, spaceRef!.message);
    assert.not.match(job.text, /Invalid type|Expected "/);
  } finally {
    await s.close();
  }
});

test.run();
