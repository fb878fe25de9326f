/**
 * The MCP server over streamable HTTP (the SDK's `StreamableHTTPServerTransport`), as a node:http
 * request handler that `kw serve` mounts at `/mcp`. Sessions are stateful: each is one MCP server
 * (one session state), bound to the bearer token that opened it.
 * @module
 */
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Handler } from '../../src/api/types.ts';
import { createMcpServer } from './server.ts';

/** Options of {@link createMcpHttpHandler}. */
export interface McpHttpOptions {
  /** The API handler every tool call goes through. */
  handler: Handler;
  /** Host header values accepted (DNS-rebinding protection); default: any. */
  allowedHosts?: string[];
  /** Idle sessions are closed after this long; default 30 minutes. */
  sessionIdleMs?: number;
}

/** The mounted MCP endpoint. */
export interface McpHttpHandler {
  /** Handle one request to the MCP endpoint (POST, GET for the notification stream, DELETE to end a session). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Open sessions. */
  sessionCount(): number;
  /** Close every session. */
  close(): Promise<void>;
}

const BEARER = /^Bearer +([^\s]+) *$/i;

interface Session {
  transport: StreamableHTTPServerTransport;
  tokenHash: string;
  lastUsed: number;
}

function rpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * The MCP endpoint as a node:http request handler.
 * @remarks Every request needs `Authorization: Bearer <token>` (401 otherwise, with
 * `WWW-Authenticate: Bearer`); the token is the one the API checks for each tool call, so its scopes
 * and request budget apply. A session answers only the token that opened it (403 for another).
 */
export function createMcpHttpHandler(options: McpHttpOptions): McpHttpHandler {
  const sessions = new Map<string, Session>();
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, s] of sessions) if (now - s.lastUsed > idleMs) void s.transport.close().finally(() => sessions.delete(id));
  }, Math.min(idleMs, 60_000));
  sweep.unref();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const m = BEARER.exec(req.headers.authorization ?? '');
    if (m === null) {
      rpcError(res, 401, -32001, 'The MCP endpoint needs Authorization: Bearer <token> (an API token; its scopes and budget apply).', { 'www-authenticate': 'Bearer' });
      return;
    }
    const token = m[1]!;
    (req as IncomingMessage & { auth?: { token: string; clientId: string; scopes: string[] } }).auth = { token, clientId: 'bearer', scopes: [] };
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session) return rpcError(res, 404, -32001, 'Unknown or expired MCP session; initialize a new one.');
      if (session.tokenHash !== hashOf(token)) return rpcError(res, 403, -32001, 'This MCP session belongs to another token.');
      session.lastUsed = Date.now();
      await session.transport.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') return rpcError(res, 400, -32000, 'Send an initialize request (POST) first; later requests carry Mcp-Session-Id.');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, tokenHash: hashOf(token), lastUsed: Date.now() });
      },
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts, enableDnsRebindingProtection: true } : {}),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    const server = createMcpServer({ handler: options.handler });
    await server.connect(transport);
    await transport.handleRequest(req, res);
    if (transport.sessionId === undefined) await server.close(); // not an initialize request: no session was made
  }

  return {
    handle,
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.transport.close()));
      sessions.clear();
    },
  };
}

/**
 * Mount the MCP endpoint on a running node:http server (e.g. `listen(handler).server`): requests to
 * `path` (default `/mcp`) go to MCP, every other request to the listeners the server already had.
 * @example
 * const listening = await listen(apiHandler, { port: 8787 });
 * const mcp = mountMcp(listening.server, { handler: apiHandler });
 * // on shutdown: await mcp.close(); await listening.close();
 */
export function mountMcp(server: HttpServer, options: McpHttpOptions & { path?: string }): McpHttpHandler {
  const path = options.path ?? '/mcp';
  const mcp = createMcpHttpHandler(options);
  const previous = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const p = url.indexOf('?');
    if ((p === -1 ? url : url.slice(0, p)) === path) {
      mcp.handle(req, res).catch(() => {
        if (!res.headersSent) rpcError(res, 500, -32603, 'The MCP endpoint failed to handle the request.');
        else res.destroy();
      });
    } else for (const listener of previous) listener.call(server, req, res);
  });
  return mcp;
}
