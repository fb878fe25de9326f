/**
 * How an operation is declared: once, with everything the handler enforces and everything that is
 * published about it (OpenAPI paths, the typed client, MCP tools are all derived from this).
 * @module
 */
import type * as v from 'valibot';
import type { ActivationState } from '../../auth/activation.ts';
import type { Scope } from '../../auth/scopes.ts';
import type { RequestContext } from '../context.ts';
import type { PlainResponse } from '../types.ts';

/** HTTP methods an operation may use. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One path, query or header parameter. */
export interface ParamDef {
  /** The schema the value is checked with (by the domain that owns it) and published with. */
  schema: v.GenericSchema;
  description: string;
  /** Published as required. The domain decides what a missing value means (400, 428 …). */
  required?: boolean;
}

/** A header parameter: a logical name in the registry, a wire name on the request. */
export interface HeaderDef extends ParamDef {
  /** The header as sent, e.g. `Idempotency-Key`. */
  name: string;
}

/** A JSON request body. */
export interface BodyDef {
  /** The schema the domain validates the body with (the same object), published under `component`. */
  schema: v.GenericSchema;
  component: string;
  description?: string;
}

/** Response headers an operation may set (besides X-Request-Id and the budget headers). */
export type ResponseHeader =
  | 'Service-Revision'
  | 'ETag'
  | 'Location'
  | 'Retry-After'
  | 'X-Service-Markdown-Loss-Count'
  | 'Cache-Control';

/** What a response carries. */
export interface ResponseDef {
  description: string;
  /** A JSON body and the component it is published as (the schema object must be in the component table). */
  json?: v.GenericSchema;
  /** Other media types, e.g. `text/markdown` or `text/event-stream`, with a description. */
  text?: Readonly<Record<string, string>>;
  headers?: readonly ResponseHeader[];
}

/** A raw request body (file bytes), with its own size limit. */
export interface BytesDef {
  description: string;
  /** Largest body accepted (the default limit for JSON bodies is 256 KB). */
  maxBytes: number;
}

/** The inputs of an operation, by logical name. */
export interface InputDef {
  path?: Readonly<Record<string, ParamDef>>;
  query?: Readonly<Record<string, ParamDef>>;
  headers?: Readonly<Record<string, HeaderDef>>;
  body?: BodyDef;
  /** Raw bytes instead of a JSON body. */
  bytes?: BytesDef;
}

/** The input values `run` receives: raw strings by logical name (the domain validates them) and the parsed JSON body. */
export interface OperationInput<I extends InputDef = InputDef> {
  path: { readonly [K in keyof I['path']]: string };
  query: { readonly [K in keyof I['query']]: string | undefined };
  headers: { readonly [K in keyof I['headers']]: string | undefined };
  body: I['body'] extends BodyDef ? unknown : undefined;
  /**
   * The raw body of an operation declared with `bytes`, chunk by chunk as it arrives (none when
   * nothing was sent). Past the declared `maxBytes` the iteration throws INVALID_REQUEST.
   */
  bytes: I['bytes'] extends BytesDef ? AsyncIterable<Uint8Array> : undefined;
}

/** Who the operation is for: `public` operations are in /openapi.json; `operator` and `local` are not. */
export type Audience = 'public' | 'operator' | 'local';

/**
 * One operation, declared once.
 * @remarks The handler's order of checks is fixed (see handler.ts): route, X-Request-Id, auth,
 * activation, scopes, budget charge, body size, JSON body, then `run`.
 */
export interface OperationDef<I extends InputDef = InputDef> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/api/v1/documents/{documentRef}`. */
  path: string;
  audience: Audience;
  tag: string;
  summary: string;
  description: string;
  auth: 'bearer' | 'operator' | 'none';
  /** Every one of these scopes is needed. */
  allScopes?: readonly Scope[];
  /** At least one of these scopes is needed. */
  anyScopes?: readonly Scope[];
  /** Activation switch: when off, 503 to every authenticated request, without charging. */
  activation?: keyof ActivationState;
  /** `before`: the pipeline charges; `never`: nothing is charged; `self`: `run` calls `ctx.charge()`. */
  charge: 'before' | 'never' | 'self';
  /** Sends the research-run budget header (research operations). */
  researchBudget?: boolean;
  input: I;
  /** Success and operation-specific error responses by status. 401/403/405/429/500/503 are added from `auth`. */
  responses: Readonly<Record<number, ResponseDef>>;
  run(ctx: RequestContext, input: OperationInput<I>): Promise<PlainResponse> | PlainResponse;
}

/** Declare an operation (keeps the literal types of its inputs for `run`). */
export function defineOperation<const I extends InputDef>(def: OperationDef<I>): OperationDef<I> {
  return def;
}

/** An operation of any input shape (`run`'s input parameter makes OperationDef invariant in I). */
export type AnyOperation = OperationDef<any>;

/** The wire field name of an input, as fieldErrors report it: `Idempotency_Key`, `query.format`, `path.jobId`. */
export function wireFieldNames(input: InputDef): Map<string, string> {
  const out = new Map<string, string>();
  for (const [logical, def] of Object.entries(input.headers ?? {})) out.set(logical, def.name.replace(/-/g, '_'));
  for (const logical of Object.keys(input.query ?? {})) out.set(logical, `query.${logical}`);
  for (const logical of Object.keys(input.path ?? {})) out.set(logical, `path.${logical}`);
  return out;
}

/**
 * Error statuses every operation of an auth kind can answer besides its own: 400 (a malformed
 * X-Request-Id, an oversized body), 401, 405 on its path, 500 and 503, and for bearer operations 403
 * and 429.
 */
export function sharedErrorStatuses(op: AnyOperation): readonly number[] {
  return op.auth === 'bearer' ? [400, 401, 403, 405, 429, 500, 503] : [400, 401, 405, 500, 503];
}

/** Every status an operation may answer: its own responses and the shared errors. */
export function declaredStatuses(op: AnyOperation): ReadonlySet<number> {
  return new Set([...Object.keys(op.responses).map(Number), ...sharedErrorStatuses(op)]);
}
