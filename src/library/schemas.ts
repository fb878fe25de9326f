/**
 * The library commands: one strict valibot schema per `type`, joined by `variant('type', …)`.
 * Unknown types and unknown fields are refused with fieldErrors; the types of the domain are the
 * schemas' outputs. Field names and shapes are described in docs/library.md.
 * @module
 */
import * as v from 'valibot';
import { codePointLength, maxChars } from '../documents/schemas.ts';
import { invalid } from '../errors.ts';
import { Patterns } from '../ids.ts';


/** Most selections one highlight may carry. */
export const MAX_SELECTIONS = 64;
/** Longest `exact` passage, in code points. */
export const MAX_EXACT = 4096;
/** Longest prefix or suffix context, in code points. */
export const MAX_CONTEXT = 256;
/** Longest note body, in code points. */
export const MAX_NOTE = 65_536;
/** Longest URL accepted by save-link. */
export const MAX_URL = 2048;

/** Length in code points (the contract counts string limits in code points). */
export { codePointLength };

/** A string of `min`-`max` code points; stays `min_length`/`max_length` actions, so it is published as JSON Schema. */
const text = (max: number, min = 0) =>
  min > 0
    ? v.pipe(v.string(), v.minLength(min, `must be ${min}-${max} characters`), maxChars(max, `must be ${min}-${max} characters`))
    : v.pipe(v.string(), maxChars(max, `must be at most ${max} characters`));
const id = (pattern: RegExp, what: string) => v.pipe(v.string(), v.regex(pattern, `must be a ${what}`));
const offset = v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be at least 0'), v.maxValue(10_000_000, 'must be at most 10000000'));
/** Longest library idempotency key, in code points. */
export const MAX_LIBRARY_KEY = 256;
/**
 * A library idempotency key (decisions.md, "The library"): any string of 16-256 characters without
 * control characters. The MCP save-link tool's `requestKey` follows the same rule.
 */
export const LibraryKeySchema = v.pipe(
  v.string(),
  v.minLength(16, `must be 16-${MAX_LIBRARY_KEY} characters without control characters`),
  maxChars(MAX_LIBRARY_KEY, `must be 16-${MAX_LIBRARY_KEY} characters without control characters`),
  v.regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, 'must not contain control characters'),
);
const IdempotencyKey = LibraryKeySchema;

const URL_MESSAGE = 'must be an absolute http or https URL without user name or password';
const httpUrl = v.pipe(
  v.string(),
  v.maxLength(MAX_URL, `must be at most ${MAX_URL} characters`),
  v.regex(/^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^\s/?#@]+(?:[/?#]\S*)?$/, URL_MESSAGE),
  v.url(URL_MESSAGE),
);

/** One selection of a highlight: a passage of one block of one capture representation. */
export const SelectionSchema = v.strictObject({
  captureId: id(Patterns.captureId, 'captureId'),
  representationId: id(Patterns.representationId, 'representationId'),
  blockId: id(Patterns.blockId, 'blockId'),
  /** Start offset in the block text, in code points (inclusive). */
  start: offset,
  /** End offset in the block text, in code points (exclusive). */
  end: offset,
  exact: text(MAX_EXACT, 1),
  prefix: text(MAX_CONTEXT),
  suffix: text(MAX_CONTEXT),
});

export const SaveLinkSchema = v.strictObject({ type: v.literal('save-link'), url: httpUrl, idempotencyKey: IdempotencyKey });
export const ListSchema = v.strictObject({
  type: v.literal('list'),
  limit: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be 1-50'), v.maxValue(50, 'must be 1-50'))),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(1024))),
});
/** `get` names its target as `itemId` (any item) or `sourceId` (a source); exactly one of them. */
export const GetSchema = v.strictObject({
  type: v.literal('get'),
  itemId: v.optional(id(Patterns.itemId, 'itemId')),
  sourceId: v.optional(id(Patterns.itemId, 'sourceId')),
});
export const ReaderPageCommandSchema = v.strictObject({ type: v.literal('reader-page'), sourceId: id(Patterns.itemId, 'sourceId') });
export const HighlightSchema = v.strictObject({
  type: v.literal('highlight'),
  sourceId: id(Patterns.itemId, 'sourceId'),
  selections: v.pipe(v.array(SelectionSchema), v.minLength(1, 'must hold at least one selection'), v.maxLength(MAX_SELECTIONS, `must hold at most ${MAX_SELECTIONS} selections`)),
  idempotencyKey: IdempotencyKey,
});
export const CreateNoteSchema = v.strictObject({
  type: v.literal('create-note'),
  sourceId: id(Patterns.itemId, 'sourceId'),
  markdown: text(MAX_NOTE, 1),
  idempotencyKey: IdempotencyKey,
});
export const SetReadingStateSchema = v.strictObject({
  type: v.literal('set-reading-state'),
  itemId: v.optional(id(Patterns.itemId, 'itemId')),
  sourceId: v.optional(id(Patterns.itemId, 'sourceId')),
  expectedRevision: v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1')),
  read: v.boolean(),
  archived: v.boolean(),
  /** Optional: the write is guarded by expectedRevision. */
  idempotencyKey: v.optional(IdempotencyKey),
});
export const PrepareUploadSchema = v.strictObject({
  type: v.literal('prepare-upload'),
  fileName: v.pipe(text(255, 1), v.regex(/^[^/\\\u0000-\u001f]+$/, 'must be a plain file name without slashes or control characters')),
  contentType: v.pipe(v.string(), v.maxLength(255), v.regex(/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/, 'must be a media type such as application/pdf')),
  byteLength: v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1')),
  idempotencyKey: IdempotencyKey,
});
export const FinishUploadSchema = v.strictObject({
  type: v.literal('finish-upload'),
  uploadId: id(Patterns.uploadId, 'uploadId'),
  sha256: v.optional(v.pipe(v.string(), v.regex(Patterns.sha256, 'must be 64 lowercase hex characters'))),
  idempotencyKey: IdempotencyKey,
});
/** Capture a source whose capture failed once more (a fresh fetch; link sources only). */
export const RecaptureSchema = v.strictObject({ type: v.literal('recapture'), sourceId: id(Patterns.itemId, 'sourceId'), idempotencyKey: IdempotencyKey });
export const PrepareImportSchema = v.strictObject({
  type: v.literal('prepare-import'),
  source: v.optional(v.pipe(v.string(), v.maxLength(256))),
  idempotencyKey: v.optional(IdempotencyKey),
});

/** Every library command, discriminated by `type`. */
export const LibraryCommandSchema = v.variant(
  'type',
  [
    SaveLinkSchema,
    ListSchema,
    GetSchema,
    ReaderPageCommandSchema,
    HighlightSchema,
    CreateNoteSchema,
    SetReadingStateSchema,
    PrepareUploadSchema,
    FinishUploadSchema,
    RecaptureSchema,
    PrepareImportSchema,
  ],
  'must be one of save-link, list, get, reader-page, highlight, create-note, set-reading-state, prepare-upload, finish-upload, recapture, prepare-import',
);

export type LibraryCommand = v.InferOutput<typeof LibraryCommandSchema>;
export type LibraryCommandType = LibraryCommand['type'];
export type Selection = v.InferOutput<typeof SelectionSchema>;
export type SaveLinkCommand = v.InferOutput<typeof SaveLinkSchema>;
export type ListCommand = v.InferOutput<typeof ListSchema>;
export type HighlightCommand = v.InferOutput<typeof HighlightSchema>;
export type CreateNoteCommand = v.InferOutput<typeof CreateNoteSchema>;
export type SetReadingStateCommand = v.InferOutput<typeof SetReadingStateSchema>;
export type PrepareUploadCommand = v.InferOutput<typeof PrepareUploadSchema>;
export type FinishUploadCommand = v.InferOutput<typeof FinishUploadSchema>;
export type RecaptureCommand = v.InferOutput<typeof RecaptureSchema>;

/** Command types whose first application stores a new item or upload (201 at the edge). */
export const LIBRARY_CREATING_TYPES: ReadonlySet<string> = new Set(['save-link', 'highlight', 'create-note', 'prepare-upload', 'finish-upload']);

/** Command types that only read. */
export const LIBRARY_READ_TYPES: ReadonlySet<string> = new Set(['list', 'get', 'reader-page']);
/** Every command type. */
export const LIBRARY_COMMAND_TYPES: readonly LibraryCommandType[] = [
  'save-link', 'list', 'get', 'reader-page', 'highlight', 'create-note', 'set-reading-state', 'prepare-upload', 'finish-upload', 'recapture', 'prepare-import',
];

/**
 * The scope a command type needs: `library:read` for list, get and reader-page, `library:write` for
 * every other type (including an unknown one, so that the edge never grants less than a write needs).
 */
export function requiredScope(type: string): 'library:read' | 'library:write' {
  return LIBRARY_READ_TYPES.has(type) ? 'library:read' : 'library:write';
}

/**
 * The scope an unparsed command body needs, read before the command runs; INVALID_REQUEST when the
 * body is no command object with a string `type`.
 */
export function scopeOfCommand(body: unknown): 'library:read' | 'library:write' {
  const type = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { type?: unknown }).type : undefined;
  if (typeof type !== 'string') throw invalid('The library body is a command object with a type field.', [{ field: 'type', message: 'is required' }]);
  return requiredScope(type);
}

/**
 * The item a `get` or `set-reading-state` names: `itemId` or `sourceId`, exactly one of them.
 * @returns the id and the role it was given in (`sourceId` must name a source)
 */
export function commandTarget(command: { itemId?: string | undefined; sourceId?: string | undefined }): { id: string; role: 'itemId' | 'sourceId' } {
  if (command.itemId !== undefined && command.sourceId !== undefined) {
    throw invalid('Name the item by itemId or by sourceId, not both.', [
      { field: 'itemId', message: 'must not be given together with sourceId' },
      { field: 'sourceId', message: 'must not be given together with itemId' },
    ]);
  }
  if (command.itemId !== undefined) return { id: command.itemId, role: 'itemId' };
  if (command.sourceId !== undefined) return { id: command.sourceId, role: 'sourceId' };
  throw invalid('Name the item by itemId (any item) or sourceId (a source).', [{ field: 'itemId', message: 'itemId or sourceId is required' }]);
}
