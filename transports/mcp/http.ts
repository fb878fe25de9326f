/**
 * The MCP server over streamable HTTP (the SDK's `StreamableHTTPServerTransport`), as a node:http
 * request handler that `kw serve` mounts at `/mcp`. Sessions are stateful: each is one MCP server
 * (one session state), bound to the credential that opened it.
 * @module
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Handler } from '../../src/api/types.ts';
import { memoryEventStore } from './event-store.ts';
import { createMcpServer } from './server.ts';
import { bearerToken, namesBearerScheme } from '../../src/contract/bearer.ts';

/** Options of {@link createMcpHttpHandler}. */
export interface McpHttpOptions {
  /** The API handler every tool call goes through. */
  handler: Handler;
  /**
   * Host header values accepted (DNS-rebinding protection), as `host` or `host:port`
   * (`[::1]:8787`). Default: the loopback names (`localhost`, `127.0.0.1`, `[::1]`) and the address
   * the server is bound to when it is not a wildcard, each on the server's port.
   */
  allowedHosts?: string[];
  /**
   * Origin header values accepted (`http://app.example:3000`). A request without Origin (every
   * non-browser client) is accepted; with one, it must be listed, or be `http(s)://` an allowed host.
   */
  allowedOrigins?: string[];
  /** Idle sessions are closed after this long. Default 5 minutes. */
  sessionIdleMs?: number;
  /** Open sessions one credential may hold; one more initialize is 429 RATE_LIMITED. Default 8. */
  maxSessionsPerCredential?: number;
  /** Open sessions in all; one more initialize is 503 TEMPORARILY_UNAVAILABLE. Default 256. */
  maxSessions?: number;
  /** The clock of idle expiry (tests move it); default `Date.now`. */
  now?: () => number;
}

/** The mounted MCP endpoint. */
export interface McpHttpHandler {
  /** Handle one request to the MCP endpoint (POST, GET for the notification stream, DELETE to end a session). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Open sessions. */
  sessionCount(): number;
  /** Close the sessions idle for longer than `sessionIdleMs` now (a timer also does this); resolves with how many. */
  sweepIdle(): Promise<number>;
  /** Close every session. */
  close(): Promise<void>;
}

/** The `retry` (ms) a client is told to wait before resuming a dropped stream. */
export const MCP_RETRY_MS = 1000;

/** The defaults of {@link McpHttpOptions}. */
export const MCP_HTTP_DEFAULTS = { sessionIdleMs: 5 * 60_000, maxSessionsPerCredential: 8, maxSessions: 256 } as const;

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

interface Session {
  transport: StreamableHTTPServerTransport;
  owner: string;
  tokenHash: string;
  lastUsed: number;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** An answer in the contract's error envelope (`{ error: { code, message, retryable }, meta }`). */
function apiError(res: ServerResponse, status: number, code: string, message: string, retryAfterMs?: number, headers: Record<string, string> = {}): void {
  const requestId = `req_${randomBytes(14).toString('hex')}`;
  const error: Record<string, unknown> = { code, message, retryable: retryAfterMs !== undefined };
  if (retryAfterMs !== undefined) {
    error.retryAfterMs = retryAfterMs;
    headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
  }
  const body = JSON.stringify({ error, meta: { apiVersion: '1', requestId } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': requestId, 'cache-control': 'no-store', ...headers });
  res.end(body);
}

/** Lower-cased `host[:port]` split; null when it is not a plausible authority. */
function splitAuthority(value: string): { host: string; port: string | null } | null {
  const m = /^(\[[0-9a-f:.]+\]|[^:\[\]/\s]+)(?::(\d{1,5}))?$/i.exec(value.trim());
  return m ? { host: m[1]!.toLowerCase(), port: m[2] ?? null } : null;
}

/**
 * The MCP endpoint as a node:http request handler.
 * @remarks
 * - Host and Origin are checked first (the MCP specification's DNS-rebinding rule): a Host or
 *   Origin that is not allowed is 403 FORBIDDEN.
 * - A `Cookie` together with a bearer `Authorization` is 401 AUTH_AMBIGUOUS, as over REST.
 * - Every request needs `Authorization: Bearer <token>`; an initialize request is authenticated
 *   through the API (`GET /api/v1/auth`, charged like any request) before a session exists, so a
 *   token the API refuses gets the API's answer (401 AUTH_REQUIRED with `WWW-Authenticate: Bearer`,
 *   or 429 when its budget is spent) and no session.
 * - Sessions are capped per credential ({@link McpHttpOptions.maxSessionsPerCredential}: then 429
 *   RATE_LIMITED) and in all ({@link McpHttpOptions.maxSessions}: then 503 TEMPORARILY_UNAVAILABLE),
 *   both with `Retry-After` = the time until the least recently used session concerned expires; a
 *   session idle for {@link McpHttpOptions.sessionIdleMs} is closed and forgotten.
 * - A session answers only the token that opened it (403 for another).
 */
export function createMcpHttpHandler(options: McpHttpOptions): McpHttpHandler & { bindTo(address: AddressInfo | string | null): void } {
  const sessions = new Map<string, Session>();
  const pendingByOwner = new Map<string, number>();
  let pendingTotal = 0;
  const idleMs = options.sessionIdleMs ?? MCP_HTTP_DEFAULTS.sessionIdleMs;
  const perCredential = options.maxSessionsPerCredential ?? MCP_HTTP_DEFAULTS.maxSessionsPerCredential;
  const total = options.maxSessions ?? MCP_HTTP_DEFAULTS.maxSessions;
  const now = options.now ?? Date.now;
  let boundHosts: string[] = [];
  let boundPort: string | null = null;

  async function sweepIdle(): Promise<number> {
    const t = now();
    const idle = [...sessions].filter(([, s]) => t - s.lastUsed >= idleMs);
    for (const [id] of idle) sessions.delete(id);
    await Promise.all(idle.map(([, s]) => s.transport.close().catch(() => {})));
    return idle.length;
  }
  const sweep = setInterval(() => void sweepIdle(), Math.max(1000, Math.min(idleMs, 60_000)));
  sweep.unref();

  function hostAllowed(value: string | undefined): boolean {
    if (value === undefined) return false;
    const a = splitAuthority(value);
    if (a === null) return false;
    if (options.allowedHosts) return options.allowedHosts.some((h) => h.toLowerCase() === a.host || h.toLowerCase() === `${a.host}:${a.port}`);
    if (boundPort !== null && a.port !== null && a.port !== boundPort) return false;
    return LOOPBACK_NAMES.includes(a.host) || boundHosts.includes(a.host);
  }

  function originAllowed(origin: string): boolean {
    if (options.allowedOrigins?.includes(origin)) return true;
    const m = /^https?:\/\/([^/]+)$/i.exec(origin);
    return m !== null && hostAllowed(m[1]);
  }

  /** Milliseconds until the least recently used of `list` expires. */
  const untilFree = (list: Session[]) => Math.max(1000, Math.min(...list.map((s) => s.lastUsed + idleMs - now())));

  async function authenticate(req: IncomingMessage, token: string): Promise<{ owner: string } | { status: number; headers: Record<string, string>; body: string }> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (typeof req.headers.cookie === 'string') headers.cookie = req.headers.cookie;
    const answer = await options.handler({ method: 'GET', url: '/api/v1/auth', headers, body: null, remoteAddress: req.socket.remoteAddress ?? 'mcp' });
    let text = answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body).toString('utf8');
    if (answer.stream) for await (const chunk of answer.stream) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (answer.status !== 200) return { status: answer.status, headers: answer.headers, body: text };
    let credentialRef: unknown;
    try {
      credentialRef = (JSON.parse(text) as { data?: { credentialRef?: unknown } }).data?.credentialRef;
    } catch {
      credentialRef = undefined;
    }
    return { owner: typeof credentialRef === 'string' ? credentialRef : `token:${hashOf(token)}` };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostAllowed(req.headers.host)) return apiError(res, 403, 'FORBIDDEN', `The Host header ${JSON.stringify(req.headers.host ?? '')} is not one this MCP endpoint answers (DNS-rebinding protection); use the server's own address.`);
    const origin = req.headers.origin;
    if (typeof origin === 'string' && !originAllowed(origin)) return apiError(res, 403, 'FORBIDDEN', `The Origin ${JSON.stringify(origin)} may not use this MCP endpoint.`);
    const authorization = req.headers.authorization;
    const token = bearerToken(authorization);
    if (req.headers.cookie !== undefined && namesBearerScheme(authorization)) {
      return apiError(res, 401, 'AUTH_AMBIGUOUS', 'The request carries both a bearer token and a browser session cookie; send the bearer token alone.');
    }
    if (token === null) {
      return apiError(res, 401, 'AUTH_REQUIRED', 'The MCP endpoint needs Authorization: Bearer <token> (an API token; its scopes and budget apply).', undefined, { 'www-authenticate': 'Bearer' });
    }
    (req as IncomingMessage & { auth?: { token: string; clientId: string; scopes: string[] } }).auth = { token, clientId: 'bearer', scopes: [] };
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session || now() - session.lastUsed >= idleMs) {
        if (session) {
          sessions.delete(sessionId);
          void session.transport.close().catch(() => {});
        }
        return apiError(res, 404, 'NOT_FOUND', 'Unknown or expired MCP session; initialize a new one.');
      }
      if (session.tokenHash !== hashOf(token)) return apiError(res, 403, 'FORBIDDEN', 'This MCP session belongs to another token.');
      session.lastUsed = now();
      await session.transport.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') return apiError(res, 400, 'INVALID_REQUEST', 'Send an initialize request (POST) first; later requests carry Mcp-Session-Id.');

    const auth = await authenticate(req, token);
    if (!('owner' in auth)) {
      res.writeHead(auth.status, { ...auth.headers, 'content-length': Buffer.byteLength(auth.body) });
      res.end(auth.body);
      return;
    }
    const owner = auth.owner;
    await sweepIdle();
    const own = [...sessions.values()].filter((s) => s.owner === owner);
    if (own.length + (pendingByOwner.get(owner) ?? 0) >= perCredential) {
      return apiError(res, 429, 'RATE_LIMITED', `This credential already holds ${perCredential} open MCP sessions (the limit); end one (DELETE /mcp with its Mcp-Session-Id) or wait until one is idle for ${Math.round(idleMs / 1000)} s.`, own.length ? untilFree(own) : 1000);
    }
    if (sessions.size + pendingTotal >= total) {
      return apiError(res, 503, 'TEMPORARILY_UNAVAILABLE', `The MCP endpoint holds ${total} open sessions (its limit); try again when one has ended.`, sessions.size ? untilFree([...sessions.values()]) : 1000);
    }
    pendingByOwner.set(owner, (pendingByOwner.get(owner) ?? 0) + 1);
    pendingTotal++;
    try {
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // Resumable streams: event ids, a priming event with `retry` on each POST stream, and
        // Last-Event-ID on GET replaying what a dropped connection missed (event-store.ts).
        eventStore: memoryEventStore(),
        retryInterval: MCP_RETRY_MS,
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, owner, tokenHash: hashOf(token), lastUsed: now() });
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      };
      const server = createMcpServer({ handler: options.handler });
      await server.connect(transport);
      await transport.handleRequest(req, res);
      if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) await server.close(); // no session was made
    } finally {
      const left = (pendingByOwner.get(owner) ?? 1) - 1;
      if (left === 0) pendingByOwner.delete(owner);
      else pendingByOwner.set(owner, left);
      pendingTotal--;
    }
  }

  return {
    handle,
    sessionCount: () => sessions.size,
    sweepIdle,
    bindTo(address) {
      if (address === null || typeof address === 'string') return;
      boundPort = String(address.port);
      const host = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
      boundHosts = host === '0.0.0.0' || host === '[::]' ? [] : [host.toLowerCase()];
    },
    async close() {
      clearInterval(sweep);
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(all.map((s) => s.transport.close().catch(() => {})));
    },
  };
}

/**
 * Mount the MCP endpoint on a running node:http server (e.g. `listen(handler).server`): requests to
 * `path` (default `/mcp`) go to MCP, every other request to the listeners the server already had.
 * The default allowed Host names are the loopback names and the server's bound address, on its port.
 * @example
 * const listening = await listen(apiHandler, { port: 8787 });
 * const mcp = mountMcp(listening.server, { handler: apiHandler });
 * // on shutdown: await mcp.close(); await listening.close();
 */
export function mountMcp(server: HttpServer, options: McpHttpOptions & { path?: string }): McpHttpHandler {
  const path = options.path ?? '/mcp';
  const mcp = createMcpHttpHandler(options);
  mcp.bindTo(server.address());
  server.on('listening', () => mcp.bindTo(server.address()));
  const previous = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const p = url.indexOf('?');
    if ((p === -1 ? url : url.slice(0, p)) === path) {
      mcp.handle(req, res).catch(() => {
        if (!res.headersSent) apiError(res, 500, 'INTERNAL_ERROR', 'The MCP endpoint failed to handle the request.');
        else res.destroy();
      });
    } else for (const listener of previous) listener.call(server, req, res);
  });
  return mcp;
}
