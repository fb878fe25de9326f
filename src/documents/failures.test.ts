import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createEngine } from '../engine.ts';
import { isServiceError } from '../errors.ts';
import { StorageConflictError, type BatchOp, type Storage } from '../ports.ts';

const actor = { accountId: 'acct', credentialRef: null, documentRef: null };
let n = 0;
const key = () => `failure-test-key-${String(++n).padStart(4, '0')}`;

/** A memory storage whose commits fail when `failing(ops)` says so. */
function faulty(failing: (ops: BatchOp[]) => Error | null): Storage {
  const inner = memoryStorage();
  return { ...inner, commit: (ops) => { const e = failing(ops); return e ? Promise.reject(e) : inner.commit(ops); } };
}

test('a storage conflict on create is a retryable 409 CONFLICT with its cause, never an internal error; nothing is created', async () => {
  let armed = true;
  const storage = faulty((ops) => (armed && ops.some((o) => o.kind === 'document.create') ? ((armed = false), new StorageConflictError('taken', 0)) : null));
  const engine = createEngine({ storage });
  try {
    await engine.documents.create(actor, { idempotencyKey: key(), body: { v: 1, title: 'Race' } });
    assert.unreachable('create should have failed');
  } catch (e) {
    assert.ok(isServiceError(e), String(e));
    assert.is(e.code, 'CONFLICT');
    assert.is(e.retryable, true);
    assert.ok((e as Error).cause instanceof StorageConflictError);
  }
  assert.equal((await engine.documents.list(actor, {})).items, []);
  const retried = await engine.documents.create(actor, { idempotencyKey: key(), body: { v: 1, title: 'Race' } });
  assert.is(retried.document.title, 'Race');
  await engine.close();
});

test('a failed background compaction reaches onError with the document named, and the document stays readable', async () => {
  const errors: [unknown, string][] = [];
  const storage = faulty((ops) => (ops.some((o) => o.kind === 'document.compact') ? new Error('disk full') : null));
  const engine = createEngine({ storage, onError: (error, source) => errors.push([error, source]), documents: { compactEvery: 2 } });
  const { document } = await engine.documents.create(actor, { idempotencyKey: key(), body: { v: 1, title: 'Compact me' } });
  let revision = document.revision;
  for (let i = 0; i < 4; i++) {
    const out = await engine.documents.mutate(actor, document.documentRef, {
      idempotencyKey: key(),
      ifRevision: revision,
      body: { v: 1, intent: 'grow', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: `p${i}` }] } },
    });
    revision = out.document.revision;
  }
  await engine.documents.flush();
  assert.ok(errors.length > 0, 'the failure was reported');
  assert.match(errors[0]![1], new RegExp(`^compaction of ${document.documentRef}$`));
  const read = await engine.documents.read(actor, document.documentRef, 'markdown');
  assert.ok(read.format === 'markdown' && read.markdown.includes('p3'));
  await engine.close();
});

test.run();
