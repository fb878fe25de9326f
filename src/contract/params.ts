/**
 * Parameters several operations share, declared once. Patterns come from `ids.ts`, the one place the
 * identifier grammar lives; the page size rule from `limits.ts`.
 * @module
 */
import * as v from 'valibot';
import { Patterns } from '../ids.ts';
import { LIST_LIMIT } from '../limits.ts';
import type { HeaderDef, ParamDef } from './define.ts';

const pattern = (re: RegExp, description: string) => v.pipe(v.string(), v.regex(re, `must be ${description.replace(/\.$/, '').replace(/^./, (c) => c.toLowerCase())}`), v.description(description));
const decimal = v.pipe(v.string(), v.regex(/^(0|[1-9][0-9]{0,15})$/, 'must be a decimal event id'), v.description('A decimal event sequence, exactly as carried by an event id.'));

/** `Idempotency-Key`: every write needs one (missing: the domain answers IDEMPOTENCY_REQUIRED). */
export const IdempotencyKeyHeader = {
  name: 'Idempotency-Key',
  required: true,
  emptyIsAbsent: true,
  schema: pattern(Patterns.idempotencyKey, '16-128 letters, digits, underscores or hyphens.'),
  message: 'must be 16-128 characters of letters, digits, underscores or hyphens',
  description:
    'Every write needs one (missing: 400 IDEMPOTENCY_REQUIRED). An exact retry reuses key, body and revision; a new intent needs a new key (same key, other request: 409 IDEMPOTENCY_CONFLICT).',
} as const satisfies HeaderDef;

/** `Idempotency-Key` of operator writes (review decisions, credential creation): optional; with one, a repeat replays. */
export const OptionalIdempotencyKeyHeader = {
  ...IdempotencyKeyHeader,
  required: false,
  description:
    'Optional. With a key, an exact repeat (same key and body) replays the first answer (receipt.idempotency replayed) instead of applying again; the same key with another request is 409 IDEMPOTENCY_CONFLICT.',
} as const satisfies HeaderDef;

/** `Service-If-Revision`: the revision precondition of semantic writes (its grammar is the resource's). */
export const IfRevisionHeader = {
  name: 'Service-If-Revision',
  required: true,
  emptyIsAbsent: true,
  schema: v.pipe(v.string(), v.minLength(1)),
  description: 'The exact Service-Revision of the last read. Missing: 428 PRECONDITION_REQUIRED; stale: 412 PRECONDITION_FAILED.',
} as const satisfies HeaderDef;

/** `If-None-Match` of conditional reads. */
export const IfNoneMatchHeader = {
  name: 'If-None-Match',
  schema: v.string(),
  description: 'The ETag of an earlier read; 304 when unchanged. Never a write precondition.',
} as const satisfies HeaderDef;

/** `Last-Event-ID`: resume an event stream. */
export const LastEventIdHeader = {
  name: 'Last-Event-ID',
  schema: decimal,
  description: 'Resume a stream after this event id (the decimal sequence exactly as carried by the id field). Invalid: 400.',
} as const satisfies HeaderDef;

/** `Accept` of the events operation: the stream form when it includes text/event-stream. */
export const AcceptEventsHeader = {
  name: 'Accept',
  schema: v.string(),
  description: 'Send text/event-stream for the stream form; otherwise a JSON page is returned.',
} as const satisfies HeaderDef;

/** `X-Request-Id`: optional, echoed as meta.clientRequestId; checked by the edge on every answer under /api/v1. */
export const ClientRequestIdHeader = {
  name: 'X-Request-Id',
  schema: pattern(Patterns.clientRequestId, '16-128 letters, digits, underscores or hyphens.'),
  message: 'must be 16-128 letters, digits, underscores or hyphens',
  description: 'Optional client request id, echoed as meta.clientRequestId (the server always mints its own). Outside 16-128 characters: 400.',
} as const satisfies HeaderDef;

/** `limit` of list operations: the one page-size rule. */
export const LimitQuery = {
  schema: v.pipe(v.number(), v.integer(), v.minValue(LIST_LIMIT.min), v.maxValue(LIST_LIMIT.max), v.description(`Page size, ${LIST_LIMIT.min}-${LIST_LIMIT.max}, default ${LIST_LIMIT.default}.`)),
  decode: 'integer',
  default: LIST_LIMIT.default,
  message: `must be an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}`,
  description: `Page size (${LIST_LIMIT.min}-${LIST_LIMIT.max}, default ${LIST_LIMIT.default}).`,
} as const satisfies ParamDef;

/** `cursor` of list operations. */
export const CursorQuery = {
  schema: v.pipe(v.string(), v.minLength(1)),
  message: 'is not a valid cursor of this list for this credential',
  description: 'The nextCursor of the prior page, sent back unchanged. A cursor of another list or credential: 400.',
} as const satisfies ParamDef;

/** `after` of the events operation. */
export const AfterQuery = {
  schema: decimal,
  description: 'Return events whose eventId is greater than this decimal sequence. Invalid: 400 (also when Last-Event-ID is sent).',
} as const satisfies ParamDef;

/** A path parameter matching an identifier pattern (a malformed value names nothing: 404). */
export function pathId(re: RegExp, description: string) {
  return { schema: v.pipe(v.string(), v.regex(re), v.description(description)), description, required: true } as const satisfies ParamDef;
}

/** The list-operation query parameters. */
export const pageQuery = { limit: LimitQuery, cursor: CursorQuery } as const;

/** The kinds of public artifacts, as a path parameter. */
export const ArtifactKindPath = {
  schema: v.picklist(['entity', 'inquiry', 'edition']),
  description: 'entity, inquiry or edition.',
  required: true,
} as const satisfies ParamDef;
