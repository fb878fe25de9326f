/**
 * The hot-path request parser against the full valibot schema: same output (key order included,
 * since the idempotency fingerprint stringifies it) and same errors, over valid and invalid requests.
 */
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { isServiceError } from '../errors.ts';
import { parseOrThrow } from '../validation.ts';
import { parseMutationRequest, requestJson } from './mutation-request.ts';
import { DocumentMutationRequestSchema } from './schemas.ts';

function outcome(parse: (input: unknown) => unknown, input: unknown): string {
  try {
    return `ok ${JSON.stringify(parse(input))}`;
  } catch (e) {
    if (!isServiceError(e)) throw e;
    return `error ${e.code} ${e.message} ${JSON.stringify(e.fieldErrors)}`;
  }
}

function same(input: unknown): void {
  const full = outcome((x) => parseOrThrow(DocumentMutationRequestSchema, x), input);
  assert.is(outcome(parseMutationRequest, input), full, JSON.stringify(input));
  const r = v.safeParse(DocumentMutationRequestSchema, input);
  if (r.success) assert.equal(parseMutationRequest(input), r.output);
}

test('valid requests of every kind parse to the full schema output, key order included', () => {
  same({ mutation: { block: { markdown: 'x', type: 'paragraph' }, blockId: 'b1', kind: 'edit' }, intent: 'i', v: 1 });
  same({ v: 1, intent: 'i', mutation: { kind: 'edit', blockId: 'b1', block: { type: 'heading', level: 2, markdown: '**x**' } } });
  same({ v: 1, intent: 'i', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: 'b2', blocks: [{ type: 'paragraph', markdown: 'a', children: [{ type: 'bulletListItem', markdown: 'b' }] }, { type: 'table', rows: [['a', 'b']] }] } });
  same({ v: 1, intent: 'i', mutation: { kind: 'move', blockIds: ['a', 'b'], beforeBlockId: null, newParentBlockId: 'p', oldSiblingBlockIds: ['c'] } });
  same({ v: 1, intent: 'i', mutation: { kind: 'delete', blockIds: ['a'], siblingBlockIds: [] } });
  same({ v: 1, intent: 'i', mutation: { kind: 'edit', blockId: 'b1', block: { type: 'paragraph', markdown: undefined } } });
});

test('invalid requests fail with the full schema errors', () => {
  for (const input of [
    null,
    'x',
    {},
    { v: 2, intent: 'i', mutation: { kind: 'edit', blockId: 'b1', block: { type: 'paragraph' } } },
    { v: 1, intent: '', mutation: { kind: 'edit', blockId: 'b1', block: { type: 'paragraph' } } },
    { v: 1, intent: 'i', mutation: { kind: 'edit', blockId: 'b1', block: { type: 'paragraph', children: [] } } },
    { v: 1, intent: 'i', mutation: { kind: 'edit', blockId: '-bad', block: { type: 'paragraph' } } },
    { v: 1, intent: 'i', mutation: { kind: 'nope' } },
    { v: 1, intent: 'i', mutation: { kind: 'delete', blockIds: [] } },
    { v: 1, intent: 'i', mutation: { kind: 'move', blockIds: ['a'] } },
    { v: 1, intent: 'i', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'table', rows: [[]] }] } },
    { v: 1, intent: 'i', extra: true, mutation: { kind: 'delete', blockIds: ['a'] } },
    { v: 1, intent: 'i', mutation: [] },
  ]) {
    same(input);
  }
});

test('random requests: the hot-path parser and the full schema agree', () => {
  const id = fc.constantFrom('b1', 'b2', 'x.y', '-bad', '', 7 as unknown as string);
  const block = fc.record(
    {
      type: fc.constantFrom('paragraph', 'heading', 'table', 'codeBlock', 'nope'),
      markdown: fc.constantFrom('a', '**b**', 3 as unknown as string),
      level: fc.constantFrom(1, 2, 4),
      rows: fc.constantFrom([['a']], [], [[]]),
      code: fc.constantFrom('x'),
      extra: fc.constant(1),
    },
    { requiredKeys: ['type'] },
  );
  const mutation = fc.oneof(
    fc.record({ kind: fc.constant('edit'), blockId: id, block }, { requiredKeys: ['kind'] }),
    fc.record({ kind: fc.constant('create'), parentBlockId: fc.option(id), beforeBlockId: fc.option(id), blocks: fc.array(block, { maxLength: 3 }) }, { requiredKeys: ['kind'] }),
    fc.record({ kind: fc.constant('move'), blockIds: fc.array(id, { maxLength: 3 }), beforeBlockId: fc.option(id), newParentBlockId: fc.option(id), oldSiblingBlockIds: fc.array(id, { maxLength: 3 }) }, { requiredKeys: ['kind'] }),
    fc.record({ kind: fc.constantFrom('delete', 'other'), blockIds: fc.array(id, { maxLength: 3 }) }, { requiredKeys: ['kind'] }),
  );
  const request = fc.record({ v: fc.constantFrom(1, 2), intent: fc.constantFrom('i', ''), mutation }, { requiredKeys: ['mutation'] });
  fc.assert(
    fc.property(request, (input) => {
      same(input);
    }),
    { numRuns: 3000, seed: 11 },
  );
});

test('requestJson writes exactly JSON.stringify of every parsed request', () => {
  const id = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:$-]{0,4}$/);
  const some = fc.array(id, { minLength: 1, maxLength: 3 });
  const textish = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('"\\\n\u0001\u2028', '\ud800x', 'é😀'));
  const { block } = fc.letrec<{ block: Record<string, unknown> }>((self) => ({
    block: fc.record(
      {
        type: fc.constantFrom('paragraph', 'heading', 'checkListItem', 'codeBlock', 'table'),
        markdown: textish,
        level: fc.constantFrom(1, 2, 3),
        checked: fc.boolean(),
        code: textish,
        language: fc.constantFrom('js', 'a"b'),
        rows: fc.constantFrom([['a', 'b"']], [['x'], ['y']]),
        children: fc.option(fc.array(self('block'), { maxLength: 2 }), { nil: undefined, depthSize: 'small', maxDepth: 3 }),
      },
      { requiredKeys: ['type'] },
    ).map((b) => (b.children === undefined ? (({ children: _children, ...rest }) => rest)(b) : b)),
  }));
  const mutation = fc.oneof(
    fc.record({ kind: fc.constant('edit'), blockId: id, block: block.map(({ children: _children, ...b }) => b) }),
    fc.record({ kind: fc.constant('create'), parentBlockId: fc.option(id), beforeBlockId: fc.option(id), blocks: fc.array(block, { minLength: 1, maxLength: 3 }) }),
    fc.record(
      { kind: fc.constant('move'), blockIds: some, beforeBlockId: fc.option(id), newParentBlockId: fc.option(id), oldParentBlockId: fc.option(id), newSiblingBlockIds: fc.array(id, { maxLength: 2 }), oldSiblingBlockIds: fc.array(id, { maxLength: 2 }) },
      { requiredKeys: ['kind', 'blockIds', 'beforeBlockId', 'newParentBlockId'] },
    ),
    fc.record({ kind: fc.constant('delete'), blockIds: some, parentBlockIds: fc.array(id, { maxLength: 3 }), siblingBlockIds: fc.array(id, { maxLength: 3 }) }, { requiredKeys: ['kind', 'blockIds'] }),
  );
  let checked = 0;
  fc.assert(
    fc.property(fc.record({ v: fc.constant(1), intent: fc.oneof(textish, fc.constant('why')), mutation }), (input) => {
      const r = v.safeParse(DocumentMutationRequestSchema, input);
      if (!r.success) return;
      checked++;
      const parsed = parseMutationRequest(input);
      assert.is(requestJson(parsed), JSON.stringify(parsed));
      assert.is(requestJson(r.output), JSON.stringify(r.output));
    }),
    { numRuns: 2000, seed: 5 },
  );
  assert.ok(checked > 500, `only ${checked} valid requests`);
});

test.run();
