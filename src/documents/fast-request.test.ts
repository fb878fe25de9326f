import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { fastMutationRequest } from './fast-request.ts';
import { DocumentMutationRequestSchema } from './schemas.ts';

const validId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:$-]{0,5}$/);
const id = fc.oneof({ arbitrary: validId, weight: 12 }, { arbitrary: fc.constantFrom('', '-bad', 'x'.repeat(129), 7 as unknown as string), weight: 1 });
/** An object of the given optional fields: each is left out half the time, rare (bad) ones mostly. */
const obj = (fields: Record<string, fc.Arbitrary<unknown>>, rare: Record<string, fc.Arbitrary<unknown>> = {}) =>
  fc
    .tuple(
      ...Object.entries(fields).map(([k, a]) => fc.option(a.map((x) => [k, x] as const), { nil: undefined })),
      ...Object.entries(rare).map(([k, a]) =>
        fc.oneof({ arbitrary: fc.constant(undefined), weight: 19 }, { arbitrary: a.map((x) => [k, x] as const), weight: 1 }),
      ),
    )
    .map((pairs) => Object.fromEntries(pairs.filter((p) => p !== undefined) as [string, unknown][]));
const withFixed = (fixed: Record<string, fc.Arbitrary<unknown>>, rest: fc.Arbitrary<Record<string, unknown>>) =>
  fc.tuple(fc.record(fixed), rest).map(([a, b]) => ({ ...a, ...b }));
const block = withFixed(
  { type: fc.constantFrom('paragraph', 'heading', 'checkListItem', 'codeBlock', 'quote', 'table', 'nope') },
  obj(
    { markdown: fc.string({ maxLength: 5 }), level: fc.constantFrom(1, 2, 3, 3, 4), checked: fc.constantFrom(true, false, false, 'y'), code: fc.string({ maxLength: 5 }), language: fc.constantFrom('js', 'py', '', 'x'.repeat(81)) },
    { rows: fc.constant([['a']]), extra: fc.constant(1), children: fc.constant([]), markdownUndefined: fc.constant(undefined) },
  ),
);
/** A create's block: a block, sometimes with children (nested up to 6 levels, past the compiled check's depth). */
const { tree } = fc.letrec<{ tree: Record<string, unknown> }>((self) => ({
  tree: fc.tuple(block, fc.option(fc.array(self('tree'), { maxLength: 2 }), { nil: undefined, depthSize: 'small', maxDepth: 6 })).map(([b, children]) => (children === undefined ? b : { ...b, children })),
}));
const ids = fc.array(id, { maxLength: 3 });
const someIds = fc.array(id, { minLength: 1, maxLength: 3 });
const mutation = fc.oneof(
  withFixed({ kind: fc.constant('edit'), blockId: id, block }, obj({}, { other: fc.constant(1) })),
  withFixed(
    { kind: fc.constant('move'), blockIds: someIds, beforeBlockId: fc.option(id), newParentBlockId: fc.option(id) },
    obj({ oldParentBlockId: fc.option(id), newSiblingBlockIds: ids, oldSiblingBlockIds: ids }, { blockId: id }),
  ),
  withFixed({ kind: fc.constantFrom('delete', 'delete', 'create'), blockIds: someIds }, obj({ parentBlockIds: ids, siblingBlockIds: ids }, { x: fc.constant(null) })),
  withFixed(
    { kind: fc.constant('create'), beforeBlockId: fc.option(id), parentBlockId: fc.option(id), blocks: fc.array(tree, { maxLength: 3 }) },
    obj({}, { blockIds: someIds }),
  ),
);
const request = withFixed({ v: fc.constantFrom(1, 1, 1, 2), intent: fc.constantFrom('x', 'why', ''), mutation }, obj({}, { z: fc.constant(1) }));

test('the compiled check gives exactly the schema output (keys in order) or defers to the schema', () => {
  let accepted = 0;
  fc.assert(
    fc.property(request, (input) => {
      const fast = fastMutationRequest(input);
      const slow = v.safeParse(DocumentMutationRequestSchema, input);
      if (fast === null) return true;
      accepted++;
      assert.ok(slow.success, 'the fast path accepted what the schema rejects');
      assert.is(JSON.stringify(fast), JSON.stringify(slow.output));
      return true;
    }),
    { numRuns: 3000, seed: 7 },
  );
  assert.ok(accepted > 300, `only ${accepted} requests took the fast path`);
});

test('the compiled check accepts the usual hot requests', () => {
  const edit = { v: 1, intent: 'x', mutation: { kind: 'edit', blockId: 'b1', block: { type: 'heading', markdown: 'T', level: 2 } } };
  assert.equal(fastMutationRequest(edit), edit);
  const move = { v: 1, intent: 'x', mutation: { kind: 'move', blockIds: ['a'], beforeBlockId: null, newParentBlockId: 'p' } };
  assert.equal(fastMutationRequest(move), move);
  const del = { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: ['a', 'b'] } };
  assert.equal(fastMutationRequest(del), del);
  const blocks = [{ type: 'bulletListItem', markdown: 'a', children: [{ type: 'paragraph', markdown: 'b', children: [] }] }];
  const create = { v: 1, intent: 'x', mutation: { kind: 'create', beforeBlockId: null, parentBlockId: 'p', blocks } };
  assert.equal(fastMutationRequest(create), create);
  assert.is.not((fastMutationRequest(create)!.mutation as { blocks: unknown }).blocks, blocks, 'the output is a copy');
  assert.is(fastMutationRequest({ ...del, intent: 'é'.repeat(501) }), null);
});

test.run();
