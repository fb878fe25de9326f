/**
 * The one error type every layer throws. It carries the contract's error code and everything the
 * error envelope can say; the HTTP status is decided once, in `src/api/status.ts`.
 * @module
 */

/** Error codes of the contract, including the three it emits outside its enum. */
export const ErrorCode = {
  INVALID_REQUEST: 'INVALID_REQUEST',
  AUTH_REQUIRED: 'AUTH_REQUIRED',
  AUTH_AMBIGUOUS: 'AUTH_AMBIGUOUS',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  IDEMPOTENCY_REQUIRED: 'IDEMPOTENCY_REQUIRED',
  IDEMPOTENCY_CONFLICT: 'IDEMPOTENCY_CONFLICT',
  PRECONDITION_REQUIRED: 'PRECONDITION_REQUIRED',
  PRECONDITION_FAILED: 'PRECONDITION_FAILED',
  CONFLICT: 'CONFLICT',
  RATE_LIMITED: 'RATE_LIMITED',
  TEMPORARILY_UNAVAILABLE: 'TEMPORARILY_UNAVAILABLE',
  AGENT_RUN_REQUIRED: 'AGENT_RUN_REQUIRED',
  JOB_FAILED: 'JOB_FAILED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  REPORT_NOT_READY: 'REPORT_NOT_READY',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  FEATURE_RETIRED: 'FEATURE_RETIRED',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Recovery hints of the contract's `requiredAction` enum. */
export type RequiredAction =
  | 'authenticate'
  | 'choose-new-idempotency-key'
  | 'refresh-resource'
  | 'retry-job'
  | 'review-in-browser'
  | 'submit-through-research-job';

/** One entry of `error.fieldErrors`: `field` is `$` or dot-separated names (`mutation.blocks.3.rows`). */
export interface FieldError {
  field: string;
  message: string;
}

/** The wire shape of `error` in the error envelope. */
export interface ApiError {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  fieldErrors?: FieldError[];
  requiredAction?: RequiredAction;
  retryAfterMs?: number;
}

/** Options accepted by {@link ServiceError}. */
export interface ServiceErrorOptions {
  retryable?: boolean;
  fieldErrors?: FieldError[];
  requiredAction?: RequiredAction;
  retryAfterMs?: number;
  cause?: unknown;
}

const RETRYABLE_BY_DEFAULT: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'RATE_LIMITED',
  'TEMPORARILY_UNAVAILABLE',
  'REPORT_NOT_READY',
  'INTERNAL_ERROR',
]);

const MAX_FIELD_ERRORS = 32;
const MAX_MESSAGE = 2048;
const MAX_FIELD_MESSAGE = 1024;

/**
 * A failure the contract can describe.
 * @remarks Recognise it with {@link isServiceError} (by `name`), not `instanceof`: errors cross worker
 * boundaries as plain objects. fieldErrors are capped at 32 and messages at the contract's lengths.
 */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly fieldErrors: FieldError[] | undefined;
  readonly requiredAction: RequiredAction | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    super(message.slice(0, MAX_MESSAGE), options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT.has(code);
    this.fieldErrors = options.fieldErrors?.slice(0, MAX_FIELD_ERRORS).map((e) => ({
      field: e.field,
      message: e.message.slice(0, MAX_FIELD_MESSAGE),
    }));
    this.requiredAction = options.requiredAction;
    this.retryAfterMs =
      options.retryAfterMs === undefined ? undefined : Math.max(0, Math.min(86_400_000, Math.ceil(options.retryAfterMs)));
  }
}

/** True for a {@link ServiceError} or its structured clone (matched by name and code, not prototype). */
export function isServiceError(value: unknown): value is ServiceError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { name?: unknown }).name === 'ServiceError' &&
    typeof (value as { code?: unknown }).code === 'string'
  );
}

/**
 * Thrown (rejected) by a storage that cannot write for now (disk full, database unreachable):
 * nothing of the failed write was kept, reads still work, and the same write may succeed later
 * without a restart.
 * @remarks Recognised by name ({@link isStorageUnavailable}), also as a structured clone across the
 * worker boundary or another module copy; the API edge answers 503 TEMPORARILY_UNAVAILABLE with
 * `Retry-After`.
 */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
  /** When to try again, in ms. */
  readonly retryAfterMs: number;

  constructor(message: string, options: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs ?? 5000;
  }
}

/** True for a {@link StorageUnavailableError} or its structured clone (matched by name). */
export function isStorageUnavailable(value: unknown): value is StorageUnavailableError {
  return typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'StorageUnavailableError';
}

/** Shorthand for an INVALID_REQUEST with field errors. */
export function invalid(message: string, fieldErrors?: FieldError[]): ServiceError {
  return new ServiceError('INVALID_REQUEST', message, fieldErrors ? { fieldErrors } : {});
}

/** Shorthand for NOT_FOUND: used for absent and out-of-boundary references alike. */
export function notFound(what: string): ServiceError {
  return new ServiceError('NOT_FOUND', `${what} was not found: it does not exist or is outside this credential's boundary; check the reference.`);
}

/** Shorthand for a structural CONFLICT, optionally naming the field (fence) that did not match. */
export function conflict(message: string, field?: string): ServiceError {
  return new ServiceError(
    'CONFLICT',
    message,
    field ? { fieldErrors: [{ field, message }], requiredAction: 'refresh-resource' } : { requiredAction: 'refresh-resource' },
  );
}
