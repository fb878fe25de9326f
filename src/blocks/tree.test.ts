/**
 * The block tree's cached rendering (per-block fragments, chunks of top-level blocks) against a tree
 * freshly indexed from the same Yjs state, over seeded random writes on documents large enough to
 * split, shrink and drop chunks.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sha256Hex } from '../hash.ts';
import type { BlockRecord } from './model.ts';
import { BlockTree, type BlockWrite } from './tree.ts';
import { seededRandom } from '../../fixtures/engine-kit.ts';

const prng = seededRandom;

const TEXTS = ['plain', 'with **bold** text', 'émoji 😀 and ü', '', 'a [link](https://example.com/x)', '`code` here'];

function checkAgainstFresh(tree: BlockTree, label: string): void {
  const json = tree.json();
  const fresh = BlockTree.load(tree.snapshot(), []);
  assert.is(json, fresh.json(), `${label}: cached json equals a fresh render`);
  assert.is(tree.jsonParts().join(''), json, `${label}: parts concatenate to the json`);
  assert.is(tree.jsonByteLength(), new TextEncoder().encode(json).byteLength, `${label}: UTF-8 length`);
  assert.is(sha256Hex(tree.jsonParts()), sha256Hex(json), `${label}: hash of the parts`);
  assert.ok(JSON.parse(json), `${label}: valid JSON`);
}

test('cached fragments and chunks render what a fresh index renders, over random writes', () => {
  for (const seed of [1, 2, 3]) {
    const random = prng(seed);
    const tree = BlockTree.empty();
    const live: string[] = [];
    let seq = 0;
    const key = () => random().toString(36).slice(2, 8);
    const text = () => TEXTS[Math.floor(random() * TEXTS.length)]!;
    const anyLive = () => live[Math.floor(random() * live.length)]!;
    // Build past several chunk splits, at random positions.
    for (let batch = 0; batch < 12; batch++) {
      const writes: BlockWrite[] = [];
      for (let i = 0; i < 60; i++) {
        const id = `b${seq++}`;
        writes.push({ id, rec: { t: 'paragraph', p: null, o: key(), md: text() } });
        live.push(id);
      }
      tree.apply(writes, 'create');
      checkAgainstFresh(tree, `seed ${seed} build ${batch}`);
    }
    for (let step = 0; step < 300; step++) {
      const r = random();
      const writes: BlockWrite[] = [];
      if (r < 0.3 && live.length) {
        const id = anyLive();
        const rec = tree.get(id)!;
        writes.push({ id, rec: { ...rec, md: text() } });
      } else if (r < 0.5) {
        const parent = random() < 0.5 || live.length === 0 ? null : anyLive();
        const id = `b${seq++}`;
        writes.push({ id, rec: { t: 'bulletListItem', p: parent, o: key(), md: text() } });
        live.push(id);
      } else if (r < 0.75 && live.length > 1) {
        const id = anyLive();
        let parent: string | null = random() < 0.5 ? null : anyLive();
        if (parent !== null && tree.isWithin(parent, id)) parent = null;
        const rec: BlockRecord = { ...tree.get(id)!, p: parent, o: key() };
        writes.push({ id, rec });
      } else if (live.length) {
        // Delete one block's subtree, or a run of top-level blocks (empties whole chunks).
        const doomed = random() < 0.2 ? tree.children(null).slice(0, 70) : [anyLive()];
        const all = new Set<string>();
        for (const id of doomed) for (const d of tree.subtree(id)) all.add(d);
        for (const id of all) writes.push({ id, rec: null });
        for (const id of all) live.splice(live.indexOf(id), 1);
      }
      if (writes.length === 0) continue;
      tree.apply(writes, 'random');
      if (step % 7 === 0 || step > 290) checkAgainstFresh(tree, `seed ${seed} step ${step}`);
    }
  }
});

test('an empty tree and a tree emptied again render the empty document', () => {
  const tree = BlockTree.empty();
  assert.is(tree.json(), '{"type":"blocks","blocks":[]}');
  assert.is(tree.jsonByteLength(), tree.json().length);
  tree.apply([{ id: 'a', rec: { t: 'paragraph', p: null, o: 'a0', md: 'x' } }], 'create');
  tree.apply([{ id: 'a', rec: null }], 'delete');
  assert.is(tree.json(), '{"type":"blocks","blocks":[]}');
  assert.is(sha256Hex(tree.jsonParts()), sha256Hex('{"type":"blocks","blocks":[]}'));
});

test.run();
