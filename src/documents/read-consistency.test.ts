/**
 * Reads never see a mutation that is applied in memory but not yet durable: whatever they return
 * pairs a revision with exactly the content of that revision.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { accountActor, mutate, newDocument, richIds, testEngine } from '../../fixtures/engine-kit.ts';
import type { Storage } from '../ports.ts';

const alice = accountActor();

/** Memory storage whose next commit waits until `release()` is called. */
function gatedStorage() {
  const inner = memoryStorage();
  let gate: Promise<void> | null = null;
  let open: () => void = () => {};
  let entered: () => void = () => {};
  const storage: Storage = {
    ...inner,
    async commit(ops) {
      if (gate) {
        entered();
        await gate;
      }
      return inner.commit(ops);
    },
  };
  return {
    storage,
    /** Hold the next commits; resolves the returned promise once one is waiting. */
    hold(): Promise<void> {
      gate = new Promise((r) => (open = r));
      return new Promise((r) => (entered = r));
    },
    release() {
      gate = null;
      open();
    },
  };
}

test('reads issued while a commit is in flight wait for it and return a consistent revision', async () => {
  const gated = gatedStorage();
  const engine = testEngine(5, gated.storage);
  const { ref, revision } = await newDocument(engine, alice);
  // Caches of blocks and markdown are cold: a read must not build them from a tree that is ahead.
  const waiting = gated.hold();
  const write = mutate(engine, alice, ref, revision, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: 'new' }] });
  await waiting; // the tree holds the new block; storage does not yet
  const reads = ['rich-json', 'blocks', 'markdown', 'rich-json'].map((f) => engine.documents.read(alice, ref, f));
  const head = await engine.documents.head(alice, ref);
  assert.is(head.version, 1, 'the durable head is still version 1');
  gated.release();
  const [out, ...results] = await Promise.all([write, ...reads]);
  assert.is(out!.document.version, 2);
  for (const r of results) {
    const read = r as Awaited<(typeof reads)[number]>;
    if (read.format === 'rich-json') {
      assert.is(richIds(read.document.documentJson).length, read.version - 1, 'content matches the revision');
      assert.is(read.document.version, read.version);
    } else if (read.format === 'blocks') assert.is(read.blocks.length, read.version - 1);
    else assert.is(read.markdown.includes('new'), read.version === 2);
  }
});

test.run();
