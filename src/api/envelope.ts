/**
 * Envelopes and responses, built as text so that the canonical document JSON is spliced in, never
 * re-stringified.
 * @module
 */
import type { ApiError } from '../errors.ts';
import type { IdempotencyReceipt } from '../documents/types.ts';
import { concatBytes } from '../text.ts';
import type { RequestContext } from './context.ts';
import type { PlainResponse } from './types.ts';

/** Content type of every JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** A link of the success envelope. */
export interface Link {
  href: string;
  rel: string;
}

/** `meta` as JSON text. requestId and clientRequestId match safe patterns, so no escaping is needed. */
export function metaJson(requestId: string, clientRequestId: string | undefined): string {
  return clientRequestId === undefined
    ? `{"apiVersion":"1","requestId":"${requestId}"}`
    : `{"apiVersion":"1","requestId":"${requestId}","clientRequestId":"${clientRequestId}"}`;
}

/** JSON text, or pieces of it (text and UTF-8 bytes) to be sent one after the other. */
export type JsonPieces = string | Uint8Array | readonly (string | Uint8Array)[];

const encoder = new TextEncoder();

/** The pieces as one body: text when they are all text, else one byte array (strings encoded as UTF-8). */
export function joinPieces(pieces: readonly (string | Uint8Array)[]): string | Uint8Array {
  let text = '';
  let allText = true;
  for (const p of pieces) {
    if (typeof p === 'string') text += p;
    else allText = false;
  }
  if (allText) return text;
  return concatBytes(pieces.map((p) => (typeof p === 'string' ? encoder.encode(p) : p)));
}

/**
 * The success envelope around already-serialized `data`.
 * @returns text, or bytes when `data` holds bytes (a large document: see `documentDataBody`).
 */
export function successBody(ctx: RequestContext, data: JsonPieces, receipt?: IdempotencyReceipt, links?: readonly Link[]): string | Uint8Array {
  let tail = `,"meta":${metaJson(ctx.requestId, ctx.clientRequestId)}`;
  if (links?.length) tail += `,"links":${JSON.stringify(links)}`;
  if (receipt) tail += `,"receipt":{"idempotency":"${receipt.idempotency}","receiptRef":${JSON.stringify(receipt.receiptRef)},"v":1}`;
  tail += '}';
  if (typeof data === 'string') return `{"data":${data}${tail}`;
  return joinPieces(data instanceof Uint8Array ? ['{"data":', data, tail] : ['{"data":', ...data, tail]);
}

/** The error envelope. */
export function errorBody(ctx: Pick<RequestContext, 'requestId' | 'clientRequestId'>, error: ApiError): string {
  return `{"error":${JSON.stringify(error)},"meta":${metaJson(ctx.requestId, ctx.clientRequestId)}}`;
}

/** Headers every response carries: X-Request-Id and, for an authenticated request, the budget (remaining, limit, reset). */
export function baseHeaders(ctx: RequestContext, contentType: string | null): Record<string, string> {
  const headers: Record<string, string> = { 'x-request-id': ctx.requestId };
  if (contentType) headers['content-type'] = contentType;
  const cred = ctx.credential;
  if (cred) {
    const budget = ctx.budget ?? ctx.engine.credentials.budget(cred);
    headers['x-service-requests-remaining'] = String(budget.remaining);
    // The IETF draft's names for the same budget (declared on every 2XX/4XX in the OpenAPI document).
    headers['ratelimit-limit'] = String(budget.limit);
    headers['ratelimit-reset'] = String(Math.max(0, Math.ceil((budget.windowEnd - ctx.engine.deps.clock.now()) / 1000)));
  }
  return headers;
}

/** Options of {@link ok}. */
export interface OkOptions {
  headers?: Record<string, string>;
  receipt?: IdempotencyReceipt;
  links?: readonly Link[];
}

/** A JSON success response; `dataJson` may come in pieces (see {@link successBody}). */
export function ok(ctx: RequestContext, status: number, dataJson: JsonPieces, options: OkOptions = {}): PlainResponse {
  const headers = baseHeaders(ctx, JSON_TYPE);
  if (options.headers) Object.assign(headers, options.headers);
  return { status, headers, body: successBody(ctx, dataJson, options.receipt, options.links) };
}
