/**
 * `createApiHandler`: the whole HTTP API as one function over plain values.
 * @remarks The checks run in one fixed order:
 * 1. a `Cookie` together with a bearer `Authorization` → 401 AUTH_AMBIGUOUS, before anything else;
 * 2. route: unknown path → 404 NOT_FOUND, known path without the method → 405 with `Allow`;
 * 3. `X-Request-Id` (16-128 letters, digits, `_`, `-`) → else 400;
 * 4. authentication (bearer or operator key) → 401 AUTH_REQUIRED;
 * 5. activation switch → 503, no budget charged (every authenticated request, whatever its scopes);
 * 6. scope → 403 FORBIDDEN;
 * 7. budget charge → 429 RATE_LIMITED with Retry-After;
 * 8. body over 256 KB → 400; JSON body (Content-Type, UTF-8, syntax) → 400 with field `$`;
 * 9. the operation.
 * Responses larger than 2 MB are never truncated: they become 409 CONFLICT.
 * @module
 */
import type { ActivationState } from '../auth/activation.ts';
import type { BudgetStatus } from '../auth/budgets.ts';
import type { Credential } from '../auth/credentials.ts';
import { constantTimeEqual } from '../auth/tokens.ts';
import type { Engine } from '../engine.ts';
import { ServiceError, invalid, isServiceError, type ServiceErrorOptions } from '../errors.ts';
import type { EdgeSettings, RequestContext } from './context.ts';
import { errorResponse, failureResponse } from './errors-edge.ts';
import { utf8Length } from '../text.ts';
import { exceedsBytes, queryParam } from './http-util.ts';
import { listOperations, openApiJson } from './registry/index.ts';
import { wireFieldNames, type AnyOperation, type OperationInput } from './registry/operation.ts';
import { createRouter } from './router.ts';
import type { SseLimits } from './sse.ts';
import { activationBlocked } from './unavailable.ts';
import { MAX_REQUEST_BODY, MAX_RESPONSE_BODY, type Handler, type PlainRequest, type PlainResponse } from './types.ts';

/** Options of {@link createApiHandler}. */
export interface ApiHandlerOptions {
  engine: Engine;
  /** Key of the operator API (`Authorization: Bearer <key>` under /operator/v1); without it that API answers 401. */
  operatorKey?: string | undefined;
  /** Structured log sink; receives one line per unexpected error. Default: JSON on stderr. */
  log?: ((line: object) => void) | undefined;
  /**
   * Switches fixed by the embedding program. They take precedence over the stored state (the operator
   * API still stores changes, and reports the effective state).
   */
  activationOverrides?: Partial<ActivationState> | undefined;
  /**
   * The person's document pages at /documents/{ref} (the `browserHref` target). `sign-in-required`
   * (default): 401 with a short HTML note, since this server has no sign-in; `open`: a read-only HTML
   * view without sign-in, for a local development server only; `off`: 404.
   */
  documentPages?: EdgeSettings['documentPages'] | undefined;
  /**
   * Called with every request's outcome (after the response is built): for request logs and tests.
   * Must not throw.
   */
  onResponse?: ((event: ResponseEvent) => void) | undefined;
  /**
   * Limits of research-job event streams; default the contract's: `retry: 5000`, a keep-alive after
   * 15 s of silence, closing after 1024 events or 20 s. Tests and benchmarks shorten them.
   */
  eventStreams?: SseLimits | undefined;
}

/** What {@link ApiHandlerOptions.onResponse} receives. */
export interface ResponseEvent {
  request: PlainRequest;
  response: PlainResponse;
  requestId: string;
  /** The operation that answered, or null (unknown path, 405, refused before routing). */
  operation: AnyOperation | null;
  /** The error code of an error answer. */
  errorCode: string | null;
  errorMessage: string | null;
  durationMs: number;
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9_-]{16,128}$/;
const BEARER = /^Bearer +([^\s]+) *$/i;
const BEARER_SCHEME = /^bearer(?:\s|$)/i;
const JSON_CONTENT_TYPE = /^application\/(?:[a-z0-9!#$&^_.+-]+\+)?json *(?:;|$)/i;

const SURFACE_NAMES: Record<keyof ActivationState, string> = { search: 'Search', reviews: 'Reading reviews', proposals: 'Proposal submission' };

const decoder = new TextDecoder('utf-8', { fatal: true });

class Context implements RequestContext {
  clientRequestId: string | undefined = undefined;
  credential: Credential | null = null;
  budget: BudgetStatus | null = null;
  operation: AnyOperation | null = null;
  constructor(
    readonly engine: Engine,
    readonly request: PlainRequest,
    readonly settings: EdgeSettings,
    readonly requestId: string,
    private readonly effectiveActivation: () => Promise<ActivationState>,
  ) {}
  activation(): Promise<ActivationState> {
    return this.effectiveActivation();
  }
  charge(): void | Promise<void> {
    if (this.budget !== null || this.credential === null) return;
    const credentials = this.engine.credentials;
    if (credentials.sharedBudgets) {
      return credentials.take(this.credential).then((budget) => {
        this.budget = budget;
      });
    }
    this.budget = credentials.charge(this.credential);
  }
}

function authRequired(message: string): ServiceError {
  return new ServiceError('AUTH_REQUIRED', message, { requiredAction: 'authenticate' });
}

function parseJsonBody(request: PlainRequest): unknown {
  const body = request.body;
  if (body === null || body.byteLength === 0) {
    throw invalid('This operation needs a JSON request body.', [{ field: '$', message: 'is required' }]);
  }
  const type = request.headers['content-type'];
  if (type === undefined || !JSON_CONTENT_TYPE.test(type)) {
    throw invalid('The request body must be sent as Content-Type: application/json.', [
      { field: 'Content_Type', message: 'must be application/json' },
    ]);
  }
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw invalid('The request body is not valid UTF-8.', [{ field: '$', message: 'is not valid UTF-8' }]);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    const detail = e instanceof Error ? e.message : 'syntax error';
    throw invalid(`The request body is not valid JSON: ${detail}`, [{ field: '$', message: `is not valid JSON: ${detail}`.slice(0, 1024) }]);
  }
}

function missingScope(op: AnyOperation, credential: Credential): string | null {
  const scopes = credential.scopeSet;
  if (op.allScopes) for (const s of op.allScopes) if (!scopes.has(s)) return s;
  if (op.anyScopes && !op.anyScopes.some((s) => scopes.has(s))) return op.anyScopes.join(' or ');
  return null;
}

/**
 * Build the API handler over an engine.
 * @example
 * const handler = createApiHandler({ engine, operatorKey });
 * const server = await listen(handler, { port: 8787 });
 */
export function createApiHandler(options: ApiHandlerOptions): Handler {
  const { engine, operatorKey } = options;
  const log = options.log ?? ((line: object) => console.error(JSON.stringify(line)));
  const overrides: Partial<ActivationState> = {};
  for (const [name, value] of Object.entries(options.activationOverrides ?? {})) {
    if ((name === 'search' || name === 'reviews' || name === 'proposals') && typeof value === 'boolean') overrides[name] = value;
  }
  const effectiveActivation = Object.keys(overrides).length
    ? async () => ({ ...(await engine.activation.get()), ...overrides })
    : () => engine.activation.get();

  const settings: EdgeSettings = { documentPages: options.documentPages ?? 'sign-in-required', openApiJson, eventStreams: options.eventStreams ?? {} };
  const operations = listOperations().filter((op) => op.operationId !== 'getDocumentPage' || settings.documentPages !== 'off');
  const router = createRouter(operations);
  const fieldNames = new Map(operations.map((op) => [op, wireFieldNames(op.input)]));

  async function pipeline(ctx: Context): Promise<PlainResponse> {
    const request = ctx.request;
    const headers = request.headers;
    const authorization = headers.authorization;
    if (headers.cookie !== undefined && authorization !== undefined && BEARER_SCHEME.test(authorization)) {
      throw new ServiceError('AUTH_AMBIGUOUS', 'The request carries both a bearer token and a browser session cookie; send the bearer token alone.');
    }

    let url = request.url;
    if (url.charCodeAt(0) !== 47 /* / */) {
      // absolute-form (`http://host/path`, sent through proxies): keep the path and query
      const authority = url.indexOf('//');
      const slash = authority === -1 ? -1 : url.indexOf('/', authority + 2);
      url = slash === -1 ? '/' : url.slice(slash);
    }
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? '' : url.slice(q + 1);
    const method = request.method;
    const match = router.match(method, path);
    if (match === null) {
      throw new ServiceError('NOT_FOUND', `No operation exists at ${path.length > 200 ? `${path.slice(0, 200)}…` : path}; the operations are listed in /openapi.json.`);
    }
    const op = match.operation;
    if (op === undefined) {
      return errorResponse(
        ctx,
        new ServiceError('METHOD_NOT_ALLOWED', `${path} does not support ${method.slice(0, 20)}; use one of ${match.allow}.`),
        { allow: match.allow },
      );
    }
    ctx.operation = op;

    const clientRequestId = headers['x-request-id'];
    if (clientRequestId !== undefined) {
      if (!CLIENT_REQUEST_ID.test(clientRequestId)) {
        throw invalid('X-Request-Id must be 16-128 letters, digits, underscores or hyphens.', [
          { field: 'X_Request_Id', message: 'must be 16-128 letters, digits, underscores or hyphens' },
        ]);
      }
      ctx.clientRequestId = clientRequestId;
    }

    if (op.auth === 'bearer') {
      const m = authorization === undefined ? null : BEARER.exec(authorization);
      if (m === null) throw authRequired('This operation needs a bearer token: Authorization: Bearer <token>.');
      const credential = await engine.credentials.authenticate(m[1]!);
      ctx.credential = credential;
    } else if (op.auth === 'operator') {
      const m = authorization === undefined ? null : BEARER.exec(authorization);
      if (!operatorKey) throw authRequired('The operator API is disabled: this server has no operator key.');
      if (m === null || !constantTimeEqual(m[1]!, operatorKey)) throw authRequired('The operator API needs Authorization: Bearer <operator key>.');
    }

    // "Activation-blocked operations answer 503 to every authenticated request": before the scope.
    if (op.activation !== undefined) {
      const state = await ctx.activation();
      if (!state[op.activation]) {
        throw activationBlocked(SURFACE_NAMES[op.activation]);
      }
    }
    if (ctx.credential) {
      const missing = missingScope(op, ctx.credential);
      if (missing !== null) throw new ServiceError('FORBIDDEN', `This credential lacks the scope ${missing}; use a token created with it.`);
    }

    if (op.charge === 'before') {
      const charging = ctx.charge();
      if (charging) await charging;
    }

    const limit = op.input.bytes?.maxBytes ?? MAX_REQUEST_BODY;
    if (request.bodyTooLarge === true || (request.body !== null && request.body.byteLength > limit)) {
      const shown = limit === MAX_REQUEST_BODY ? '256 KB' : `${limit} bytes`;
      throw invalid(`The request body exceeds the limit of ${shown}.`, [{ field: '$', message: `must be at most ${limit} bytes` }]);
    }
    return op.run(ctx, readInput(op, match.params, query, request));
  }

  function finish(ctx: Context, response: PlainResponse): PlainResponse {
    const body = response.body;
    if (body !== undefined && exceedsBytes(body, MAX_RESPONSE_BODY)) {
      response = errorResponse(
        ctx,
        new ServiceError(
          'CONFLICT',
          'The response would exceed the 2 MB limit of the API, so this representation is unreadable through the API; nothing was truncated.',
          { requiredAction: 'refresh-resource' },
        ),
      );
    }
    const op = ctx.operation;
    if (op?.researchBudget && ctx.credential) {
      const runs = engine.jobs.runsRemaining(ctx.credential.actor);
      if (runs !== null) response.headers['x-service-research-runs-remaining'] = String(runs);
    }
    if (ctx.request.method === 'HEAD' && response.body !== undefined) {
      const b = response.body;
      response.headers['content-length'] = String(typeof b === 'string' ? utf8Length(b) : b.byteLength);
      delete response.body;
    }
    if (ctx.request.method === 'HEAD' && response.stream !== undefined) {
      // A HEAD of an event stream answers its headers only; the stream never starts.
      void (response.stream as AsyncGenerator<unknown>).return?.(undefined);
      delete response.stream;
    }
    return response;
  }

  // Request ids: one minted id (refs.requestId(), `req_` + 28 hex) gives this handler a random 16-hex
  // prefix; each request appends a 12-hex counter. Unique per handler, no randomness per request.
  const idPrefix = engine.deps.refs.requestId().slice(0, 20);
  let idCounter = 0;
  const nextRequestId = () => `${idPrefix}${(idCounter++).toString(16).padStart(12, '0')}`;

  const onResponse = options.onResponse;
  const handle: Handler = async function handle(request: PlainRequest): Promise<PlainResponse> {
    const started = onResponse ? performance.now() : 0;
    const ctx = new Context(engine, request, settings, nextRequestId(), effectiveActivation);
    let response: PlainResponse;
    let failure: unknown = null;
    try {
      response = await pipeline(ctx);
    } catch (e) {
      failure = e;
      response = failureResponse(ctx, ctx.operation ? toWireFields(e, fieldNames.get(ctx.operation)!) : e, log);
    }
    response = finish(ctx, response);
    if (onResponse) {
      const known = isServiceError(failure) ? failure : null;
      onResponse({
        request,
        response,
        requestId: ctx.requestId,
        operation: ctx.operation,
        errorCode: failure === null ? null : (known?.code ?? 'INTERNAL_ERROR'),
        errorMessage: failure === null ? null : (known?.message ?? 'An unexpected error occurred.'),
        durationMs: performance.now() - started,
      });
    }
    return response;
  };
  handle.bodyLimit = (method, url) => {
    const q = url.indexOf('?');
    const op = router.match(method, q === -1 ? url : url.slice(0, q))?.operation;
    return op?.input.bytes?.maxBytes ?? MAX_REQUEST_BODY;
  };
  return handle;
}

/** The input of an operation: path parameters, query values and headers by logical name, and the JSON body. */
function readInput(op: AnyOperation, params: Record<string, string>, query: string, request: PlainRequest): OperationInput {
  const input = op.input;
  const q: Record<string, string | undefined> = {};
  if (input.query) for (const name of Object.keys(input.query)) q[name] = queryParam(query, name);
  const h: Record<string, string | undefined> = {};
  if (input.headers) for (const name of Object.keys(input.headers)) h[name] = request.headers[input.headers[name]!.name.toLowerCase()];
  const body: unknown = input.body ? parseJsonBody(request) : undefined;
  const bytes = input.bytes ? (request.body ?? new Uint8Array(0)) : undefined;
  return { path: params, query: q, headers: h, body, bytes } as OperationInput;
}

/**
 * The domain names inputs logically (`idempotencyKey`, `format`); fieldErrors on the wire name them as
 * the client sent them: a header by its name (`Idempotency_Key`: the contract's field grammar has no
 * hyphen), a query value as `query.<name>`, a path segment as `path.<name>`. Body fields keep their path.
 */
function toWireFields(e: unknown, names: Map<string, string>): unknown {
  if (!isServiceError(e) || !e.fieldErrors?.length || names.size === 0) return e;
  let changed = false;
  const fieldErrors = e.fieldErrors.map((fe) => {
    const dot = fe.field.indexOf('.');
    const wire = names.get(dot === -1 ? fe.field : fe.field.slice(0, dot));
    if (wire === undefined) return fe;
    changed = true;
    return { field: dot === -1 ? wire : `${wire}${fe.field.slice(dot)}`, message: fe.message };
  });
  if (!changed) return e;
  const options: ServiceErrorOptions = { retryable: e.retryable, fieldErrors, cause: e };
  if (e.requiredAction !== undefined) options.requiredAction = e.requiredAction;
  if (e.retryAfterMs !== undefined) options.retryAfterMs = e.retryAfterMs;
  return new ServiceError(e.code, e.message, options);
}
