/**
 * Documents survive a restart on the embedded default (lowdb): what was acknowledged reads back
 * exactly, idempotency records included, after the log was compacted or not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { accountActor, freshKey, mutate, newDocument } from '../../fixtures/engine-kit.ts';
import { createEngine } from '../engine.ts';
import { manualClock } from '../clock.ts';
import { seededIds } from '../ids.ts';

const alice = accountActor();

test('a document written through lowdb reads back exactly after close and reopen, and its keys still replay', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kw-persist-'));
  try {
    const first = createEngine({ storage: await lowdbStorage({ dir }), ids: seededIds(11), clock: manualClock() });
    const { ref, revision } = await newDocument(first, alice, 'Persisted');
    const key = freshKey();
    const m = { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'heading', level: 2, markdown: 'Kept' }, { type: 'paragraph', markdown: 'with *style*' }] };
    const made = await mutate(first, alice, ref, revision, m, key);
    let rev = made.document.revision;
    for (let i = 0; i < 40; i++) {
      const out = await mutate(first, alice, ref, rev, { kind: 'edit', blockId: made.receipt.affectedBlockIds[1], block: { type: 'paragraph', markdown: `edit ${i}` } });
      rev = out.document.revision;
    }
    const before = await first.documents.read(alice, ref);
    await first.close();

    const second = createEngine({ storage: await lowdbStorage({ dir }), ids: seededIds(12), clock: manualClock() });
    const after = await second.documents.read(alice, ref);
    if (before.format !== 'rich-json' || after.format !== 'rich-json') throw new Error('format');
    assert.is(after.version, 42);
    assert.is(after.revision, before.revision);
    assert.is(after.document.documentJson, before.document.documentJson);
    assert.is(after.document.contentSha256, before.document.contentSha256);
    const replay = await mutate(second, alice, ref, revision, m, key);
    assert.is(replay.idempotency.idempotency, 'replayed');
    assert.equal(replay.receipt, made.receipt);
    const next = await mutate(second, alice, ref, rev, { kind: 'delete', blockIds: [made.receipt.affectedBlockIds[0]] });
    assert.is(next.document.version, 43);
    await second.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
