/**
 * Model-based random testing of the block tree through the engine's public API: random sequences of
 * valid and invalid mutations, with the tree's invariants checked after every step.
 */
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { accountActor, freshKey, richIds, testEngine } from '../../fixtures/engine-kit.ts';
import { BlockTree } from '../blocks/tree.ts';
import { isServiceError } from '../errors.ts';
import { sha256Hex } from '../hash.ts';

const actor = accountActor();

/** An abstract step; ids are picked from the live document by index when the step runs. */
type Step =
  | { op: 'create'; parent: number; before: number; texts: string[]; nested: boolean }
  | { op: 'edit'; target: number; text: string; type: 'paragraph' | 'heading' | 'quote' }
  | { op: 'move'; targets: number[]; parent: number; before: number }
  | { op: 'delete'; targets: number[] }
  | { op: 'invalid'; kind: 'markdown' | 'unknown-block' | 'stale' | 'bad-field' }
  | { op: 'replay' };

const text = fc.string({ minLength: 0, maxLength: 12 }).map((s) => s.replace(/[^a-z ]/gi, 'x'));
const idx = fc.nat({ max: 40 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('create' as const), parent: fc.integer({ min: -1, max: 40 }), before: fc.integer({ min: -1, max: 40 }), texts: fc.array(text, { minLength: 1, maxLength: 4 }), nested: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('edit' as const), target: idx, text, type: fc.constantFrom('paragraph' as const, 'heading' as const, 'quote' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('move' as const), targets: fc.array(idx, { minLength: 1, maxLength: 3 }), parent: fc.integer({ min: -1, max: 40 }), before: fc.integer({ min: -1, max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), targets: fc.array(idx, { minLength: 1, maxLength: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('invalid' as const), kind: fc.constantFrom('markdown' as const, 'unknown-block' as const, 'stale' as const, 'bad-field' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('replay' as const) }) },
);

const pick = <T>(list: readonly T[], i: number): T | null => (i < 0 || list.length === 0 ? null : list[i % list.length]!);

async function runSteps(steps: Step[]): Promise<void> {
  const storage = memoryStorage();
  const engine = testEngine(3, storage);
  const created = await engine.documents.create(actor, { idempotencyKey: freshKey(), body: { v: 1, title: 'P' } });
  const ref = created.document.documentRef;
  let revision = created.document.revision;
  let version = 1;
  let last: { key: string; revision: string; mutation: unknown; receipt: unknown } | null = null;
  let ids: string[] = [];

  for (const s of steps) {
    let mutation: unknown;
    let useRevision = revision;
    const parentOf = (i: number) => pick(ids, i);
    if (s.op === 'replay') {
      if (!last) continue;
      const again = await engine.documents.mutate(actor, ref, { idempotencyKey: last.key, ifRevision: last.revision, body: { v: 1, intent: 'p', mutation: last.mutation } });
      assert.is(again.idempotency.idempotency, 'replayed');
      assert.equal(again.receipt, last.receipt);
      continue;
    } else if (s.op === 'create') {
      const parent = parentOf(s.parent);
      const siblings = richChildren(await current(), parent);
      const before = pick(siblings, s.before);
      const blocks = s.texts.map((t) => ({ type: 'paragraph', markdown: t, ...(s.nested ? { children: [{ type: 'bulletListItem', markdown: t }] } : {}) }));
      mutation = { kind: 'create', parentBlockId: parent, beforeBlockId: before, blocks };
    } else if (s.op === 'edit') {
      mutation = { kind: 'edit', blockId: pick(ids, s.target) ?? 'missing', block: { type: s.type, markdown: s.text } };
    } else if (s.op === 'move') {
      const targets = [...new Set(s.targets.map((t) => pick(ids, t)).filter((x): x is string => x !== null))];
      if (!targets.length) continue;
      const parent = parentOf(s.parent);
      const siblings = richChildren(await current(), parent);
      mutation = { kind: 'move', blockIds: targets, newParentBlockId: parent, beforeBlockId: pick(siblings, s.before) };
    } else if (s.op === 'delete') {
      const targets = [...new Set(s.targets.map((t) => pick(ids, t)).filter((x): x is string => x !== null))];
      if (!targets.length) continue;
      mutation = { kind: 'delete', blockIds: targets };
    } else {
      if (s.kind === 'markdown') mutation = { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: '# not inline' }] };
      else if (s.kind === 'unknown-block') mutation = { kind: 'delete', blockIds: ['no-such-block'] };
      else if (s.kind === 'bad-field') mutation = { kind: 'edit', blockId: 'x', block: { type: 'paragraph', rows: [['a']] } };
      else {
        if (version === 1) continue;
        mutation = { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: 'late' }] };
        useRevision = `${ref.slice(5)}.${version - 1}`;
      }
    }
    const key = freshKey();
    try {
      const out = await engine.documents.mutate(actor, ref, { idempotencyKey: key, ifRevision: useRevision, body: { v: 1, intent: 'p', mutation } });
      assert.is(out.receipt.baseVersion, version, 'base version is the version the write was planned on');
      version++;
      assert.is(out.document.version, version, 'an applied mutation raises the version by exactly one');
      revision = out.document.revision;
      last = { key, revision: useRevision, mutation, receipt: out.receipt };
    } catch (e) {
      if (!isServiceError(e)) throw e;
      assert.ok(['CONFLICT', 'INVALID_REQUEST', 'PRECONDITION_FAILED'].includes(e.code), `unexpected ${e.code}: ${e.message}`);
      const head = await engine.documents.head(actor, ref);
      assert.is(head.version, version, 'a rejected mutation changes nothing');
    }
    ids = await checkInvariants(engine, storage, ref, version);
  }

  async function current(): Promise<string> {
    const r = await engine.documents.read(actor, ref, 'rich-json');
    return r.format === 'rich-json' ? r.document.documentJson : '';
  }
}

type RichBlock = { id: string; children: RichBlock[] };
function richChildren(json: string, parent: string | null): string[] {
  const doc = JSON.parse(json) as { blocks: RichBlock[] };
  if (parent === null) return doc.blocks.map((b) => b.id);
  const find = (list: RichBlock[]): RichBlock | null => {
    for (const b of list) {
      if (b.id === parent) return b;
      const hit = find(b.children);
      if (hit) return hit;
    }
    return null;
  };
  return find(doc.blocks)?.children.map((b) => b.id) ?? [];
}

async function checkInvariants(engine: ReturnType<typeof testEngine>, storage: ReturnType<typeof memoryStorage>, ref: string, version: number): Promise<string[]> {
  const rich = await engine.documents.read(actor, ref, 'rich-json');
  const blocks = await engine.documents.read(actor, ref, 'blocks');
  const md = await engine.documents.read(actor, ref, 'markdown');
  if (rich.format !== 'rich-json' || blocks.format !== 'blocks' || md.format !== 'markdown') throw new Error('format');
  const ids = richIds(rich.document.documentJson);
  assert.is(new Set(ids).size, ids.length, 'block ids are unique and each block is reachable exactly once');
  assert.equal(blocks.blocks.map((b) => b.id), ids, 'blocks and rich-json list the same blocks in the same order');
  assert.is(rich.document.contentSha256, sha256Hex(rich.document.documentJson));
  assert.is(rich.version, version);
  assert.is(md.version, version);
  const parents = new Map(blocks.blocks.map((b) => [b.id, b.parentBlockId]));
  for (const b of blocks.blocks) if (b.parentBlockId !== null) assert.ok(parents.has(b.parentBlockId), 'every parent exists');
  // Replaying the stored log from scratch gives the same canonical document.
  const stored = await storage.loadDocument(ref);
  const replayed = BlockTree.load(stored!.snapshot, stored!.updates.map((u) => u.update));
  assert.is(replayed.json(), rich.document.documentJson, 'the stored log replays to the same document');
  assert.is(stored!.head.version, version);
  return ids;
}

test('random mutation sequences keep the tree invariants', async () => {
  await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), runSteps), { numRuns: 60, seed: 20261125 });
});

test.run();
