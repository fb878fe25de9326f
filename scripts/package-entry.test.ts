/**
 * The package entry points resolve by name (package.json `exports`, self-referenced) and the README's
 * embedding example runs as written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiHandler, createEngine, isServiceError } from 'knowledge-workspace';
import { lowdbStorage } from 'knowledge-workspace/adapters/lowdb';
import { memoryStorage } from 'knowledge-workspace/adapters/memory';
import { storageConformance } from 'knowledge-workspace/testing';
import { listen } from 'knowledge-workspace/transports/http';
import { createFetch } from 'knowledge-workspace/transports/inproc';

test('every subpath of the exports map resolves', () => {
  for (const f of [createEngine, createApiHandler, lowdbStorage, memoryStorage, storageConformance, listen, createFetch]) assert.type(f, 'function');
});

test("the README's embedding example runs as written", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kw-readme-'));
  try {
    const engine = createEngine({ storage: await lowdbStorage({ dir: join(dir, 'data') }) });
    const actor = { accountId: 'me', credentialRef: null, documentRef: null };
    const { document } = await engine.documents.create(actor, { idempotencyKey: 'create-notes-0001', body: { v: 1, title: 'Notes' } });
    const out = await engine.documents.mutate(actor, document.documentRef, {
      idempotencyKey: 'first-block-0001',
      ifRevision: document.revision,
      body: { v: 1, intent: 'start', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: 'Hello' }] } },
    });
    assert.is(out.document.version, 2);
    try {
      await engine.documents.mutate(actor, document.documentRef, {
        idempotencyKey: 'second-block-0001',
        ifRevision: document.revision,
        body: { v: 1, intent: 'late', mutation: { kind: 'delete', blockIds: [out.receipt.affectedBlockIds[0]!] } },
      });
      assert.unreachable('a stale revision must fail');
    } catch (e) {
      assert.ok(isServiceError(e));
      assert.is(e.code, 'PRECONDITION_FAILED');
    }
    await engine.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the in-process fetch serves the API with no socket', async () => {
  const engine = createEngine({ storage: memoryStorage() });
  const fetch = createFetch(createApiHandler({ engine }));
  const r = await fetch('http://kw.local/api/v1/auth');
  assert.is(r.status, 401);
  const body = (await r.json()) as { error: { code: string } };
  assert.is(body.error.code, 'AUTH_REQUIRED');
  await engine.close();
});

test.run();
