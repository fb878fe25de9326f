/**
 * The one error type of the typed client: an error answer of the API (its envelope's fields), or a
 * request that never got an answer (network failure, a body that is not the contract's envelope).
 * @module
 */
import type { ErrorCode, FieldError, RequiredAction } from '../errors.ts';

/** Codes the client adds for failures that are not answers of the API. */
export type ClientErrorCode = 'NETWORK_ERROR' | 'INVALID_RESPONSE';

/** What {@link ApiClientError} is built from. */
export interface ApiClientErrorInit {
  status: number;
  code: ErrorCode | ClientErrorCode;
  message: string;
  retryable: boolean;
  fieldErrors?: FieldError[] | undefined;
  requiredAction?: RequiredAction | undefined;
  retryAfterMs?: number | undefined;
  requestId?: string | undefined;
  clientRequestId?: string | undefined;
  operationId: string;
  /** Requests sent for this call, retries included. */
  attempts: number;
  cause?: unknown;
}

/**
 * An error answer (status ≥ 400, the contract's error envelope) or a failure to get one.
 * @remarks Recognise it with {@link isApiClientError} (by name), which also holds across bundles and
 * realms where `instanceof` does not. `status` is 0 for `NETWORK_ERROR`.
 */
export class ApiClientError extends Error {
  override readonly name = 'ApiClientError';
  readonly status: number;
  readonly code: ErrorCode | ClientErrorCode;
  readonly retryable: boolean;
  readonly fieldErrors: FieldError[];
  readonly requiredAction: RequiredAction | undefined;
  readonly retryAfterMs: number | undefined;
  readonly requestId: string | undefined;
  readonly clientRequestId: string | undefined;
  readonly operationId: string;
  readonly attempts: number;

  constructor(init: ApiClientErrorInit) {
    super(`${init.operationId}: ${init.status ? `${init.status} ` : ''}${init.code}: ${init.message}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.retryable = init.retryable;
    this.fieldErrors = init.fieldErrors ?? [];
    this.requiredAction = init.requiredAction;
    this.retryAfterMs = init.retryAfterMs;
    this.requestId = init.requestId;
    this.clientRequestId = init.clientRequestId;
    this.operationId = init.operationId;
    this.attempts = init.attempts;
  }
}

/** True for an {@link ApiClientError} (matched by name and code, not prototype). */
export function isApiClientError(value: unknown): value is ApiClientError {
  return typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'ApiClientError' && typeof (value as { code?: unknown }).code === 'string';
}
