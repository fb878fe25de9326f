/**
 * The dev server behind `kw serve`: the composition of storage, engine, API handler, request log and
 * the node:http listener, with the optional demo seed.
 * @remarks Order of start: the socket is bound first, so a busy port is reported before anything is
 * written to the data folder and `port: 0` is known when the engine is created with the server's URL
 * as baseUrl. Requests arriving before the engine is ready answer 503 with Retry-After.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { lowdbStorage, type RecoveryReport } from '../adapters/lowdb/index.ts';
import { memoryStorage } from '../adapters/memory/index.ts';
import { createApiHandler } from '../src/api/handler.ts';
import type { Handler, PlainResponse } from '../src/api/types.ts';
import { contentExtractor, nodeFetcher } from '../adapters/capture/index.ts';
import { createEngine, type Engine } from '../src/engine.ts';
import { MAX_REQUEST_BODY } from '../src/limits.ts';
import type { Storage } from '../src/ports.ts';
import { seedDemo, type DemoSeed } from './demo-seed.ts';
import { listen, type Listening } from '../transports/http/listener.ts';
import { mountMcp } from '../transports/mcp/index.ts';
import { attachSync, type SyncOptions, type SyncServer } from '../transports/sync/index.ts';
import { prepareDataDir, readDemoRecord, ServeError, writeDemoRecord } from './data-dir.ts';
import { withRequestLog, type RequestLogFormat } from './request-log.ts';
import { KW } from './usage.ts';

export { DEMO_RECORD_FILE, ServeError } from './data-dir.ts';

/** How `/documents/{documentRef}` pages answer: 401 with a note on using the API, or open to anyone. */
export type DocumentPagesMode = 'sign-in-required' | 'open';

/** Options of {@link serve}; every one has the default `kw serve` uses. */
export interface ServeOptions {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Port; 0 picks a free one. Default 8787. */
  port?: number;
  /** `lowdb` (default): files in `data`; `memory`: nothing survives the process. */
  storage?: 'lowdb' | 'memory';
  /** Data folder of the lowdb storage and of the demo-seed record; default `./.kw-data`. */
  data?: string;
  /** `demo` loads the demo fixtures once into the data folder; default `none`. */
  seed?: 'demo' | 'none';
  /** Operator key of `/operator/v1`; default: 32 random bytes, base64url. */
  operatorKey?: string;
  /**
   * Let library capture fetch private, loopback and link-local addresses (local development against
   * pages served on this machine). Off by default: capture refuses them, on every redirect too.
   */
  captureAllowPrivate?: boolean;
  /** Length of a credential's request-budget window in ms; default 24 hours. */
  budgetWindowMs?: number;
  /** Document pages for the person; default `sign-in-required` (docs/http-api.md). */
  documentPages?: DocumentPagesMode;
  /** One line per request to `write`; default none. */
  requestLog?: { write: (line: string) => void; format: RequestLogFormat };
  /**
   * Live co-editing at `/documents/{ref}/sync` and `/api/v1/documents/{ref}/sync` (always on): the
   * browser app's cookie-session hook and the version rhythm (docs/co-editing.md).
   */
  sync?: Pick<SyncOptions, 'authorizeUpgrade' | 'timing' | 'maxPeersPerRoom'>;
  /** Notices for the person running the server (a torn journal tail discarded on open); default none. */
  notice?: (line: string) => void;
}

/** A running dev server. */
export interface DevServer {
  /** `http://HOST:PORT`, also the engine's baseUrl (browserHref links point here). */
  readonly url: string;
  readonly port: number;
  readonly operatorKey: string;
  /** True when the operator key was generated (not passed in). */
  readonly operatorKeyGenerated: boolean;
  /** The demo token and document, when started with `seed: 'demo'`. */
  readonly demo: DemoSeed | null;
  /** True when the demo fixtures were loaded by this start (false: reused from the data folder). */
  readonly demoSeededNow: boolean;
  readonly storageKind: 'lowdb' | 'memory';
  /** Absolute data folder (lowdb only). */
  readonly dataDir: string | null;
  readonly engine: Engine;
  /** Stop accepting, let in-flight requests finish, then close the engine (flushes storage, releases the lock). */
  close(): Promise<void>;
}

/** A random operator key: 32 bytes as 43 base64url characters. */
export function generateOperatorKey(): string {
  return randomBytes(32).toString('base64url');
}

/** Answer 503 while the engine is being wired behind an already-bound socket. */
const starting: Handler = async (): Promise<PlainResponse> => {
  const requestId = `req_${randomBytes(14).toString('hex')}`;
  return {
    status: 503,
    headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1', 'x-request-id': requestId },
    body: JSON.stringify({
      error: { code: 'TEMPORARILY_UNAVAILABLE', message: 'The server is starting.', retryable: true, retryAfterMs: 1000 },
      meta: { apiVersion: '1', requestId },
    }),
  };
};

/** Bind the socket; a busy or forbidden address becomes a ServeError that says what to do. */
async function bind(handler: Handler, host: string, port: number): Promise<Listening> {
  try {
    return await listen(handler, { host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${host}:${port}`;
    if (code === 'EADDRINUSE') {
      throw new ServeError(`port ${port} on ${host} is already in use; stop what uses it, or let the system pick a free port: ${KW} serve --port 0`, { cause: error });
    }
    if (code === 'EACCES') throw new ServeError(`not allowed to listen on ${where} (ports below 1024 need privileges); try --port 0`, { cause: error });
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ServeError(`cannot listen on ${where}: ${host} is not an address of this machine (see --host)`, { cause: error });
    throw new ServeError(`cannot listen on ${where}: ${(error as Error).message}`, { cause: error });
  }
}

/** Seed once per data folder; reuse the recorded demo token while it still authenticates. */
async function demoFor(engine: Engine, dataDir: string | null): Promise<{ demo: DemoSeed; seededNow: boolean }> {
  const recorded = dataDir ? await readDemoRecord(dataDir) : null;
  if (recorded) {
    const valid = await engine.credentials.authenticate(recorded.token).then(
      () => true,
      () => false,
    );
    if (valid) return { demo: recorded, seededNow: false };
  }
  const demo = await seedDemo(engine);
  if (dataDir) await writeDemoRecord(dataDir, demo);
  return { demo, seededNow: true };
}

/**
 * Start the dev server.
 * @example
 * const server = await serve({ port: 0, storage: 'memory', seed: 'demo' });
 * console.log(server.url, server.demo?.token);
 * await server.close();
 * @throws ServeError for a busy port, an address that cannot be bound or an unusable data folder.
 */
export async function serve(options: ServeOptions = {}): Promise<DevServer> {
  const storageKind = options.storage ?? 'lowdb';
  const dataDir = storageKind === 'lowdb' ? resolve(options.data ?? '.kw-data') : null;
  const operatorKey = options.operatorKey ?? generateOperatorKey();

  let active: Handler = starting;
  const front: Handler = Object.assign((request: Parameters<Handler>[0]) => active(request), {
    bodyLimit: (method: string, url: string) => active.bodyLimit?.(method, url) ?? MAX_REQUEST_BODY,
  });
  const listener = await bind(front, options.host ?? '127.0.0.1', options.port ?? 8787);

  let storage: Storage | null = null;
  let engine: Engine | null = null;
  let mcp: ReturnType<typeof mountMcp> | null = null;
  let sync: SyncServer | null = null;
  let demo: DemoSeed | null = null;
  let demoSeededNow = false;
  try {
    if (dataDir) {
      await prepareDataDir(dataDir);
      const notice = options.notice;
      storage = await lowdbStorage({
        dir: dataDir,
        ...(notice
          ? {
              onRecovery: (r: RecoveryReport) =>
                notice(`kw: recovered ${dataDir}: discarded ${r.bytes} bytes (${r.batches} unacknowledged batch${r.batches === 1 ? '' : 'es'}) at the end of ${r.journal}: ${r.reason}`),
            }
          : {}),
      });
    } else {
      storage = memoryStorage();
    }
    engine = createEngine({
      storage,
      baseUrl: listener.url,
      fetcher: nodeFetcher(),
      extractor: contentExtractor(),
      captureAllowPrivate: options.captureAllowPrivate ?? false,
      ...(options.budgetWindowMs === undefined ? {} : { budgetWindowMs: options.budgetWindowMs }),
    });
    if (options.seed === 'demo') ({ demo, seededNow: demoSeededNow } = await demoFor(engine, dataDir));
    const api = createApiHandler({ engine, operatorKey, documentPages: options.documentPages ?? 'sign-in-required' });
    active = options.requestLog ? withRequestLog(api, options.requestLog.write, options.requestLog.format) : api;
    // The MCP server (streamable HTTP) at /mcp: every tool call goes through the same handler.
    mcp = mountMcp(listener.server, { handler: active });
    // Live co-editing (y-websocket) on the same port: people in an editor and agents on the API.
    sync = attachSync(listener.server, engine, { ...options.sync, prefix: ['', '/api/v1'] });
  } catch (error) {
    await sync?.close();
    await listener.close();
    if (engine) await engine.close();
    else await storage?.close();
    throw error;
  }

  const ready = engine;
  const mcpHttp = mcp;
  const syncServer = sync;
  let closing: Promise<void> | null = null;
  return {
    url: listener.url,
    port: listener.port,
    operatorKey,
    operatorKeyGenerated: options.operatorKey === undefined,
    demo,
    demoSeededNow,
    storageKind,
    dataDir,
    engine: ready,
    close() {
      closing ??= (async () => {
        try {
          await syncServer.close(); // commits editors' pending edits while the engine is open
          await mcpHttp?.close();
          await listener.close();
        } finally {
          await ready.close();
        }
      })();
      return closing;
    },
  };
}
