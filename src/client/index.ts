/**
 * The typed client: one method per public operation, derived from the contract (src/contract) alone;
 * works over any fetch (network, in-process, worker). No Node-only modules, no server code.
 * @module
 */
export { createClient, type Client, type ClientOptions } from './client.ts';
export type { CallInput, OperationId, OperationMethod, SuccessBody } from './types.ts';
export type { Contract } from '../contract/operations.ts';
export type { ApiResult, CallOptions } from './call.ts';
export { ApiClientError, isApiClientError, type ClientErrorCode } from './errors.ts';
export { TERMINAL_EVENT_KINDS, type FollowOptions, type JobEvent } from './events.ts';
export type { DocumentSnapshot, MutationPlanner, MutationRequestBody, ReplanOptions, ReplanOutcome } from './replan.ts';
export { DEFAULT_RETRY, parseRetryAfter, retryDelay, type RetryPolicy } from './retry.ts';
export { parseSse, type SseEvent, type SseItem } from './sse.ts';
