/**
 * Errors as responses: the one place an error becomes a status, an envelope and headers.
 * @module
 */
import { isServiceError, ServiceError, type ApiError } from '../errors.ts';
import { isStorageUnavailable } from '../ports.ts';
import type { RequestContext } from './context.ts';
import { baseHeaders, errorBody, JSON_TYPE } from './envelope.ts';
import { retryAfterSeconds } from './http-util.ts';
import { statusOf } from './status.ts';
import type { PlainResponse } from './types.ts';

/** Retry-After given on a 503 whose error names no delay: surfaces do not come and go quickly. */
export const DEFAULT_UNAVAILABLE_RETRY_MS = 300_000;

/** The `error` object of any ServiceError, also of a structured clone (which lacks methods). */
export function apiErrorOf(e: ServiceError): ApiError {
  const out: ApiError = { code: e.code, message: e.message, retryable: e.retryable };
  if (e.fieldErrors?.length) out.fieldErrors = e.fieldErrors;
  if (e.requiredAction) out.requiredAction = e.requiredAction;
  if (e.retryAfterMs !== undefined) out.retryAfterMs = e.retryAfterMs;
  return out;
}

/** The error response of a ServiceError: status from the one table, Retry-After on 429 and 503. */
export function errorResponse(ctx: RequestContext, e: ServiceError, extraHeaders?: Record<string, string>): PlainResponse {
  const error = apiErrorOf(e);
  const status = statusOf(error.code);
  const headers = baseHeaders(ctx, JSON_TYPE);
  if ((status === 429 || status === 503) && error.retryAfterMs === undefined) error.retryAfterMs = status === 503 ? DEFAULT_UNAVAILABLE_RETRY_MS : 1000;
  // 429 and 503 always, and any other error that names a delay (409 REPORT_NOT_READY) carry Retry-After.
  if (error.retryAfterMs !== undefined) headers['retry-after'] = retryAfterSeconds(error.retryAfterMs);
  if (extraHeaders) Object.assign(headers, extraHeaders);
  return { status, headers, body: errorBody(ctx, error) };
}

/**
 * Any throwable as a response. Unknown throwables become INTERNAL_ERROR and are logged once, with
 * the requestId, through `log`.
 */
export function failureResponse(ctx: RequestContext, e: unknown, log: (line: object) => void): PlainResponse {
  if (isServiceError(e)) return errorResponse(ctx, e);
  if (isStorageUnavailable(e)) {
    return errorResponse(ctx, new ServiceError('TEMPORARILY_UNAVAILABLE', 'The storage cannot be reached right now; nothing was acknowledged. Retry with the same idempotency key.', { retryAfterMs: 1000 }));
  }
  const err = e instanceof Error ? e : new Error(String(e));
  log({
    level: 'error',
    msg: 'unhandled error',
    requestId: ctx.requestId,
    method: ctx.request.method,
    url: ctx.request.url.slice(0, 512),
    error: err.message,
    stack: err.stack,
  });
  return errorResponse(
    ctx,
    new ServiceError('INTERNAL_ERROR', `An unexpected error occurred. Retry once with the same idempotency key, then report requestId ${ctx.requestId}.`),
  );
}
