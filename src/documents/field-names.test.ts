import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accountActor, errorOf, freshKey, newDocument, testEngine } from '../../fixtures/engine-kit.ts';

const alice = accountActor('alice');
const edit = { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: ['blk_00000000000000000000000000'] } };

test('the domain names inputs by their logical names, not by header or query names', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const noKey = await errorOf(engine.documents.create(alice, { idempotencyKey: undefined, body: { v: 1, title: 'T' } }));
  assert.equal([noKey.code, noKey.fields], ['IDEMPOTENCY_REQUIRED', ['idempotencyKey']]);
  const badKey = await errorOf(engine.documents.mutate(alice, ref, { idempotencyKey: 'short', ifRevision: revision, body: edit }));
  assert.equal([badKey.code, badKey.fields], ['INVALID_REQUEST', ['idempotencyKey']]);
  const badRevision = await errorOf(engine.documents.mutate(alice, ref, { idempotencyKey: freshKey(), ifRevision: 'nope', body: edit }));
  assert.equal([badRevision.code, badRevision.fields], ['INVALID_REQUEST', ['ifRevision']]);
  assert.match(badRevision.message, 'ifRevision');
  assert.not.match(badRevision.message, 'Service-');
  assert.equal((await errorOf(engine.documents.read(alice, ref, 'html'))).fields, ['format']);
  assert.equal((await errorOf(engine.documents.list(alice, { limit: 0 }))).fields, ['limit']);
  assert.equal((await errorOf(engine.documents.list(alice, { cursor: 'bad!' }))).fields, ['cursor']);
});

test.run();
