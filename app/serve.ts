/**
 * The dev server behind `kw serve`: the composition of storage, engine, API handler, request log and
 * the node:http listener, with the optional demo seed.
 * @remarks Order of start: the socket is bound first, so a busy port is reported before anything is
 * written to the data folder and `port: 0` is known when the engine is created with the server's URL
 * as baseUrl. Requests arriving before the engine is ready answer 503 with Retry-After.
 * @module
 */
import { DEFAULT_LOCAL_ACCOUNT } from '../src/actor.ts';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { fileUploadSpool, lowdbStorage, type RecoveryReport } from '../adapters/lowdb/index.ts';
import { memoryStorage } from '../adapters/memory/index.ts';
import { postgresStorage, postgresUploadSpool, type PostgresStorage } from '../adapters/postgres/index.ts';
import { createApiHandler } from '../src/api/handler.ts';
import { createBrowserApp, type BrowserApp } from '../transports/web/app.ts';
import type { Handler, PlainResponse } from '../src/api/types.ts';
import { contentExtractor, nodeFetcher } from '../adapters/capture/index.ts';
import { createEngine, type Engine } from '../src/engine.ts';
import { fixtureRunner } from '../src/jobs/fixture-runner.ts';
import { MAX_REQUEST_BODY } from '../src/limits.ts';
import { isStorageUnavailable, type Storage } from '../src/ports.ts';
import { DEMO_ACCOUNT, seedDemo, type DemoSeed } from './demo-seed.ts';
import { listen, type Listening } from '../transports/http/listener.ts';
import { mountMcp } from '../transports/mcp/index.ts';
import { editorAssets, editorAvailable } from './editor-bundle.ts';
import { attachSync, type SyncOptions, type SyncServer } from '../transports/sync/index.ts';
import { keepOperatorKey, prepareDataDir, readDemoRecord, readKeptOperatorKey, removeServerRecord, ServeError, writeDemoRecord, writeServerRecord } from './data-dir.ts';
import { withRequestLog, type RequestLogFormat } from './request-log.ts';
import { KW } from './usage.ts';

export { DEMO_RECORD_FILE, OPERATOR_KEY_FILE, SERVER_RECORD_FILE, ServeError } from './data-dir.ts';

/**
 * The dev server's request-budget window: 1 minute, so that a benchmark or a looping agent cannot lock
 * a token out for a day (decisions.md). An engine created in code keeps the 24-hour default.
 */
export const DEV_BUDGET_WINDOW_MS = 60_000;

/** How `/documents/{documentRef}` pages answer: 401 with a note on using the API, or open to anyone. */
export type DocumentPagesMode = 'sign-in-required' | 'open';

/** Options of {@link serve}; every one has the default `kw serve` uses. */
export interface ServeOptions {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Port; 0 picks a free one. Default 8787. */
  port?: number;
  /**
   * `lowdb` (default): files in `data`; `memory`: nothing survives the process; `postgres`: the
   * database at `databaseUrl`, shared by every process started on it (docs/postgres.md).
   */
  storage?: 'lowdb' | 'memory' | 'postgres';
  /** The PostgreSQL connection URL of `storage: 'postgres'`. */
  databaseUrl?: string;
  /**
   * A direct connection to the same database used only to LISTEN for other processes' changes, when
   * `databaseUrl` points at a pooler in transaction mode; default: LISTEN over `databaseUrl`.
   */
  databaseListenUrl?: string;
  /** Data folder of the lowdb storage and of the demo-seed record; default `./.kw-data`. */
  data?: string;
  /** `demo` loads the demo fixtures once into the data folder (postgres: once per database); default `none`. */
  seed?: 'demo' | 'none';
  /**
   * Operator key of `/operator/v1`; default: 32 random bytes, base64url — with lowdb storage kept in
   * the data folder (`operator-key`, mode 0600) and reused at the next start on that folder.
   */
  operatorKey?: string;
  /**
   * Let library capture fetch private, loopback and link-local addresses (local development against
   * pages served on this machine). Off by default: capture refuses them, on every redirect too.
   */
  captureAllowPrivate?: boolean;
  /** Length of a credential's request-budget window in ms; default {@link DEV_BUDGET_WINDOW_MS} (1 minute). */
  budgetWindowMs?: number;
  /**
   * Open a lowdb data folder even when its journal lost acknowledged writes, keeping what is intact
   * (`kw serve --accept-data-loss`); default false: such a folder is refused with what was lost.
   */
  acceptDataLoss?: boolean;
  /**
   * Host header values `/mcp` accepts (`host` or `host:port`), replacing the default (the loopback
   * names and the bound address, on the server's port): DNS-rebinding protection.
   */
  mcpAllowedHosts?: string[];
  /** Document pages for the person; default `sign-in-required` (docs/http-api.md). */
  documentPages?: DocumentPagesMode;
  /** One line per request to `write`; default none. */
  requestLog?: { write: (line: string) => void; format: RequestLogFormat };
  /**
   * The research runner: `none` (default; fresh research-job starts answer 410 FEATURE_RETIRED) or
   * `fixture`, the scripted runner of src/jobs/fixture-runner.ts (for building agents against).
   */
  researchRunner?: 'none' | 'fixture';
  /** How long each phase of the fixture runner takes, in ms; default 200. */
  fixturePhaseMs?: number;
  /**
   * Live co-editing at `/documents/{ref}/sync` and `/api/v1/documents/{ref}/sync` (always on): the
   * browser app's cookie-session hook and the version rhythm (docs/co-editing.md).
   */
  sync?: Pick<SyncOptions, 'authorizeUpgrade' | 'timing' | 'maxPeersPerRoom'>;
  /**
   * Structured log of the API handler: one object per unexpected error or storage outage (the
   * request log already has a line per request). Default: JSON lines on stderr.
   */
  log?: (line: object) => void;
  /** Notices for the person running the server (a torn journal tail discarded on open); default none. */
  notice?: (line: string) => void;
  /** Install the person's browser app (sign-in, console, agent access, reviews); default true. */
  browserApp?: boolean;
}

/** What opening the data folder discarded, in words for the person running the server. */
export function recoveryNotice(dataDir: string, r: RecoveryReport): string {
  if (r.dataLoss) {
    return (
      `kw: DATA LOSS ACCEPTED in ${dataDir} (--accept-data-loss): batches ${r.recoveredSeq + 1} to ${r.acknowledgedSeq ?? '?'} had been acknowledged ` +
      `and are gone; ${r.journal} was cut at byte ${r.offset} (${r.reason}). The server starts with the batches up to ${r.recoveredSeq}.`
    );
  }
  const vouched = r.acknowledgedSeq === null ? 'this folder has no acknowledgment record to check it against' : `every acknowledged batch (up to ${r.acknowledgedSeq}) is intact`;
  return (
    `kw: recovered ${dataDir}: discarded the torn end of ${r.journal} (${r.bytes} bytes from byte ${r.offset}, ${r.batches} frame${r.batches === 1 ? '' : 's'}: ${r.reason}), ` +
    `a write a crash interrupted before it was acknowledged; ${vouched}.`
  );
}

/** A running dev server. */
export interface DevServer {
  /** `http://HOST:PORT`, also the engine's baseUrl (browserHref links point here). */
  readonly url: string;
  readonly port: number;
  readonly operatorKey: string;
  /** True when the operator key was generated (not passed in), at this start or an earlier one. */
  readonly operatorKeyGenerated: boolean;
  /** True when the generated key was kept in the data folder by an earlier start and reused. */
  readonly operatorKeyReused: boolean;
  /** The request-budget window of every credential, in ms. */
  readonly budgetWindowMs: number;
  /**
   * Where the demo token stands in its budget window at start (null without the demo seed): when
   * `remaining` is 0 the banner says so and how to make a fresh token.
   */
  readonly demoBudget: { limit: number; remaining: number; resetsAt: string } | null;
  /** The demo token and document, when started with `seed: 'demo'`. */
  readonly demo: DemoSeed | null;
  /** True when the demo fixtures were loaded by this start (false: reused from the data folder). */
  readonly demoSeededNow: boolean;
  readonly storageKind: 'lowdb' | 'memory' | 'postgres';
  /** Absolute data folder (lowdb only). */
  readonly dataDir: string | null;
  /**
   * The local person's account: `demo` when the data were seeded with the demo fixtures, else
   * `owner`. Credentials made through the operator API without an account belong to it.
   */
  readonly localAccount: string;
  /** The research runner installed (`none`: fresh starts answer 410). */
  readonly researchRunner: 'none' | 'fixture';
  readonly engine: Engine;
  /** The browser app, when installed (see docs/browser-app.md). */
  readonly browserApp: BrowserApp | null;
  /** A one-time sign-in link for the local person, made at start (null without the browser app). */
  readonly signInUrl: string | null;
  /** Live co-editing on the server's port: its open rooms, and `flush()` of people's pending edits. */
  readonly sync: Pick<SyncServer, 'rooms' | 'flush'>;
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

/** Where the demo seed of a database is recorded (the database holds everything of the service). */
const DEMO_COLLECTION = 'dev-server';
const DEMO_KEY = 'demo-seed';

/**
 * Seed once per database: under the database-wide lock `demo-seed`, so that of several processes
 * starting at once one seeds and the others reuse its record (and print the same token).
 */
async function sharedDemoFor(engine: Engine, storage: PostgresStorage): Promise<{ demo: DemoSeed; seededNow: boolean }> {
  return storage.exclusive('demo-seed', async () => {
    const recorded = await storage.getRecord<DemoSeed>(DEMO_COLLECTION, DEMO_KEY);
    if (recorded && (await tokenValid(engine, recorded.value.token))) return { demo: recorded.value, seededNow: false };
    const demo = await seedDemo(engine);
    await storage.commit([{ kind: 'record.put', collection: DEMO_COLLECTION, key: DEMO_KEY, value: demo }]);
    return { demo, seededNow: true };
  });
}

function tokenValid(engine: Engine, token: string): Promise<boolean> {
  return engine.credentials.authenticate(token).then(
    () => true,
    () => false,
  );
}

/** Seed once per data folder; reuse the recorded demo token while it still authenticates. */
async function demoFor(engine: Engine, dataDir: string | null): Promise<{ demo: DemoSeed; seededNow: boolean }> {
  const recorded = dataDir ? await readDemoRecord(dataDir) : null;
  if (recorded) {
    if (await tokenValid(engine, recorded.token)) return { demo: recorded, seededNow: false };
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
  let operatorKey = options.operatorKey ?? '';
  let operatorKeyReused = false;
  const budgetWindowMs = options.budgetWindowMs ?? DEV_BUDGET_WINDOW_MS;

  let active: Handler = starting;
  const front: Handler = Object.assign((request: Parameters<Handler>[0]) => active(request), {
    bodyLimit: (method: string, url: string) => active.bodyLimit?.(method, url) ?? MAX_REQUEST_BODY,
    streamsBody: (method: string, url: string) => active.streamsBody?.(method, url) ?? false,
  });
  const listener = await bind(front, options.host ?? '127.0.0.1', options.port ?? 8787);

  let storage: Storage | null = null;
  let pg: PostgresStorage | null = null;
  let engine: Engine | null = null;
  let mcp: ReturnType<typeof mountMcp> | null = null;
  let sync: SyncServer | null = null;
  let demo: DemoSeed | null = null;
  let demoSeededNow = false;
  let browserApp: BrowserApp | null = null;
  let signInUrl: string | null = null;
  let localAccount = DEFAULT_LOCAL_ACCOUNT;
  let demoBudget: DevServer['demoBudget'] = null;
  try {
    if (dataDir) {
      await prepareDataDir(dataDir);
      const notice = options.notice;
      storage = await lowdbStorage({
        dir: dataDir,
        ...(options.acceptDataLoss ? { acceptDataLoss: true } : {}),
        ...(notice ? { onRecovery: (r: RecoveryReport) => notice(recoveryNotice(dataDir, r)) } : {}),
      });
      // The folder is ours now (its lock is held): reuse the key an earlier start generated, or keep a new one.
      if (options.operatorKey === undefined) {
        const kept = await readKeptOperatorKey(dataDir);
        operatorKeyReused = kept !== null;
        operatorKey = kept ?? generateOperatorKey();
        if (kept === null) await keepOperatorKey(dataDir, operatorKey);
      }
    } else if (storageKind === 'postgres') {
      if (!options.databaseUrl) throw new ServeError('--storage postgres needs --database-url URL (or the environment variable DATABASE_URL)');
      try {
        pg = await postgresStorage({ url: options.databaseUrl, ...(options.databaseListenUrl ? { listenUrl: options.databaseListenUrl } : {}) });
      } catch (error) {
        if (!isStorageUnavailable(error)) throw error;
        throw new ServeError(`cannot reach the PostgreSQL database at ${redactUrl(options.databaseUrl)}: ${(error as Error).message}`, { cause: error });
      }
      storage = pg;
    } else {
      storage = memoryStorage();
    }
    if (operatorKey === '') operatorKey = generateOperatorKey();
    const researchRunner = options.researchRunner ?? 'none';
    let wired: Engine | null = null;
    const runner =
      researchRunner === 'fixture'
        ? fixtureRunner({ reviews: () => wired!.operator, ...(options.fixturePhaseMs === undefined ? {} : { phaseMs: options.fixturePhaseMs }) })
        : undefined;
    engine = wired = createEngine({
      storage,
      ...(runner ? { runner } : {}),
      baseUrl: listener.url,
      fetcher: nodeFetcher(),
      extractor: contentExtractor(),
      captureAllowPrivate: options.captureAllowPrivate ?? false,
      // Upload bytes wait in files beside the lowdb data, in the shared database with postgres (a PUT
      // on one process, its finish on another), on the heap with memory storage (bounded by the caps).
      ...(dataDir
        ? { library: { uploadSpool: fileUploadSpool({ dir: join(dataDir, 'uploads') }) } }
        : pg
          ? { library: { uploadSpool: postgresUploadSpool(pg) } }
          : {}),
      budgetWindowMs,
    });
    if (options.seed === 'demo') {
      ({ demo, seededNow: demoSeededNow } = pg ? await sharedDemoFor(engine, pg) : await demoFor(engine, dataDir));
      const status = engine.credentials.budget(await engine.credentials.authenticate(demo.token));
      demoBudget = { limit: status.limit, remaining: status.remaining, resetsAt: new Date(status.windowEnd).toISOString() };
    }
    localAccount = demo !== null || (dataDir !== null && (await readDemoRecord(dataDir)) !== null) ? DEMO_ACCOUNT : DEFAULT_LOCAL_ACCOUNT;
    const documentPages = options.documentPages ?? 'sign-in-required';
    const app = options.browserApp === false ? null : createBrowserApp(engine, { localAccount, openDocumentPages: documentPages === 'open', ...(editorAvailable() ? { editorAssets } : {}) });
    const api = createApiHandler({ engine, operatorKey, localAccount, documentPages, ...(options.log ? { log: options.log } : {}), ...(app ? { onResponse: (event) => app.recordRequest(event) } : {}) });
    const pages = app ? app.mount(api) : api;
    if (app) signInUrl = (await app.createSignInLink()).url;
    browserApp = app;
    active = options.requestLog ? withRequestLog(pages, options.requestLog.write, options.requestLog.format) : pages;
    // The MCP server (streamable HTTP) at /mcp: every tool call goes through the same handler.
    mcp = mountMcp(listener.server, { handler: active, ...(options.mcpAllowedHosts ? { allowedHosts: options.mcpAllowedHosts } : {}) });
    // Live co-editing (y-websocket) on the same port: people in an editor and agents on the API.
    // A signed-in person (the browser app's session cookie) edits; the caller's own hook comes first.
    const hook = options.sync?.authorizeUpgrade;
    const authorizeUpgrade: SyncOptions['authorizeUpgrade'] = app
      ? async (req, ref) => (hook ? await hook(req, ref) : null) ?? app.authorizeUpgrade(req, ref)
      : hook;
    sync = attachSync(listener.server, engine, { ...options.sync, ...(authorizeUpgrade ? { authorizeUpgrade } : {}), prefix: ['', '/api/v1'] });
    // For `kw sign-in`: where this server listens, beside the folder's lock that names its process.
    if (dataDir) await writeServerRecord(dataDir, listener.url);
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
    operatorKeyReused,
    budgetWindowMs,
    demoBudget,
    demo,
    demoSeededNow,
    storageKind,
    dataDir,
    localAccount,
    researchRunner: options.researchRunner ?? 'none',
    engine: ready,
    browserApp,
    signInUrl,
    sync: syncServer,
    close() {
      closing ??= (async () => {
        try {
          await syncServer.close(); // commits editors' pending edits while the engine is open
          await mcpHttp?.close();
          await listener.close();
          if (dataDir) await removeServerRecord(dataDir);
        } finally {
          await ready.close();
        }
      })();
      return closing;
    },
  };
}

/** A connection URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an unparsable URL)';
  }
}
