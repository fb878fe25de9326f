/**
 * What the library commands answer, as valibot schemas: the published OpenAPI shapes of
 * `POST /api/v1/library` and the upload PUT, and the source of the result types.
 * @remarks Response objects are open (`v.object`): clients ignore fields they do not know.
 * @module
 */
import * as v from 'valibot';
import { Sha256Schema, TimestampSchema } from '../values.ts';
import { CAPTURE_FAILURE_CODES } from './capture-port.ts';
import { SelectionSchema } from './schemas.ts';


/** The capture status of a source item. */
export const CaptureStatusSchema = v.object({
  state: v.picklist(['pending', 'ready', 'partial', 'failed']),
  reason: v.nullable(v.object({ code: v.picklist([...CAPTURE_FAILURE_CODES, 'truncated']), message: v.string() })),
  captureId: v.nullable(v.string()),
  representationId: v.nullable(v.string()),
  format: v.nullable(v.picklist(['html', 'pdf'])),
  capturedAt: v.nullable(TimestampSchema),
});

/** A library item as clients see it: a source (saved link or upload), a highlight or a note. */
export const LibraryItemSchema = v.object({
  itemId: v.string(),
  kind: v.picklist(['source', 'highlight', 'note']),
  revision: v.pipe(v.number(), v.integer(), v.minValue(1)),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  read: v.boolean(),
  archived: v.boolean(),
  url: v.optional(v.string()),
  origin: v.optional(v.picklist(['link', 'upload'])),
  uploadId: v.optional(v.string()),
  fileName: v.optional(v.string()),
  title: v.optional(v.nullable(v.string())),
  capture: v.optional(CaptureStatusSchema),
  sourceId: v.optional(v.string()),
  selections: v.optional(v.array(SelectionSchema)),
  markdown: v.optional(v.string()),
});

/** One block of a reader page; `length` counts code points (selection offsets do too). */
export const ReaderBlockSchema = v.object({ blockId: v.string(), text: v.string(), length: v.pipe(v.number(), v.integer(), v.minValue(0)) });

/** A reader page: the source, and its capture (null while pending or when it failed). */
export const ReaderPageSchema = v.object({
  source: LibraryItemSchema,
  capture: v.nullable(
    v.object({
      captureId: v.string(),
      representationId: v.string(),
      format: v.picklist(['html', 'pdf']),
      url: v.string(),
      title: v.nullable(v.string()),
      byline: v.nullable(v.string()),
      blocks: v.array(ReaderBlockSchema),
    }),
  ),
});

/** A prepared upload as the library answers it; where the bytes go (method and path) is the edge's to say. */
export const PendingUploadSchema = v.object({
  uploadId: v.string(),
  byteLength: v.pipe(v.number(), v.integer(), v.minValue(1)),
  expiresAt: TimestampSchema,
});

/** Where and how to send the bytes of a prepared upload, as clients see it (the edge adds method and path). */
export const PreparedUploadSchema = v.object({
  uploadId: v.string(),
  method: v.literal('PUT'),
  path: v.string(),
  byteLength: v.pipe(v.number(), v.integer(), v.minValue(1)),
  expiresAt: TimestampSchema,
});

/** What the upload PUT received. */
export const ReceivedUploadSchema = v.object({ uploadId: v.string(), receivedBytes: v.pipe(v.number(), v.integer(), v.minValue(0)), sha256: Sha256Schema });

/**
 * The receipt of a keyed write (the edge carries it in the envelope's `receipt`, not in `data`);
 * null for a set-reading-state sent without a key.
 */
const WriteReceiptSchema = v.object({ idempotency: v.picklist(['created', 'replayed']), receiptRef: v.string(), v: v.literal(1) });

/** The answer of each command type. */
export const LibraryResultSchema = v.variant('type', [
  v.object({ type: v.picklist(['save-link', 'highlight', 'create-note', 'set-reading-state', 'finish-upload', 'recapture']), item: LibraryItemSchema, created: v.boolean(), receipt: v.optional(v.nullable(WriteReceiptSchema)) }),
  v.object({ type: v.literal('get'), item: LibraryItemSchema }),
  v.object({ type: v.literal('list'), items: v.array(LibraryItemSchema), nextCursor: v.nullable(v.string()) }),
  v.object({ type: v.literal('reader-page'), page: ReaderPageSchema }),
  v.object({ type: v.literal('prepare-upload'), upload: PreparedUploadSchema, created: v.boolean(), receipt: v.optional(v.nullable(WriteReceiptSchema)) }),
]);

export type LibraryItem = v.InferOutput<typeof LibraryItemSchema>;
export type ReaderBlock = v.InferOutput<typeof ReaderBlockSchema>;
export type ReaderPage = v.InferOutput<typeof ReaderPageSchema>;
export type PreparedUpload = v.InferOutput<typeof PreparedUploadSchema>;
export type ReceivedUpload = v.InferOutput<typeof ReceivedUploadSchema>;
/** A library answer as clients see it (over HTTP). */
export type LibraryResult = v.InferOutput<typeof LibraryResultSchema>;
export type PendingUpload = v.InferOutput<typeof PendingUploadSchema>;
/** A library answer as the domain gives it: a prepared upload without its method and path (the edge adds them). */
export type LibraryAnswer =
  | Exclude<LibraryResult, { type: 'prepare-upload' }>
  | { type: 'prepare-upload'; upload: PendingUpload; created: boolean; receipt?: { idempotency: 'created' | 'replayed'; receiptRef: string; v: 1 } | null | undefined };
