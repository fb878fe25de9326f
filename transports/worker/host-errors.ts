/**
 * Error answers the host builds itself, when the worker cannot answer: the contract's error envelope
 * with a request id minted here, `Retry-After` on 503.
 * @module
 */
import { errorBody, JSON_TYPE } from '../../src/api/envelope.ts';
import type { PlainRequest, PlainResponse } from '../../src/api/types.ts';
import type { ApiError } from '../../src/errors.ts';
import { Patterns } from '../../src/ids.ts';

function requestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(14));
  let hex = 'req_';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  return hex;
}

function errorAnswer(request: PlainRequest, status: number, error: ApiError, extra: Record<string, string> = {}): PlainResponse {
  const id = requestId();
  const clientId = request.headers['x-request-id'];
  const body = errorBody({ requestId: id, clientRequestId: clientId !== undefined && Patterns.clientRequestId.test(clientId) ? clientId : undefined }, error);
  const headers = { 'x-request-id': id, 'content-type': JSON_TYPE, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', ...extra };
  return { status, headers, ...(request.method === 'HEAD' ? {} : { body }) };
}

/** 503 TEMPORARILY_UNAVAILABLE with `Retry-After` (whole seconds, at least 1) and `retryAfterMs`. */
export function hostUnavailable(request: PlainRequest, message: string, retryAfterMs: number): PlainResponse {
  const ms = Math.max(0, Math.min(86_400_000, Math.ceil(retryAfterMs)));
  return errorAnswer(
    request,
    503,
    { code: 'TEMPORARILY_UNAVAILABLE', message, retryable: true, retryAfterMs: ms },
    { 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))) },
  );
}

/** 500 INTERNAL_ERROR: the worker's handler threw, which it never should. */
export function internalError(request: PlainRequest): PlainResponse {
  return errorAnswer(request, 500, {
    code: 'INTERNAL_ERROR',
    message: 'An unexpected error occurred in the engine worker. Retry once with the same idempotency key, then report the requestId.',
    retryable: true,
  });
}
