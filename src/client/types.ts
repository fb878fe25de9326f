/**
 * The client's types, derived from the contract entries alone: nothing here is written by hand per
 * operation.
 * @module
 */
import type { CallInputOf, SuccessBodyOf } from '../contract/define.ts';
import type { Contract, PublicOperationId } from '../contract/operations.ts';
import type { ApiResult, CallOptions } from './call.ts';

/** The operationId of a public operation: one client method each. */
export type OperationId = PublicOperationId;

/** The typed input of an operation: path parameters, query values, headers by logical name, the JSON body or raw bytes. */
export type CallInput<K extends OperationId> = CallInputOf<Contract[K]>;

/** The parsed JSON success body of an operation (`v.InferOutput` of its 2xx response schemas). */
export type SuccessBody<K extends OperationId> = SuccessBodyOf<Contract[K]>;

/** The method of one operation on the client. */
export type OperationMethod<K extends OperationId> = {} extends CallInput<K>
  ? (input?: CallInput<K>, options?: CallOptions) => Promise<ApiResult<SuccessBody<K>>>
  : (input: CallInput<K>, options?: CallOptions) => Promise<ApiResult<SuccessBody<K>>>;

