/**
 * The server side of the contract: an implementation bound to one contract entry. The handler serves
 * the bindings; the entry itself (src/contract) holds no server code.
 * @module
 */
import type { AnyOperation, ContractOperation, InputDef, OperationInput, ResponsesDef } from '../contract/define.ts';
import type { RequestContext } from './context.ts';
import type { PlainResponse } from './types.ts';

/** What a binding's implementation gets: the request's context and its checked inputs. */
export type Implementation<I extends InputDef> = (ctx: RequestContext, input: OperationInput<I>) => Promise<PlainResponse> | PlainResponse;

/** One contract entry and its implementation. */
export interface Binding<Op extends AnyOperation = AnyOperation> {
  readonly operation: Op;
  readonly run: Implementation<Op['input']>;
}

/**
 * Bind an implementation to a contract entry; the implementation's input is typed from the entry
 * (checked path, query and header values; the JSON body for the domain to check).
 * @example
 * export const createDocument = bind(contract.createDocument, async (ctx, input) => ok(ctx, 201, …));
 */
export function bind<const I extends InputDef, const R extends ResponsesDef>(operation: ContractOperation<I, R>, run: Implementation<I>): Binding<ContractOperation<I, R>> {
  return { operation, run } as Binding<ContractOperation<I, R>>;
}

/** A binding of any operation. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyBinding = Binding<any>;
