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
import { ServiceError, invalid } from '../errors.ts';
import type { Operation, RequestContext } from './context.ts';
import { renderDocumentPage } from './document-page.ts';
import { baseHeaders, JSON_TYPE } from './envelope.ts';
import { errorResponse, failureResponse } from './errors-edge.ts';
import { exceedsBytes, utf8Length } from './http-util.ts';
import { createRouter } from './router.ts';
import { activationBlocked } from './unavailable.ts';
import { routeTable } from './routes.ts';
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
  /** Serve the unauthenticated local-development document page at /documents/{ref}. Default true. */
  documentPages?: boolean | undefined;
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9_-]{16,128}$/;
const BEARER = /^Bearer +([^\s]+) *$/i;
const BEARER_SCHEME = /^bearer(?:\s|$)/i;
const JSON_CONTENT_TYPE = /^application\/(?:[a-z0-9!#$&^_.+-]+\+)?json *(?:;|$)/i;

const SURFACE_NAMES: Record<keyof ActivationState, string> = { search: 'Search', reviews: 'Reading reviews', proposals: 'Proposal submission' };

const decoder = new TextDecoder('utf-8', { fatal: true });

class Context implements RequestContext {
  clientRequestId: string | undefined = undefined;
  params: readonly string[] = [];
  query = '';
  credential: Credential | null = null;
  budget: BudgetStatus | null = null;
  body: unknown = undefined;
  constructor(
    readonly engine: Engine,
    readonly request: PlainRequest,
    readonly requestId: string,
    private readonly effectiveActivation: () => Promise<ActivationState>,
  ) {}
  activation(): Promise<ActivationState> {
    return this.effectiveActivation();
  }
  charge(): void {
    if (this.budget !== null || this.credential === null) return;
    this.budget = this.engine.credentials.charge(this.credential);
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
      { field: 'headers.Content_Type', message: 'must be application/json' },
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

function missingScope(op: Operation, credential: Credential): string | null {
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

  let openApiText: string | null = null;
  const openapi: Operation = {
    auth: 'none',
    charge: 'never',
    async run(ctx) {
      if (openApiText === null) {
        const mod = await import('./openapi.ts');
        openApiText = JSON.stringify(mod.buildOpenApi());
      }
      const headers = baseHeaders(ctx, JSON_TYPE);
      headers['cache-control'] = 'public, max-age=300';
      return { status: 200, headers, body: openApiText };
    },
  };
  const documentPage: Operation = {
    auth: 'none',
    charge: 'never',
    async run(ctx) {
      const html = await renderDocumentPage(engine, ctx.params[0]!);
      if (html === null) throw new ServiceError('NOT_FOUND', 'The document was not found.');
      const headers = baseHeaders(ctx, 'text/html; charset=utf-8');
      headers['content-security-policy'] = "default-src 'none'; style-src 'unsafe-inline'";
      headers['x-content-type-options'] = 'nosniff';
      return { status: 200, headers, body: html };
    },
  };
  const router = createRouter(routeTable({ openapi, documentPage: options.documentPages === false ? null : documentPage }));

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
    if (q !== -1) ctx.query = url.slice(q + 1);
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
    ctx.params = match.params;

    const clientRequestId = headers['x-request-id'];
    if (clientRequestId !== undefined) {
      if (!CLIENT_REQUEST_ID.test(clientRequestId)) {
        throw invalid('X-Request-Id must be 16-128 letters, digits, underscores or hyphens.', [
          { field: 'headers.X_Request_Id', message: 'must be 16-128 letters, digits, underscores or hyphens' },
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

    if (op.charge === 'before') ctx.charge();

    if (request.bodyTooLarge === true || (request.body !== null && request.body.byteLength > MAX_REQUEST_BODY)) {
      throw invalid('The request body exceeds the limit of 256 KB.', [{ field: '$', message: `must be at most ${MAX_REQUEST_BODY} bytes` }]);
    }
    if (op.body === 'json') ctx.body = parseJsonBody(request);

    return op.run(ctx);
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
    if (ctx.request.method === 'HEAD' && response.body !== undefined) {
      const b = response.body;
      response.headers['content-length'] = String(typeof b === 'string' ? utf8Length(b) : b.byteLength);
      delete response.body;
    }
    return response;
  }

  // Request ids: one minted id (refs.requestId(), `req_` + 28 hex) gives this handler a random 16-hex
  // prefix; each request appends a 12-hex counter. Unique per handler, no randomness per request.
  const idPrefix = engine.deps.refs.requestId().slice(0, 20);
  let idCounter = 0;
  const nextRequestId = () => `${idPrefix}${(idCounter++).toString(16).padStart(12, '0')}`;

  return async function handle(request: PlainRequest): Promise<PlainResponse> {
    const ctx = new Context(engine, request, nextRequestId(), effectiveActivation);
    let response: PlainResponse;
    try {
      response = await pipeline(ctx);
    } catch (e) {
      response = failureResponse(ctx, e, log);
    }
    return finish(ctx, response);
  };
}
