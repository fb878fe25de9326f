/**
 * The document resources as the API shows them (Document, summaries, the blocks representation, the
 * mutation receipt), as valibot schemas. The published OpenAPI components and the TypeScript types of
 * the documents service are derived from these.
 * @remarks Response objects are open (`v.object`: clients must ignore fields they do not know).
 * @module
 */
import * as v from 'valibot';
import { BLOCK_TYPES } from '../blocks/model.ts';
import { int, MAX_SAFE, maxArray, pageOf, rangeArray, str } from '../schema-builders.ts';
import { DocumentRefSchema, Href, OperationRefSchema, ResponseBlockIdSchema, Sha256Schema, SpaceRefSchema, TimestampSchema } from '../values.ts';

/**
 * One block of the canonical editor JSON, shaped as the BlockNote editor shapes its blocks.
 * @remarks Recursive through `children`; converted with the `definitions` option.
 */
export const RichBlockSchema: v.GenericSchema = v.object({
  id: ResponseBlockIdSchema,
  type: v.string(),
  props: v.record(v.string(), v.unknown()),
  content: v.optional(v.unknown()),
  children: v.array(v.lazy(() => RichBlockSchema)),
});

export const RichDocumentSchema = v.pipe(
  v.object({ type: v.literal('blocks'), blocks: v.array(RichBlockSchema) }),
  v.description('The canonical editor JSON (BlockNote blocks). contentSha256 is the SHA-256 of its compact JSON.'),
);

export const DocumentSchema = v.object({
  v: v.literal(1),
  documentRef: DocumentRefSchema,
  spaceRef: SpaceRefSchema,
  title: str(1, 240),
  version: int(1, MAX_SAFE),
  format: v.literal('service-rich-document'),
  formatGeneration: v.literal(1),
  contentSha256: Sha256Schema,
  browserHref: Href,
  document: RichDocumentSchema,
});

export const DocumentSummarySchema = v.object({
  v: v.literal(1),
  documentRef: DocumentRefSchema,
  spaceRef: SpaceRefSchema,
  title: str(1, 240),
  version: int(1, MAX_SAFE),
  contentSha256: Sha256Schema,
  blockCount: int(0, 10_000),
  browserHref: Href,
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

export const DocumentPageSchema = pageOf(DocumentSummarySchema, 50);

export const FlatBlockSchema = v.object({
  id: ResponseBlockIdSchema,
  parentBlockId: v.nullable(ResponseBlockIdSchema),
  index: int(0, 10_000),
  depth: int(0, 10_000),
  type: v.picklist(BLOCK_TYPES),
  markdown: v.pipe(v.string(), v.description("The block's own Markdown: inline Markdown of a text block, the fenced block of a code block, the pipe table of a table.")),
  level: v.optional(v.picklist([1, 2, 3])),
  checked: v.optional(v.boolean()),
  code: v.optional(v.string()),
  language: v.optional(v.string()),
  rows: v.optional(v.array(v.array(v.string()))),
  citations: v.pipe(v.array(v.string()), v.description('Exact https URLs the block cites.')),
});

export const BlocksRepresentationSchema = v.pipe(
  v.object({
    v: v.optional(v.literal(1)),
    documentRef: DocumentRefSchema,
    version: int(1, MAX_SAFE),
    blocks: v.pipe(maxArray(FlatBlockSchema, 10_000), v.description('Every authored block in document order.')),
  }),
  v.description('format=blocks: a flat list of authored blocks, each with its stable id, parent, index and own Markdown.'),
);

export const MutationReceiptSchema = v.object({
  v: v.literal(1),
  documentRef: DocumentRefSchema,
  operationRef: OperationRefSchema,
  baseVersion: int(1, MAX_SAFE - 1),
  resultingVersion: int(2, MAX_SAFE),
  contentSha256: Sha256Schema,
  affectedBlockIds: rangeArray(ResponseBlockIdSchema, 1, 256),
});

export const DocumentMutationResultSchema = v.object({
  v: v.literal(1),
  document: DocumentSchema,
  receipt: MutationReceiptSchema,
});

/** An item of the document list (no body). */
export type DocumentSummary = v.InferOutput<typeof DocumentSummarySchema>;
/** One entry of the `blocks` representation. */
export type FlatBlock = v.InferOutput<typeof FlatBlockSchema>;
/** The receipt of an applied mutation. */
export type MutationReceipt = v.InferOutput<typeof MutationReceiptSchema>;
