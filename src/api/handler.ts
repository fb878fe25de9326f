/**
 * `createApiHandler`: the whole HTTP API as one function over plain values.
 * @remarks The checks run in one fixed order:
 * 1. a `Cookie` together with a bearer `Authorization` → 401 AUTH_AMBIGUOUS, before anything else;
 * 2. `X-Request-Id` (16-128 letters, digits, `_`, `-`) → else 400, on every path (a valid one is
 *    echoed as meta.clientRequestId by every answer, the 401 of step 1 and the 404/405 included);
 * 3. route: unknown path → 404 NOT_FOUND, known path without the method → 405 with `Allow`;
 * 4. authentication (bearer or operator key) → 401 AUTH_REQUIRED;
 * 5. activation switch → 503, no budget charged (every authenticated request, whatever its scopes);
 * 6. scope → 403 FORBIDDEN;
 * 7. budget charge → 429 RATE_LIMITED with Retry-After;
 * 8. body over 256 KB → 400; path, query and header values checked against the contract entry
 *    (400 naming the wire field; a malformed id in the path is 404 like an unknown one); JSON body
 *    (Content-Type, UTF-8, syntax) → 400 with field `$`;
 * 9. the operation's binding, with typed inputs.
 * Responses larger than 2 MB are never truncated: they become 409 CONFLICT. JSON answers carry
 * `X-Content-Type-Options: nosniff`, answers of authenticated operations `Cache-Control: no-store`
 * (unless they set their own), HTML answers `frame-ancestors 'none'` and `X-Frame-Options: DENY`.
 * @module
 */
import { SURFACE_NAMES, isActivationSurface, type ActivationState } from '../auth/activation.ts';
import type { BudgetStatus } from '../auth/budgets.ts';
import type { Credential } from '../auth/credentials.ts';
import { constantTimeEqual } from '../auth/tokens.ts';
import { engineInternals, type Engine, type PublicEngine } from '../engine.ts';
import { ServiceError, invalid, isServiceError, type ServiceErrorOptions } from '../errors.ts';
import type { EdgeSettings, RequestContext } from './context.ts';
import { errorResponse, failureResponse } from './errors-edge.ts';
import { utf8Length } from '../text.ts';
import { Patterns } from '../ids.ts';
import { wireFieldNames, type AnyOperation } from '../contract/define.ts';
import { bearerToken, namesBearerScheme } from '../contract/bearer.ts';
import type { AnyBinding } from './bind.ts';
import { listBindings } from './bindings.ts';
import { compileInputs, type InputReader } from './inputs.ts';
import { exceedsBytes } from './http-util.ts';
import { openApiJson } from './openapi.ts';
import { bodyLimitOf, createRouter } from './router.ts';
import type { SseLimits } from './sse.ts';
import { activationBlocked } from './unavailable.ts';
import { MAX_REQUEST_BODY, MAX_RESPONSE_BODY, type Handler, type PlainRequest, type PlainResponse } from './types.ts';

/** Options of {@link createApiHandler}. */
export interface ApiHandlerOptions {
  /** The engine `createEngine` made. */
  engine: PublicEngine;
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
  /**
   * The local person's account: `POST /operator/v1/credentials` without `account` (and without a
   * `documentRef`, whose document names its account) creates a credential of it, and
   * `POST /operator/v1/sign-in-links` without `account` a link that signs into it. Default `owner`.
   */
  localAccount?: string | undefined;
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

const JSON_CONTENT_TYPE = /^application\/(?:[a-z0-9!#$&^_.+-]+\+)?json *(?:;|$)/i;

const decoder = new TextDecoder('utf-8', { fatal: true });

class Context implements RequestContext {
  clientRequestId: string | undefined = undefined;
  credential: Credential | null = null;
  budget: BudgetStatus | null = null;
  operation: AnyOperation | null = null;
  binding: AnyBinding | null = null;
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
  const engine: Engine = engineInternals(options.engine);
  const operatorKey = options.operatorKey;
  const log = options.log ?? ((line: object) => console.error(JSON.stringify(line)));
  const overrides: Partial<ActivationState> = {};
  for (const [name, value] of Object.entries(options.activationOverrides ?? {})) {
    if (isActivationSurface(name) && typeof value === 'boolean') overrides[name] = value;
  }
  const effectiveActivation = Object.keys(overrides).length
    ? async () => ({ ...(await engine.activation.get()), ...overrides })
    : () => engine.activation.get();

  const settings: EdgeSettings = { documentPages: options.documentPages ?? 'sign-in-required', openApiJson, eventStreams: options.eventStreams ?? {} };
  if (options.localAccount !== undefined) settings.localAccount = options.localAccount;
  const bindings = listBindings().filter((b) => b.operation.operationId !== 'getDocumentPage' || settings.documentPages !== 'off');
  const router = createRouter(bindings, (b) => b.operation);
  const readers = new Map<AnyBinding, InputReader>(bindings.map((b) => [b, compileInputs(b.operation)]));
  const wireNames = new Map<AnyBinding, WireNames>(bindings.map((b) => [b, wireNamesOf(b.operation)]));

  async function pipeline(ctx: Context): Promise<PlainResponse> {
    const request = ctx.request;
    const headers = request.headers;
    const authorization = headers.authorization;
    const clientRequestId = headers['x-request-id'];
    const clientIdValid = clientRequestId === undefined || Patterns.clientRequestId.test(clientRequestId);
    if (clientIdValid) ctx.clientRequestId = clientRequestId;
    // An empty Cookie header carries no session cookie.
    if (headers.cookie !== undefined && headers.cookie.trim() !== '' && namesBearerScheme(authorization)) {
      throw new ServiceError('AUTH_AMBIGUOUS', 'The request carries both a bearer token and a browser session cookie; send the bearer token alone.');
    }
    if (!clientIdValid) {
      throw invalid('X-Request-Id must be 16-128 letters, digits, underscores or hyphens.', [
        { field: 'X_Request_Id', message: 'must be 16-128 letters, digits, underscores or hyphens' },
      ]);
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
    const binding = match.operation;
    if (binding === undefined) {
      return errorResponse(
        ctx,
        new ServiceError('METHOD_NOT_ALLOWED', `${path} does not support ${method.slice(0, 20)}; use one of ${match.allow}.`),
        { allow: match.allow },
      );
    }
    const op: AnyOperation = binding.operation;
    ctx.operation = op;
    ctx.binding = binding;

    if (op.auth === 'bearer') {
      const token = bearerToken(authorization);
      if (token === null) throw authRequired('This operation needs a bearer token: Authorization: Bearer <token>.');
      const credential = await engine.credentials.authenticate(token);
      ctx.credential = credential;
    } else if (op.auth === 'operator') {
      const token = bearerToken(authorization);
      if (!operatorKey) throw authRequired('The operator API is disabled: this server has no operator key.');
      if (token === null) throw authRequired('The operator API needs Authorization: Bearer <operator key>.');
      if (!constantTimeEqual(token, operatorKey)) {
        throw authRequired("The operator key does not match this server's operator key (the one kw serve printed, --operator-key or KW_OPERATOR_KEY).");
      }
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

    let charging: void | Promise<void> = undefined;
    if (op.charge === 'before') {
      charging = ctx.charge();
      // A read changes nothing, so on a storage that charges with a round trip (several processes)
      // it runs beside the charge; a spent budget still answers 429 in place of whatever it answers.
      // Not for a credential this process has seen spend its window: its read would be work the
      // budget exists to refuse, so its 429 comes first, as for a write.
      if (charging && (op.method !== 'GET' || ctx.credential === null || engine.credentials.budget(ctx.credential).remaining === 0)) {
        await charging;
        charging = undefined;
      }
    }
    if (charging) return besideCharge(charging, async () => binding.run(ctx, readInput(request, op, binding, match.params, query, headers, path)));
    return binding.run(ctx, readInput(request, op, binding, match.params, query, headers, path));
  }

  /** The operation's input, checked: size, parameters, JSON body or byte stream. */
  function readInput(request: PlainRequest, op: AnyOperation, binding: AnyBinding, params: Record<string, string>, query: string, headers: PlainRequest['headers'], path: string) {
    const limit = op.input.bytes?.maxBytes ?? MAX_REQUEST_BODY;
    if (request.bodyTooLarge === true || (request.body !== null && request.body.byteLength > limit)) {
      const shown = limit === MAX_REQUEST_BODY ? '256 KB' : `${limit} bytes`;
      throw invalid(`The request body exceeds the limit of ${shown}.`, [{ field: '$', message: `must be at most ${limit} bytes` }]);
    }
    const input = readers.get(binding)!(params, query, headers, path);
    if (op.input.body) {
      const absent = request.body === null || request.body.byteLength === 0;
      (input as unknown as { body: unknown }).body = absent && op.input.body.optional === true ? undefined : parseJsonBody(request);
    }
    else if (op.input.bytes) (input as unknown as { bytes: AsyncIterable<Uint8Array> }).bytes = limitedBytes(request, op.input.bytes.maxBytes);
    return input;
  }

  /**
   * A read run while its charge is on its way (see the caller): the charge's refusal wins over
   * whatever the read answers or throws.
   */
  async function besideCharge(charging: Promise<void>, read: () => Promise<PlainResponse>): Promise<PlainResponse> {
    charging.catch(() => {}); // awaited below, after the read: not an unhandled rejection meanwhile
    let response: PlainResponse;
    try {
      response = await read();
    } catch (error) {
      await charging;
      throw error;
    }
    try {
      await charging;
    } catch (refused) {
      await response.stream?.[Symbol.asyncIterator]().return?.();
      throw refused;
    }
    return response;
  }

  /** The edge's own headers: nosniff on JSON, no-store on private answers, no framing of HTML. */
  function edgeHeaders(ctx: Context, response: PlainResponse): void {
    const headers = response.headers;
    const type = headers['content-type'];
    if (type !== undefined) {
      if (type.charCodeAt(0) === 97 /* a */ && type.startsWith('application/json')) headers['x-content-type-options'] = 'nosniff';
      else if (type.startsWith('text/html')) {
        const csp = headers['content-security-policy'];
        headers['content-security-policy'] = csp === undefined ? "frame-ancestors 'none'" : csp.includes('frame-ancestors') ? csp : `${csp}; frame-ancestors 'none'`;
        headers['x-frame-options'] = 'DENY';
        headers['x-content-type-options'] = 'nosniff';
      }
    }
    const auth = ctx.operation?.auth;
    if (auth !== undefined && auth !== 'none' && headers['cache-control'] === undefined) headers['cache-control'] = 'no-store';
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
    edgeHeaders(ctx, response);
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
      response = failureResponse(ctx, ctx.binding ? toWireFields(e, wireNames.get(ctx.binding)!) : e, log);
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
  handle.bodyLimit = bodyLimitOf(router);
  handle.streamsBody = (method, url) => bodyLimitOf.bytesOperation(router, method, url);
  return handle;
}

/**
 * The raw body of a bytes operation as chunks: the transport's stream (node:http), or the whole body
 * as one chunk (transports that read it first). Past `limit` the iteration throws INVALID_REQUEST; a
 * body cut short by the client throws INVALID_REQUEST too.
 */
async function* limitedBytes(request: PlainRequest, limit: number): AsyncGenerator<Uint8Array> {
  if (!request.bodyStream) {
    if (request.body && request.body.byteLength) yield request.body;
    return;
  }
  // No return() on the transport's iterator when we stop early: that would destroy the connection
  // before the answer is written; the transport drains or cuts what is left after answering.
  let size = 0;
  const iterator = request.bodyStream[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await iterator.next();
    } catch (e) {
      throw new ServiceError('INVALID_REQUEST', 'The request body ended before it was complete.', { fieldErrors: [{ field: '$', message: 'was cut short' }], cause: e });
    }
    if (next.done) return;
    size += next.value.byteLength;
    if (size > limit) throw invalid(`The request body exceeds the limit of ${limit} bytes.`, [{ field: '$', message: `must be at most ${limit} bytes` }]);
    yield next.value;
  }
}

/**
 * The domain names inputs logically (`idempotencyKey`, `format`); fieldErrors on the wire name them as
 * the client sent them: a header by its name (`Idempotency_Key`: the contract's field grammar has no
 * hyphen), a query value as `query.<name>`, a path segment as `path.<name>`. Body fields keep their path.
 */
/** How an operation's logical input names read on the wire: in fieldErrors, and in messages (headers by their HTTP name). */
interface WireNames {
  fields: Map<string, string>;
  /** Matches the logical names of the operation's headers in a message; null when it has none. */
  inMessages: RegExp | null;
  headers: Map<string, string>;
}

function wireNamesOf(op: AnyOperation): WireNames {
  const headers = new Map(Object.entries(op.input.headers ?? {}).map(([logical, def]) => [logical, (def as { name: string }).name]));
  return { fields: wireFieldNames(op.input), inMessages: headers.size ? new RegExp(`\\b(${[...headers.keys()].join('|')})\\b`, 'g') : null, headers };
}

/** The domain names inputs logically (`idempotencyKey`); answer with the names the client sent. */
function toWireFields(e: unknown, names: WireNames): unknown {
  if (!isServiceError(e)) return e;
  let changed = false;
  const message = names.inMessages === null ? e.message : e.message.replace(names.inMessages, (logical) => names.headers.get(logical) ?? logical);
  if (message !== e.message) changed = true;
  const fieldErrors = e.fieldErrors?.map((fe) => {
    const dot = fe.field.indexOf('.');
    const wire = names.fields.get(dot === -1 ? fe.field : fe.field.slice(0, dot));
    if (wire === undefined) return fe;
    changed = true;
    return { field: dot === -1 ? wire : `${wire}${fe.field.slice(dot)}`, message: fe.message };
  });
  if (!changed) return e;
  const options: ServiceErrorOptions = { retryable: e.retryable, cause: e };
  if (fieldErrors !== undefined) options.fieldErrors = fieldErrors;
  if (e.requiredAction !== undefined) options.requiredAction = e.requiredAction;
  if (e.retryAfterMs !== undefined) options.retryAfterMs = e.retryAfterMs;
  return new ServiceError(e.code, message, options);
}
