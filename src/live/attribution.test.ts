/**
 * One person's share of a room's pending edits ({@link ownBlocks}): the base version with only
 * their blocks taken from the editor.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fc from 'fast-check';
import type { EditorBlock } from '../blocks/editor-fragment.ts';
import { ownBlocks } from './attribution.ts';

const P = { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' };
const b = (id: string, text: string, children: EditorBlock[] = []): EditorBlock => ({
  id,
  type: 'paragraph',
  props: { ...P },
  content: [{ type: 'text', text, styles: {} }],
  children,
});

/** `id:text` of every block in document order, children in brackets. */
const outline = (blocks: readonly EditorBlock[]): string =>
  blocks.map((x) => `${x.id}:${(x.content as { text: string }[])[0]!.text}${x.children.length ? `[${outline(x.children)}]` : ''}`).join(' ');

const own = (base: EditorBlock[], current: EditorBlock[], touched: string[], deleted: string[] = []) => outline(ownBlocks(base, current, new Set(touched), new Set(deleted)));

const BASE = [b('a', 'alpha'), b('b', 'beta', [b('c', 'child')]), b('d', 'delta')];

test("a person's edited blocks come from the editor, another person's stay as the base has them", () => {
  const current = [b('a', 'ALPHA'), b('b', 'BETA', [b('c', 'child')]), b('d', 'delta')];
  assert.is(own(BASE, current, ['a']), 'a:ALPHA b:beta[c:child] d:delta');
  assert.is(own(BASE, current, ['b']), 'a:alpha b:BETA[c:child] d:delta');
  assert.is(own(BASE, current, ['a', 'b']), outline(current));
});

test("new blocks: a person's own are placed after their nearest kept sibling; another's are left out", () => {
  const current = [b('a', 'alpha'), b('y', 'theirs'), b('x', 'mine'), b('b', 'beta', [b('c', 'child'), b('z', 'mine too')]), b('d', 'delta')];
  assert.is(own(BASE, current, ['x', 'z']), 'a:alpha x:mine b:beta[c:child z:mine too] d:delta');
  assert.is(own(BASE, current, ['y']), 'a:alpha y:theirs b:beta[c:child] d:delta');
  const first = [b('y', 'theirs'), b('x', 'mine'), ...BASE];
  assert.is(own(BASE, first, ['x']), 'x:mine a:alpha b:beta[c:child] d:delta');
});

test("a person's block inside another person's new block brings that block along", () => {
  const current = [b('a', 'alpha'), b('y', 'theirs', [b('x', 'mine')]), b('b', 'beta', [b('c', 'child')]), b('d', 'delta')];
  assert.is(own(BASE, current, ['x']), 'a:alpha y:theirs[x:mine] b:beta[c:child] d:delta');
});

test("deletions: a person's go with what was inside; another's stay; a block moved out of a deleted one survives", () => {
  const current = [b('a', 'alpha'), b('d', 'delta')];
  assert.is(own(BASE, current, [], ['b']), 'a:alpha d:delta');
  assert.is(own(BASE, current, ['a'], []), 'a:alpha b:beta[c:child] d:delta');
  const moved = [b('a', 'alpha'), b('c', 'child'), b('d', 'delta')]; // someone moved c out, then this person deleted b
  assert.is(own(BASE, moved, [], ['b']), 'a:alpha c:child d:delta');
});

test("moves: a person's moved block takes its new place; another's move stays pending", () => {
  const current = [b('d', 'delta'), b('a', 'alpha'), b('b', 'beta'), b('c', 'child')];
  assert.is(own(BASE, current, ['d']), 'd:delta a:alpha b:beta[c:child]');
  assert.is(own(BASE, current, ['c']), 'a:alpha b:beta c:child d:delta');
});

test('two people moving blocks into each other: the whole editor state is answered, never a cycle', () => {
  const base = [b('a', 'alpha', [b('c', 'child')])];
  // Another person moved c out to the root (pending); this person moved a under c.
  const current = [b('c', 'child', [b('a', 'alpha')])];
  assert.is(own(base, current, ['a']), 'c:child[a:alpha]');
});

/** A random tree over some of the ids a-h (each once): each block under an earlier one or at the root. */
const tree = fc
  .tuple(fc.shuffledSubarray(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']), fc.array(fc.nat(7), { minLength: 8, maxLength: 8 }))
  .map(([ids, parents]) => {
    const roots: EditorBlock[] = [];
    const made: EditorBlock[] = [];
    ids.forEach((id, i) => {
      const block = b(id, id);
      const p = i === 0 ? undefined : made[parents[i]! % i];
      (p !== undefined && parents[i]! % 2 === 0 ? p.children : roots).push(block);
      made.push(block);
    });
    return roots;
  });
const idsIn = (blocks: readonly EditorBlock[]): string[] => blocks.flatMap((x) => [x.id, ...idsIn(x.children)]);

test('property: nothing touched gives the base; everything touched and deleted gives the editor; every block once', () => {
  fc.assert(
    fc.property(tree, tree, fc.subarray(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']), (base, current, some) => {
      assert.is(outline(ownBlocks(base, current, new Set(), new Set())), outline(base));
      assert.is(outline(ownBlocks(base, current, new Set(idsIn(current)), new Set(idsIn(base)))), outline(current));
      const mixed = idsIn(ownBlocks(base, current, new Set(some), new Set(some)));
      assert.is(new Set(mixed).size, mixed.length, 'no block twice');
    }),
    { numRuns: 500, seed: 22 },
  );
});

test.run();
