/**
 * How an operation of the contract is declared: plain data (method, path, audience, auth, scopes,
 * activation, charging, every input and every response with its schema and headers), no server code.
 * The server binds an implementation to each entry (src/api/bindings); /openapi.json, the MCP tools
 * and the typed client read the entries alone.
 * @remarks The entries keep their literal types (`operation()` takes a `const` type parameter), so a
 * consumer derives input and result types from them: `v.InferInput` of a body schema, `v.InferOutput`
 * of a 2xx response schema, the typed value of each path, query and header parameter.
 * @module
 */
import type * as v from 'valibot';

/** HTTP methods an operation may use. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The surfaces an operator can switch off (503 to every authenticated request while off). */
export type ActivationSwitch = 'search' | 'reviews' | 'proposals';

/**
 * One path, query or header parameter. The edge checks the value with `schema` (after `decode`) and
 * hands the typed value to the operation; `schema` is also what /openapi.json publishes.
 */
export interface ParamDef<S extends v.GenericSchema = v.GenericSchema> {
  schema: S;
  description: string;
  /** Published as required. The edge never refuses a missing value: the domain decides (400, 428 …). */
  required?: boolean;
  /** How the wire string becomes the schema's input: `integer` (decimal digits), default the string itself. */
  decode?: 'integer';
  /** The value when the request carries none. */
  default?: v.InferOutput<S>;
  /** An empty value counts as absent (`Idempotency-Key:`, `Service-If-Revision:`): the domain names what is missing. */
  emptyIsAbsent?: boolean;
  /**
   * A path value outside the schema: `not-found` (default for path parameters: a malformed id names
   * nothing, so it is indistinguishable from an unknown one) or `invalid` (400 naming `path.<name>`).
   */
  malformed?: 'not-found' | 'invalid';
  /** The fieldError message of a value outside the schema; default the schema's first issue. */
  message?: string;
}

/** A header parameter: a logical name in the contract, a wire name on the request. */
export interface HeaderDef<S extends v.GenericSchema = v.GenericSchema> extends ParamDef<S> {
  /** The header as sent, e.g. `Idempotency-Key`. */
  name: string;
}

/** A JSON request body: the schema the domain validates the body with (the same object), published under `component`. */
export interface BodyDef<S extends v.GenericSchema = v.GenericSchema> {
  schema: S;
  component: string;
  description?: string;
  /** The body may be left out: an empty request body reaches the binding as `undefined`. */
  optional?: boolean;
}

/** Response headers an operation may set (besides X-Request-Id and the budget headers). */
export type ResponseHeader =
  | 'Service-Revision'
  | 'ETag'
  | 'Location'
  | 'Retry-After'
  | 'X-Service-Markdown-Loss-Count'
  | 'Cache-Control';

/** What one response carries. */
export interface ResponseDef<S extends v.GenericSchema = v.GenericSchema> {
  description: string;
  /** A JSON body and its schema (published as a component when it is in the component table, inline otherwise). */
  json?: S;
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

/** Who the operation is for: `public` operations are in /openapi.json and the client; `operator` and `local` are not. */
export type Audience = 'public' | 'operator' | 'local';

/** The scopes of the contract, as the entries name them. */
export type ScopeName = string;

/** Responses by status. */
export type ResponsesDef = Readonly<Record<number, ResponseDef>>;

/**
 * One operation, declared once.
 * @remarks The handler's order of checks is fixed (see src/api/handler.ts): route, X-Request-Id, auth,
 * activation, scopes, budget charge, body size, inputs (path, query, headers), JSON body, then the
 * operation's binding.
 */
export interface ContractOperation<I extends InputDef = InputDef, R extends ResponsesDef = ResponsesDef> {
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
  allScopes?: readonly ScopeName[];
  /** At least one of these scopes is needed. */
  anyScopes?: readonly ScopeName[];
  /** Activation switch: when off, 503 to every authenticated request, without charging. */
  activation?: ActivationSwitch;
  /** `before`: the edge charges; `never`: nothing is charged; `self`: the binding charges (`ctx.charge()`). */
  charge: 'before' | 'never' | 'self';
  /** Sends the research-run budget header (research operations). */
  researchBudget?: boolean;
  input: I;
  /** Success and operation-specific error responses by status. 400/401/403/405/429/500/503 are added from `auth`. */
  responses: R;
}

/** Declare an operation; its literal types (inputs, responses, audience) are kept for the consumers. */
export function operation<const I extends InputDef, const R extends ResponsesDef, const A extends Audience>(
  def: ContractOperation<I, R> & { audience: A },
): ContractOperation<I, R> & { audience: A } {
  return def;
}

/** An operation of any shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = ContractOperation<any, any>;

// ---------------------------------------------------------------------------------------------
// Types derived from an entry

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type SchemaOf<P> = P extends { schema: infer S extends v.GenericSchema } ? S : never;
type ValueOf<P> = v.InferOutput<SchemaOf<P>>;
type MaybeValue<P> = P extends { default: unknown } ? ValueOf<P> : ValueOf<P> | undefined;

/** The checked path values of an operation, by name. */
export type PathValues<I extends InputDef> = I['path'] extends object ? { readonly [K in keyof I['path']]: ValueOf<I['path'][K]> } : {};
/** The checked query values of an operation, by name (undefined when absent and without default). */
export type QueryValues<I extends InputDef> = I['query'] extends object ? { readonly [K in keyof I['query']]: MaybeValue<I['query'][K]> } : {};
/** The checked header values of an operation, by logical name. */
export type HeaderValues<I extends InputDef> = I['headers'] extends object ? { readonly [K in keyof I['headers']]: MaybeValue<I['headers'][K]> } : {};

/** What the edge hands an operation's binding: checked path, query and header values, the parsed JSON body (checked by the domain), the raw bytes. */
export interface OperationInput<I extends InputDef = InputDef> {
  path: PathValues<I>;
  query: QueryValues<I>;
  headers: HeaderValues<I>;
  body: I['body'] extends BodyDef ? unknown : undefined;
  /**
   * The raw body of an operation declared with `bytes`, chunk by chunk as it arrives (none when
   * nothing was sent). Past the declared `maxBytes` the iteration throws INVALID_REQUEST.
   */
  bytes: I['bytes'] extends BytesDef ? AsyncIterable<Uint8Array> : undefined;
}

/** The statuses of `R` below 300 that carry a JSON body. */
type SuccessStatus<R> = { [S in keyof R]: S extends number ? (`${S}` extends `2${string}` ? (R[S] extends { json: v.GenericSchema } ? S : never) : never) : never }[keyof R];

/** The JSON success body of an operation: `v.InferOutput` of its 2xx response schemas (a union when several). */
export type SuccessBodyOf<Op> = Op extends ContractOperation<InputDef, infer R>
  ? [SuccessStatus<R>] extends [never]
    ? unknown
    : { [S in SuccessStatus<R>]: R[S] extends { json: infer J extends v.GenericSchema } ? v.InferOutput<J> : never }[SuccessStatus<R>]
  : never;

/** A query value as a caller writes it (numbers and booleans are sent in decimal / as words). */
export type QueryArg = string | number | boolean;

type PathArgs<I> = I extends { path: infer P } ? { path: { [N in keyof P]: string } } : unknown;
type QueryArgs<I> = I extends { query: infer Q } ? { query?: { [N in keyof Q]?: (v.InferInput<SchemaOf<Q[N]>> & QueryArg) | QueryArg | undefined } } : unknown;
type HeaderArgs<I> = I extends { headers: infer H }
  ? Exclude<keyof H, 'idempotencyKey'> extends never
    ? unknown
    : { headers?: { [N in Exclude<keyof H, 'idempotencyKey'>]?: string | undefined } }
  : unknown;
type KeyArgs<I> = I extends { headers: { idempotencyKey: unknown } }
  ? {
      /** The idempotency key of this intent; default a fresh one per call (every retry of the call reuses it). */
      idempotencyKey?: string;
    }
  : unknown;
type BodyArgs<I> = I extends { body: { schema: infer S extends v.GenericSchema } } ? { body: v.InferInput<S> } : unknown;
type BytesArgs<I> = I extends { bytes: object } ? { /** The raw request body (sent as application/octet-stream). */ bytes: Uint8Array } : unknown;

/** What a caller passes to call an operation: path values, query values, headers by logical name, the JSON body (`v.InferInput` of its schema) or raw bytes. */
export type CallInputOf<Op> = Op extends ContractOperation<infer I, ResponsesDef>
  ? Simplify<PathArgs<I> & QueryArgs<I> & HeaderArgs<I> & KeyArgs<I> & BodyArgs<I> & BytesArgs<I>>
  : never;

// ---------------------------------------------------------------------------------------------
// Facts every consumer needs

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

/** The JSON schemas of an operation's 2xx responses. */
export function successSchemas(op: AnyOperation): v.GenericSchema[] {
  const out: v.GenericSchema[] = [];
  for (const [status, def] of Object.entries(op.responses as ResponsesDef)) if (Number(status) < 300 && def.json) out.push(def.json);
  return out;
}
