/**
 * Envelopes and responses, built as text so that the canonical document JSON is spliced in, never
 * re-stringified.
 * @module
 */
import type { ApiError } from '../errors.ts';
import type { IdempotencyReceipt } from '../documents/types.ts';
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

/** The success envelope around already-serialized `data`. */
export function successBody(ctx: RequestContext, dataJson: string, receipt?: IdempotencyReceipt, links?: readonly Link[]): string {
  let out = `{"data":${dataJson},"meta":${metaJson(ctx.requestId, ctx.clientRequestId)}`;
  if (links?.length) out += `,"links":${JSON.stringify(links)}`;
  if (receipt) out += `,"receipt":{"idempotency":"${receipt.idempotency}","receiptRef":${JSON.stringify(receipt.receiptRef)},"v":1}`;
  return `${out}}`;
}

/** The error envelope. */
export function errorBody(ctx: RequestContext, error: ApiError): string {
  return `{"error":${JSON.stringify(error)},"meta":${metaJson(ctx.requestId, ctx.clientRequestId)}}`;
}

/** Headers every response carries: X-Request-Id and, for an authenticated request, the remaining budget. */
export function baseHeaders(ctx: RequestContext, contentType: string | null): Record<string, string> {
  const headers: Record<string, string> = { 'x-request-id': ctx.requestId };
  if (contentType) headers['content-type'] = contentType;
  const cred = ctx.credential;
  if (cred) {
    const remaining = ctx.budget ? ctx.budget.remaining : ctx.engine.credentials.budget(cred).remaining;
    headers['x-service-requests-remaining'] = String(remaining);
  }
  return headers;
}

/** Options of {@link ok}. */
export interface OkOptions {
  headers?: Record<string, string>;
  receipt?: IdempotencyReceipt;
  links?: readonly Link[];
}

/** A JSON success response. */
export function ok(ctx: RequestContext, status: number, dataJson: string, options: OkOptions = {}): PlainResponse {
  const headers = baseHeaders(ctx, JSON_TYPE);
  if (options.headers) Object.assign(headers, options.headers);
  return { status, headers, body: successBody(ctx, dataJson, options.receipt, options.links) };
}
