/**
 * The two kinds of 503 the API gives for surfaces that do not answer yet.
 * @module
 */
import { ServiceError } from '../errors.ts';
import { DEFAULT_UNAVAILABLE_RETRY_MS } from './errors-edge.ts';

/** A capability of the contract whose implementation has not landed in this server. */
export function notBuilt(capability: string): ServiceError {
  return new ServiceError(
    'TEMPORARILY_UNAVAILABLE',
    `${capability} is not built yet in this server; the operation is part of the contract and will answer once it is implemented.`,
    { retryAfterMs: DEFAULT_UNAVAILABLE_RETRY_MS },
  );
}

/** A surface the operator has not activated (docs/http-api.md). Never charged. */
export function activationBlocked(surface: string): ServiceError {
  return new ServiceError(
    'TEMPORARILY_UNAVAILABLE',
    `${surface} is not activated on this server; no request budget was charged.`,
    { retryAfterMs: DEFAULT_UNAVAILABLE_RETRY_MS },
  );
}
