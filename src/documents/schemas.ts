/**
 * valibot schemas of the document requests, with every limit of the contract. The OpenAPI document
 * is generated from these same schemas.
 * @module
 */
import * as v from 'valibot';
import { BLOCK_TYPES, CODE_LANGUAGE, CODE_LANGUAGE_RULE, type BlockInput } from '../blocks/model.ts';
import { Patterns } from '../ids.ts';

/** The read representations of a document. */
export const DOCUMENT_FORMATS = ['rich-json', 'blocks', 'markdown'] as const;

/** Contract limits for documents and mutations. */
export const Limits = {
  titleMax: 240,
  intentMax: 500,
  createBlocksMax: 50,
  childrenMax: 50,
  markdownMax: 41_000,
  codeMax: 50_000,
  languageMax: 80,
  tableRowsMax: 50,
  tableCellsMax: 30,
  cellMax: 5_000,
  blockIdsMax: 64,
  parentBlockIdsMax: 64,
  siblingBlockIdsMax: 128,
  fenceSiblingsMax: 2,
  outlineMax: 10_000,
  affectedMax: 256,
} as const;

/** Length in Unicode code points (what JSON Schema's maxLength counts), not UTF-16 units. */
export function codePointLength(text: string): number {
  let surrogatePairs = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        surrogatePairs++;
        i++;
      }
    }
  }
  return text.length - surrogatePairs;
}

/**
 * valibot's `maxLength` for strings, counting characters as the contract (and the published JSON
 * Schema `maxLength`) does: code points. It stays a `max_length` action, so the OpenAPI generator
 * publishes it as `maxLength`.
 * @remarks Cheap: code points are counted only when the UTF-16 length is over the limit.
 */
export function maxChars<const N extends number>(max: N, message: string) {
  const base = v.maxLength<string, N, string>(max, message);
  return {
    ...base,
    '~run'(dataset: Parameters<typeof base['~run']>[0], config: Parameters<typeof base['~run']>[1]) {
      if (dataset.typed && dataset.value.length > max && codePointLength(dataset.value) <= max) return dataset;
      return base['~run'](dataset, config);
    },
  } as typeof base;
}

/** A blockId: 1-128 chars, ^[A-Za-z0-9][A-Za-z0-9._:$-]*$. */
export const BlockIdSchema = v.pipe(
  v.string(),
  v.regex(Patterns.blockId, 'must be a blockId: 1-128 characters, starting with a letter or digit, then letters, digits or . _ : $ -'),
);

const NullableBlockId = v.nullable(BlockIdSchema);

/** The contract's DocumentCreateRequest. */
export const DocumentCreateRequestSchema = v.strictObject({
  v: v.literal(1),
  title: v.pipe(v.string(), v.minLength(1, 'must not be empty'), maxChars(Limits.titleMax, `must be at most ${Limits.titleMax} characters`)),
});
export type DocumentCreateRequest = v.InferOutput<typeof DocumentCreateRequestSchema>;

const BlockBase = {
  type: v.picklist(BLOCK_TYPES, `must be one of ${BLOCK_TYPES.join(', ')}`),
  markdown: v.optional(v.pipe(v.string(), maxChars(Limits.markdownMax, `must be at most ${Limits.markdownMax} characters`))),
  level: v.optional(v.picklist([1, 2, 3] as const, 'must be 1, 2 or 3')),
  checked: v.optional(v.boolean()),
  code: v.optional(v.pipe(v.string(), maxChars(Limits.codeMax, `must be at most ${Limits.codeMax} characters`))),
  language: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      maxChars(Limits.languageMax, `must be at most ${Limits.languageMax} characters`),
      v.regex(CODE_LANGUAGE, CODE_LANGUAGE_RULE),
    ),
  ),
  rows: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.array(v.pipe(v.string(), maxChars(Limits.cellMax, `a cell must be at most ${Limits.cellMax} characters`))),
          v.minLength(1, 'a row needs 1-30 cells'),
          v.maxLength(Limits.tableCellsMax, `a row has at most ${Limits.tableCellsMax} cells`),
        ),
      ),
      v.minLength(1, 'a table needs 1-50 rows'),
      v.maxLength(Limits.tableRowsMax, `a table has at most ${Limits.tableRowsMax} rows`),
    ),
  ),
};

/** A Block with children (recursive). */
export const BlockSchema: v.GenericSchema<BlockInput> = v.strictObject({
  ...BlockBase,
  children: v.optional(
    v.pipe(v.array(v.lazy(() => BlockSchema)), v.maxLength(Limits.childrenMax, `at most ${Limits.childrenMax} children`)),
  ),
}) as unknown as v.GenericSchema<BlockInput>;

/** The block of an `edit`: no children (add children with `create`). */
export const EditBlockSchema = v.strictObject(BlockBase);

const CreateMutation = v.strictObject({
  kind: v.literal('create'),
  beforeBlockId: NullableBlockId,
  parentBlockId: NullableBlockId,
  blocks: v.pipe(v.array(BlockSchema), v.minLength(1, 'needs 1-50 blocks'), v.maxLength(Limits.createBlocksMax, `at most ${Limits.createBlocksMax} blocks`)),
});

const EditMutation = v.strictObject({
  kind: v.literal('edit'),
  blockId: BlockIdSchema,
  block: EditBlockSchema,
});

const MoveMutation = v.strictObject({
  kind: v.literal('move'),
  blockIds: v.pipe(v.array(BlockIdSchema), v.minLength(1, 'needs 1-64 block ids'), v.maxLength(Limits.blockIdsMax, `at most ${Limits.blockIdsMax} block ids`)),
  beforeBlockId: NullableBlockId,
  newParentBlockId: NullableBlockId,
  oldParentBlockId: v.optional(NullableBlockId),
  newSiblingBlockIds: v.optional(v.pipe(v.array(BlockIdSchema), v.maxLength(Limits.fenceSiblingsMax, 'at most 2 block ids'))),
  oldSiblingBlockIds: v.optional(v.pipe(v.array(BlockIdSchema), v.maxLength(Limits.fenceSiblingsMax, 'at most 2 block ids'))),
});

const DeleteMutation = v.strictObject({
  kind: v.literal('delete'),
  blockIds: v.pipe(v.array(BlockIdSchema), v.minLength(1, 'needs 1-64 block ids'), v.maxLength(Limits.blockIdsMax, `at most ${Limits.blockIdsMax} block ids`)),
  parentBlockIds: v.optional(v.pipe(v.array(BlockIdSchema), v.maxLength(Limits.parentBlockIdsMax, 'at most 64 block ids'))),
  siblingBlockIds: v.optional(v.pipe(v.array(BlockIdSchema), v.maxLength(Limits.siblingBlockIdsMax, 'at most 128 block ids'))),
});

/** One of the four mutation kinds, discriminated by `kind`. */
export const MutationSchema = v.variant('kind', [CreateMutation, EditMutation, MoveMutation, DeleteMutation], 'must be one of create, edit, move, delete');

/** The contract's DocumentMutationRequest. */
export const DocumentMutationRequestSchema = v.strictObject({
  v: v.literal(1),
  intent: v.pipe(v.string(), v.minLength(1, 'must not be empty'), maxChars(Limits.intentMax, `must be at most ${Limits.intentMax} characters`)),
  mutation: MutationSchema,
});
export type DocumentMutationRequest = v.InferOutput<typeof DocumentMutationRequestSchema>;
export type Mutation = DocumentMutationRequest['mutation'];
export type CreateMutationInput = v.InferOutput<typeof CreateMutation>;
export type EditMutationInput = v.InferOutput<typeof EditMutation>;
export type MoveMutationInput = v.InferOutput<typeof MoveMutation>;
export type DeleteMutationInput = v.InferOutput<typeof DeleteMutation>;
