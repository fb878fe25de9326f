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
import { parseMutationRequest } from './mutation-request.ts';
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

test.run();
