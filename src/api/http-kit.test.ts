/**
 * Shared helpers of the HTTP tests (no tests of its own): a real server on port 0 over the memory
 * adapter, and a small node:http client with full control over headers (duplicates, Cookie) and
 * methods (HEAD).
 * @remarks Named `*.test.ts` because it builds on adapters/ and transports/, which only tests may
 * reach from src/ (scripts/import-direction.test.ts); nothing in the service imports it.
 * @module
 */
import http from 'node:http';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { listen } from '../../transports/http/listener.ts';
import type { ActivationState } from '../auth/activation.ts';
import type { Clock } from '../clock.ts';
import { createEngine, type Engine } from '../engine.ts';
import { createApiHandler } from './handler.ts';
import { SCOPES } from '../auth/scopes.ts';

/** A reply as the tests inspect it. */
export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** Options of {@link request}. */
export interface RequestOptions {
  method?: string;
  headers?: Record<string, string | string[]>;
  /** An object is sent as JSON with Content-Type application/json (unless a content-type is given). */
  body?: string | Uint8Array | object;
  token?: string;
}

/** One request on a fresh connection (no keep-alive, so nothing stays open after a test). */
export function request(base: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string | string[]> = { ...(options.headers ?? {}) };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let payload: string | Uint8Array | undefined;
  if (options.body !== undefined) {
    if (typeof options.body === 'string' || options.body instanceof Uint8Array) payload = options.body;
    else {
      payload = JSON.stringify(options.body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    }
    headers['content-length'] = String(typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength);
  }
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = undefined;
        if (/json/.test(String(res.headers['content-type'] ?? '')) && text) json = JSON.parse(text);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Options of {@link startServer}. */
export interface ServerOptions {
  clock?: Clock;
  budgetWindowMs?: number;
  activationOverrides?: Partial<ActivationState>;
  /** Replace parts of the engine before the handler is built (fault injection). */
  patchEngine?: (engine: Engine) => void;
}

/** A running test server. */
export interface TestServer {
  url: string;
  engine: Engine;
  operatorKey: string;
  /** Lines the handler logged. */
  logs: object[];
  /** Create a credential through the operator API; returns the 201 data. */
  credential(spec: {
    scopes: string[];
    account?: string;
    label?: string;
    documentRef?: string;
    requestBudget?: number;
    expiresInDays?: number;
  }): Promise<{ token: string; credentialRef: string; accountId: string; [k: string]: unknown }>;
  /** Request relative to the server. */
  req(path: string, options?: RequestOptions): Promise<Reply>;
  close(): Promise<void>;
}

/** Every scope. */
export const ALL_SCOPES: string[] = [...SCOPES];

/** Start engine (memory storage), handler and listener on 127.0.0.1:0. Always `close()` it. */
export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const engineOptions: Parameters<typeof createEngine>[0] = { storage: memoryStorage() };
  if (options.clock) engineOptions.clock = options.clock;
  if (options.budgetWindowMs) engineOptions.budgetWindowMs = options.budgetWindowMs;
  const engine = createEngine(engineOptions);
  options.patchEngine?.(engine);
  const operatorKey = 'test-operator-key-0123456789abcdef';
  const logs: object[] = [];
  const handler = createApiHandler({
    engine,
    operatorKey,
    log: (line) => logs.push(line),
    activationOverrides: options.activationOverrides,
  });
  const server = await listen(handler, { port: 0 });
  const req = (path: string, o?: RequestOptions) => request(server.url, path, o);
  return {
    url: server.url,
    engine,
    operatorKey,
    logs,
    req,
    async credential(spec) {
      const r = await req('/operator/v1/credentials', {
        method: 'POST',
        token: operatorKey,
        body: { label: 'test', ...spec },
      });
      if (r.status !== 201) throw new Error(`credential creation failed: ${r.status} ${r.text}`);
      return r.json.data;
    },
    async close() {
      await server.close();
      await engine.close();
    },
  };
}
