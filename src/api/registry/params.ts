/**
 * Parameters several operations share, declared once. Patterns come from `ids.ts`, the one place the
 * identifier grammar lives.
 * @module
 */
import * as v from 'valibot';
import { Patterns } from '../../ids.ts';
import type { HeaderDef, ParamDef } from './operation.ts';

const pattern = (re: RegExp, description: string) => v.pipe(v.string(), v.regex(re), v.description(description));
const decimal = v.pipe(v.string(), v.regex(/^(0|[1-9][0-9]{0,15})$/, 'must be a decimal event id'), v.description('A decimal event sequence, exactly as carried by an event id.'));

/** `Idempotency-Key`: every write needs one. */
export const IdempotencyKeyHeader: HeaderDef = {
  name: 'Idempotency-Key',
  required: true,
  schema: pattern(Patterns.idempotencyKey, '16-128 letters, digits, underscores or hyphens.'),
  description:
    'Every write needs one (missing: 400 IDEMPOTENCY_REQUIRED). An exact retry reuses key, body and revision; a new intent needs a new key (same key, other request: 409 IDEMPOTENCY_CONFLICT).',
};

/** `Idempotency-Key` of operator writes (review decisions, credential creation): optional; with one, a repeat replays. */
export const OptionalIdempotencyKeyHeader: HeaderDef = {
  ...IdempotencyKeyHeader,
  required: false,
  description: 'Optional. With a key, an exact repeat (same key and body) replays the first answer (receipt.idempotency replayed) instead of applying again; the same key with another request is 409 IDEMPOTENCY_CONFLICT.',
};

/** `Service-If-Revision`: the revision precondition of semantic writes. */
export const IfRevisionHeader: HeaderDef = {
  name: 'Service-If-Revision',
  required: true,
  schema: v.pipe(v.string(), v.minLength(1)),
  description: 'The exact Service-Revision of the last read. Missing: 428 PRECONDITION_REQUIRED; stale: 412 PRECONDITION_FAILED.',
};

/** `If-None-Match` of conditional reads. */
export const IfNoneMatchHeader: HeaderDef = {
  name: 'If-None-Match',
  schema: v.string(),
  description: 'The ETag of an earlier read; 304 when unchanged. Never a write precondition.',
};

/** `Last-Event-ID`: resume an event stream. */
export const LastEventIdHeader: HeaderDef = {
  name: 'Last-Event-ID',
  schema: decimal,
  description: 'Resume a stream after this event id (the decimal sequence exactly as carried by the id field). Invalid: 400.',
};

/** `Accept` of the events operation: the stream form when it includes text/event-stream. */
export const AcceptEventsHeader: HeaderDef = {
  name: 'Accept',
  schema: v.string(),
  description: 'Send text/event-stream for the stream form; otherwise a JSON page is returned.',
};

/** `X-Request-Id`: optional, echoed as meta.clientRequestId; checked by the handler for every operation. */
export const ClientRequestIdHeader: HeaderDef = {
  name: 'X-Request-Id',
  schema: pattern(/^[A-Za-z0-9_-]{16,128}$/, '16-128 letters, digits, underscores or hyphens.'),
  description: 'Optional client request id, echoed as meta.clientRequestId (the server always mints its own). Outside 16-128 characters: 400.',
};

/** `limit` of list operations. */
export const LimitQuery: ParamDef = {
  schema: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50), v.description('Page size, 1-50, default 20.')),
  description: 'Page size (1-50, default 20).',
};

/** `cursor` of list operations. */
export const CursorQuery: ParamDef = {
  schema: v.pipe(v.string(), v.minLength(1)),
  description: 'The nextCursor of the prior page, sent back unchanged. A cursor of another list or credential: 400.',
};

/** `after` of the events operation. */
export const AfterQuery: ParamDef = {
  schema: decimal,
  description: 'Return events whose eventId is greater than this decimal sequence. Invalid: 400.',
};

/** A path parameter matching an identifier pattern. */
export function pathId(re: RegExp, description: string): ParamDef {
  return { schema: pattern(re, description), description, required: true };
}

/** The list-operation query parameters. */
export const pageQuery = { limit: LimitQuery, cursor: CursorQuery } as const;
