/**
 * The one table from error code to HTTP status. Nothing else in the project decides a status for an error.
 * @module
 */
import type { ErrorCode } from '../errors.ts';

/** HTTP status of every error code of the contract. JOB_FAILED only appears inside job state. */
export const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = Object.freeze({
  INVALID_REQUEST: 400,
  IDEMPOTENCY_REQUIRED: 400,
  AUTH_REQUIRED: 401,
  AUTH_AMBIGUOUS: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_CONFLICT: 409,
  CONFLICT: 409,
  AGENT_RUN_REQUIRED: 409,
  REPORT_NOT_READY: 409,
  FEATURE_RETIRED: 410,
  PRECONDITION_FAILED: 412,
  PRECONDITION_REQUIRED: 428,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  JOB_FAILED: 500,
  TEMPORARILY_UNAVAILABLE: 503,
});

/** The HTTP status for an error code (500 for anything unknown). */
export function statusOf(code: string): number {
  return (STATUS_BY_CODE as Record<string, number>)[code] ?? 500;
}
