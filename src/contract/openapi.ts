/**
 * The published OpenAPI 3.1 document (served at `/openapi.json`), generated from the valibot schemas:
 * the contract's entries, request bodies from the domains' schema modules, envelopes and resources
 * from `response-schemas.ts`. Operator-only operations (`/operator/v1`) and pages are omitted, as the
 * contract requires.
 * @module
 */
import { toJsonSchemaDefs } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { BlockIdSchema, BlockSchema, EditBlockSchema, MutationSchema } from '../documents/schemas.ts';
import { sharedErrorStatuses, type AnyOperation, type InputDef, type ParamDef, type ResponseDef, type ResponsesDef } from './define.ts';
import { contractOperations } from './operations.ts';
import { ClientRequestIdHeader } from './params.ts';
import { withImpliedBounds, withMessageBounds, withoutUnusedSchemas } from './openapi-bounds.ts';
import { responseComponents } from './response-schemas.ts';

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const hdr = (name: string): Json => ({ $ref: `#/components/headers/${name}` });
const rsp = (name: string): Json => ({ $ref: `#/components/responses/${name}` });

/** Named schemas of the domain that bodies reference (published as components, not inlined). */
const domainComponents = { BlockId: BlockIdSchema, Block: BlockSchema, EditBlock: EditBlockSchema, Mutation: MutationSchema };

// ---------------------------------------------------------------------------------------------
// Headers, parameters and shared responses

const headers: Record<string, Json> = {
  XRequestId: {
    description: 'Server-minted request id, equal to meta.requestId.',
    required: true,
    schema: ref('RequestId'),
  },
  RequestsRemaining: {
    description: "Authenticated responses: what is left of the credential's request budget in the current window.",
    schema: { type: 'integer', minimum: 0, maximum: 10000 },
  },
  RateLimitLimit: {
    description: "The credential's request budget per window (the IETF draft's RateLimit header fields). Sent on every answer to a request whose credential is known; X-Service-Requests-Remaining says what is left.",
    schema: { type: 'integer', minimum: 1, maximum: 10000 },
  },
  RateLimitReset: {
    description: 'Seconds until the budget window ends and the budget is whole again; sent with RateLimit-Limit.',
    schema: { type: 'integer', minimum: 0, maximum: 2147483647 },
  },
  ResearchRunsRemaining: {
    description: 'Authenticated responses, when known: research runs left.',
    schema: { type: 'integer', minimum: 0 },
  },
  ServiceRevision: {
    description: 'The opaque revision of the resource. Send it back unchanged as Service-If-Revision on the next write.',
    schema: { type: 'string', minLength: 1 },
  },
  ETag: {
    description: 'A weak ETag of the canonical read; send it as If-None-Match. Never a write precondition.',
    schema: { type: 'string', pattern: '^W/".*"$' },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0 },
  },
  Location: {
    description: 'The path of the created document.',
    schema: { type: 'string' },
  },
  CacheControl: {
    description: 'Caching rules of the answer.',
    schema: { type: 'string' },
  },
  Allow: {
    description: 'The methods the path has, comma-separated.',
    required: true,
    schema: { type: 'string' },
  },
  MarkdownLossCount: {
    description: 'On Markdown reads: how many things of the rich document the Markdown projection could not carry.',
    schema: { type: 'integer', minimum: 0 },
  },
};

const errorJson = { 'application/json': { schema: ref('ErrorEnvelope') } };

const responses: Record<string, Json> = {
  Unauthorized: {
    description: 'AUTH_REQUIRED: no valid credential (requiredAction authenticate); AUTH_AMBIGUOUS: a bearer token and a browser session cookie together.',
    headers: { 'X-Request-Id': hdr('XRequestId') },
    content: errorJson,
  },
  Forbidden: {
    description: 'FORBIDDEN: the credential lacks the scope, or the operation crosses its boundary.',
    headers: authedHeaders(),
    content: errorJson,
  },
  MethodNotAllowed: {
    description: 'METHOD_NOT_ALLOWED: the path exists but not with the method used; Allow lists its methods.',
    headers: { 'X-Request-Id': hdr('XRequestId'), Allow: hdr('Allow') },
    content: errorJson,
  },
  RateLimited: {
    description: "RATE_LIMITED: the credential's request budget is spent until the window ends (Retry-After, error.retryAfterMs).",
    headers: { 'X-Request-Id': hdr('XRequestId'), 'X-Service-Requests-Remaining': hdr('RequestsRemaining'), 'Retry-After': hdr('RetryAfter') },
    content: errorJson,
  },
  Unavailable: {
    description: 'TEMPORARILY_UNAVAILABLE: a dependency is unavailable or the surface is not activated (activation-blocked answers charge no budget). Honor Retry-After when present.',
    headers: { 'X-Request-Id': hdr('XRequestId'), 'Retry-After': hdr('RetryAfter') },
    content: errorJson,
  },
  InternalError: {
    description: 'INTERNAL_ERROR: unexpected failure. Retry once with the same idempotency key, then report meta.requestId.',
    headers: { 'X-Request-Id': hdr('XRequestId') },
    content: errorJson,
  },
};

/** Response headers every authenticated response carries. */
function authedHeaders(extra: Record<string, Json> = {}, research = false): Record<string, Json> {
  return {
    'X-Request-Id': hdr('XRequestId'),
    'X-Service-Requests-Remaining': hdr('RequestsRemaining'),
    ...(research ? { 'X-Service-Research-Runs-Remaining': hdr('ResearchRunsRemaining') } : {}),
    ...extra,
  };
}

const HEADER_COMPONENT: Readonly<Record<string, string>> = {
  'Service-Revision': 'ServiceRevision',
  ETag: 'ETag',
  Location: 'Location',
  'Retry-After': 'RetryAfter',
  'X-Service-Markdown-Loss-Count': 'MarkdownLossCount',
  'Cache-Control': 'CacheControl',
};

const SHARED_ERROR: Readonly<Record<number, Json>> = {
  400: {
    description: 'INVALID_REQUEST: a malformed X-Request-Id or a body over 256 KB.',
    headers: { 'X-Request-Id': hdr('XRequestId') },
    content: errorJson,
  },
  401: rsp('Unauthorized'),
  403: rsp('Forbidden'),
  405: rsp('MethodNotAllowed'),
  429: rsp('RateLimited'),
  500: rsp('InternalError'),
  503: rsp('Unavailable'),
};

/** The error responses every operation of an auth kind can give, besides its own. */
function sharedErrors(op: AnyOperation): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const status of sharedErrorStatuses(op)) {
    out[status] =
      status === 401 && op.auth === 'none'
        ? {
            description: 'AUTH_AMBIGUOUS: a bearer token and a browser session cookie together (refused before anything else, even here). No token is needed.',
            headers: { 'X-Request-Id': hdr('XRequestId') },
            content: errorJson,
          }
        : SHARED_ERROR[status]!;
  }
  return out;
}

/** `security` of an operation: alternatives of scope sets (role names of the bearer scheme). */
function security(op: AnyOperation): Json[] {
  if (op.auth !== 'bearer') return [];
  if (op.anyScopes?.length) return op.anyScopes.map((scope) => ({ bearerAuth: [...(op.allScopes ?? []), scope] }));
  return [{ bearerAuth: [...(op.allScopes ?? [])] }];
}

/** Collects schemas: named components by identity, and inline ones under temporary keys. */
class SchemaTable {
  readonly named = new Map<v.GenericSchema, string>();
  readonly inline = new Map<string, v.GenericSchema>();
  constructor(components: Record<string, v.GenericSchema>) {
    for (const [name, schema] of Object.entries(components)) this.named.set(schema, name);
  }
  /** A `$ref` to a named schema, or a placeholder for an inline one (resolved by {@link resolve}). */
  use(schema: v.GenericSchema, hint: string): Json {
    const name = this.named.get(schema);
    if (name !== undefined) return ref(name);
    const key = `__inline_${this.inline.size}_${hint.replace(/[^A-Za-z0-9]/g, '_')}`;
    this.inline.set(key, schema);
    return { [INLINE]: key };
  }
  /** Convert everything once; returns the components and the inline schemas by key. */
  convert(): { components: Record<string, Json>; inline: Record<string, Json> } {
    // Inline keys first, names last: an object that is both resolves to its name.
    const definitions: Record<string, v.GenericSchema> = Object.fromEntries(this.inline);
    for (const [schema, name] of this.named) definitions[name] = schema;
    const all = toJsonSchemaDefs(definitions as Record<string, v.BaseSchema<unknown, unknown, v.BaseIssue<unknown>>>, {
      target: 'draft-2020-12',
      errorMode: 'throw',
      overrideRef: (context) => `#/components/schemas/${context.referenceId}`,
    }) as Record<string, Json>;
    const components: Record<string, Json> = {};
    const inline: Record<string, Json> = {};
    for (const [key, value] of Object.entries(all)) (this.inline.has(key) ? inline : components)[key] = value;
    const text = JSON.stringify(components) + JSON.stringify(inline);
    if (text.includes('#/components/schemas/__inline_')) throw new Error('an inline schema is nested in a named one: name it in the component table');
    return { components, inline };
  }
}

const INLINE = '\u0000inline';

function resolveInline(value: unknown, inline: Record<string, Json>): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveInline(item, inline));
  if (value === null || typeof value !== 'object') return value;
  const key = (value as Json)[INLINE];
  if (typeof key === 'string') return inline[key];
  return Object.fromEntries(Object.entries(value).map(([k, item]) => [k, resolveInline(item, inline)]));
}

function parameter(table: SchemaTable, name: string, where: 'path' | 'query' | 'header', def: ParamDef): Json {
  const out: Json = { name, in: where, description: def.description, schema: table.use(def.schema, name) };
  if (def.required || where === 'path') out.required = true;
  return out;
}

function response(table: SchemaTable, op: AnyOperation, status: number, def: ResponseDef): Json {
  const extra: Record<string, Json> = {};
  for (const h of def.headers ?? []) extra[h] = hdr(HEADER_COMPONENT[h]!);
  const headers = op.auth === 'bearer' ? authedHeaders(extra, op.researchBudget === true) : { 'X-Request-Id': hdr('XRequestId'), ...extra };
  const out: Json = { description: def.description, headers };
  const content: Json = {};
  if (def.json) content['application/json'] = { schema: table.use(def.json, `${op.operationId}_${status}`) };
  for (const [type, description] of Object.entries(def.text ?? {})) content[type] = { schema: { type: 'string', description } };
  if (status >= 400 && !def.json) content['application/json'] = errorJson['application/json'];
  if (Object.keys(content).length) out.content = content;
  return out;
}

function operationObject(table: SchemaTable, op: AnyOperation): Json {
  const input: InputDef = op.input;
  const parameters: Json[] = [];
  for (const [name, def] of Object.entries(input.path ?? {})) parameters.push(parameter(table, name, 'path', def));
  for (const [name, def] of Object.entries(input.query ?? {})) parameters.push(parameter(table, name, 'query', def));
  for (const def of Object.values(input.headers ?? {})) parameters.push(parameter(table, def.name, 'header', def));
  if (op.auth !== 'operator') parameters.push(parameter(table, ClientRequestIdHeader.name, 'header', ClientRequestIdHeader));
  const responses: Json = {};
  for (const [status, def] of Object.entries(op.responses as ResponsesDef)) responses[status] = response(table, op, Number(status), def);
  for (const [status, def] of Object.entries(sharedErrors(op))) responses[status] ??= def;
  const out: Json = { operationId: op.operationId, tags: [op.tag], summary: op.summary, description: op.description, security: security(op), parameters };
  if (input.body) out.requestBody = { required: input.body.optional !== true, content: { 'application/json': { schema: ref(input.body.component) } } };
  if (input.bytes) {
    out.requestBody = {
      required: true,
      description: input.bytes.description,
      content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream', maxLength: input.bytes.maxBytes } } },
    };
  }
  out.responses = responses;
  return out;
}

/** OpenAPI paths and component schemas of the given operations. */
function buildPaths(operations: readonly AnyOperation[]): { paths: Json; schemas: Record<string, Json> } {
  const components: Record<string, v.GenericSchema> = { ...domainComponents, ...(responseComponents as Record<string, v.GenericSchema>) };
  for (const op of operations) if (op.input.body) components[op.input.body.component] = op.input.body.schema;
  const table = new SchemaTable(components);
  const paths: Json = {};
  for (const op of operations) {
    const item = (paths[op.path] ??= {}) as Json;
    item[op.method.toLowerCase()] = operationObject(table, op);
  }
  const { components: schemas, inline } = table.convert();
  return { paths: resolveInline(paths, inline) as Json, schemas };
}

/**
 * Every 2XX and 4XX answer of the published paths declares RateLimit-Limit and RateLimit-Reset, so a
 * client sees the rate limit where it meets it (OWASP API4:2023, rate limiting). The server sends
 * them on every answer to a request whose credential is known (src/api/envelope.ts baseHeaders).
 */
function withRateLimitHeaders(doc: Json): Json {
  const out = structuredClone(doc);
  const responses = ((out.components as Json).responses ?? {}) as Record<string, Json>;
  const declare = (response: Json | undefined) => {
    if (response === undefined) return;
    const h = (response.headers ??= {}) as Json;
    h['RateLimit-Limit'] ??= hdr('RateLimitLimit');
    h['RateLimit-Reset'] ??= hdr('RateLimitReset');
  };
  for (const item of Object.values((out.paths ?? {}) as Record<string, Json>)) {
    for (const op of Object.values(item) as Json[]) {
      for (const [code, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        if (!/^[24]/.test(code)) continue;
        const ref = response.$ref;
        declare(typeof ref === 'string' && ref.startsWith('#/components/responses/') ? responses[ref.slice('#/components/responses/'.length)] : response);
      }
    }
  }
  return out;
}

function build(operations: readonly AnyOperation[]): Json {
  const built = buildPaths(operations.filter((op) => op.audience === 'public'));
  return withRateLimitHeaders(withoutUnusedSchemas(withMessageBounds(withImpliedBounds({
    openapi: '3.1.0',
    info: {
      title: 'knowledge-workspace',
      version: '1.0.0',
      summary: 'Agent-facing knowledge workspace API',
      description:
        'Private versioned documents changed by semantic block mutations, research jobs, knowledge proposals, released public artifacts and the link library. All JSON successes use the success envelope {data, meta, links?, receipt?}; all errors the error envelope {error, meta}. An unknown path under /api/v1 answers 404 NOT_FOUND; a known path with a method it lacks answers 405 METHOD_NOT_ALLOWED with Allow. Operator-only operations are omitted.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    // Relative: the API is served by the server that publishes this document (kw serve: http://127.0.0.1:8787).
    servers: [{ url: '/', 'x-internal': false, description: 'The server that publishes this document at /openapi.json (local development: kw serve, http://127.0.0.1:8787).' }],
    tags: [
      { name: 'auth', description: 'Who the bearer token is: its principal, scopes and request budget.' },
      { name: 'documents', description: 'Private versioned documents of nested blocks: create, read (rich JSON, blocks or Markdown), change by semantic mutations, follow their events.' },
      { name: 'research', description: 'Research jobs: start one from a question, follow its events, cancel it, read its staged report.' },
      { name: 'proposals', description: 'Knowledge proposals (entities, facts, evidence, inquiries) submitted for the person to review.' },
      { name: 'public', description: 'Released public artifacts (entities, inquiries, editions), readable at immutable revisions.' },
      { name: 'reviews', description: 'Reviews of proposals as the agent sees them: state, conflicts and the page where the person decides.' },
      { name: 'search', description: 'Search across what the credential may read, once the operator has activated it.' },
      { name: 'library', description: "The account's link library: saved links and uploads with their captures, highlights, notes and reading state." },
      { name: 'meta', description: "The service itself: this OpenAPI document, the home page, and the person's pages that browserHref links open." },
    ],
    security: [{ bearerAuth: [] }],
    paths: built.paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Authorization: Bearer <token>. Tokens read svc_agent_v1_scred_<24 hex>_<secret>; the role names of each operation are the scopes it needs (alternatives are listed separately).',
        },
      },
      schemas: built.schemas,
      headers,
      responses,
    },
  }))));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const cache = new WeakMap<readonly AnyOperation[], { doc: Json; json: string }>();

/**
 * The OpenAPI 3.1 document of the public operations among `operations`, built once per list and cached
 * (deeply frozen).
 * @remarks Paths, parameters, security and responses come from the registry entries; schemas are
 * generated from the valibot schemas with @valibot/to-json-schema (draft 2020-12, recursive Block and
 * RichBlock through `$ref`s into components.schemas).
 */
export function openApiOf(operations: readonly AnyOperation[]): { doc: object; json: string } {
  let entry = cache.get(operations);
  if (!entry) {
    const doc = deepFreeze(build(operations));
    entry = { doc, json: JSON.stringify(doc) };
    cache.set(operations, entry);
  }
  return entry;
}

/** The published OpenAPI 3.1 document (served at /openapi.json), generated from the contract. */
export function buildOpenApi(): object {
  return openApiOf(contractOperations).doc;
}

/** {@link buildOpenApi} as JSON text, serialized once. */
export function openApiJson(): string {
  return openApiOf(contractOperations).json;
}
