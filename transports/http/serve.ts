/**
 * The dev server behind `kw serve`: storage, engine, API handler and HTTP listener wired together,
 * with the optional demo seed.
 *
 * @remarks The demo seed is loaded once per data folder. Because a bearer token is shown only once
 * and only its hash is stored, the dev server keeps the demo token in plain text in
 * `<data>/demo-seed.json` (file mode 0600) so that a later start can show it again. That is a
 * convenience of the local dev server only: do not copy a seeded data folder anywhere that matters.
 * Delete the file to get a fresh demo credential on the next `--seed demo` start.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import type { Handler, PlainResponse } from '../../src/api/types.ts';
import { createEngine, type Engine } from '../../src/engine.ts';
import type { Storage } from '../../src/ports.ts';
import { seedDemo, type DemoSeed } from '../../fixtures/demo-seed.ts';
import { listen } from './listener.ts';

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
   * Let library capture fetch private, loopback and link-local addresses.
   * @remarks Accepted now; takes effect once the library capture fetcher is wired into the engine.
   */
  captureAllowPrivate?: boolean;
  /** Length of a credential's request-budget window in ms; default 24 hours. */
  budgetWindowMs?: number;
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

/** Name of the dev server's demo-seed record inside the data folder. */
export const DEMO_RECORD_FILE = 'demo-seed.json';

interface DemoRecord {
  v: 1;
  token: string;
  documentRef: string;
  seededAt: string;
}

/** A random operator key: 32 bytes as 43 base64url characters. */
export function generateOperatorKey(): string {
  return randomBytes(32).toString('base64url');
}

/** Answer 503 while the engine is being wired behind an already-bound socket. */
const starting: Handler = async (): Promise<PlainResponse> => ({
  status: 503,
  headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' },
  body: JSON.stringify({
    error: { code: 'TEMPORARILY_UNAVAILABLE', message: 'The server is starting.', retryable: true, retryAfterMs: 1000 },
    meta: { apiVersion: '1', requestId: `req_${randomBytes(14).toString('hex')}` },
  }),
});

async function readDemoRecord(dir: string): Promise<DemoRecord | null> {
  try {
    const value = JSON.parse(await readFile(join(dir, DEMO_RECORD_FILE), 'utf8')) as Partial<DemoRecord>;
    return value.v === 1 && typeof value.token === 'string' && typeof value.documentRef === 'string' ? (value as DemoRecord) : null;
  } catch {
    return null;
  }
}

/** Seed once per data folder; reuse the recorded demo token while it still authenticates. */
async function demoFor(engine: Engine, dataDir: string | null): Promise<{ demo: DemoSeed; seededNow: boolean }> {
  if (dataDir) {
    const record = await readDemoRecord(dataDir);
    if (record) {
      const valid = await engine.credentials.authenticate(record.token).then(
        () => true,
        () => false,
      );
      if (valid) return { demo: { token: record.token, documentRef: record.documentRef }, seededNow: false };
    }
  }
  const demo = await seedDemo(engine);
  if (dataDir) {
    const record: DemoRecord = { v: 1, ...demo, seededAt: new Date().toISOString() };
    await writeFile(join(dataDir, DEMO_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  }
  return { demo, seededNow: true };
}

/**
 * Start the dev server.
 * @example
 * const server = await serve({ port: 0, storage: 'memory', seed: 'demo' });
 * console.log(server.url, server.demo?.token);
 * await server.close();
 * @remarks The socket is bound first (so `port: 0` is known), then the engine is created with the
 * server's URL as baseUrl; requests arriving in between answer 503 with Retry-After.
 */
export async function serve(options: ServeOptions = {}): Promise<DevServer> {
  const storageKind = options.storage ?? 'lowdb';
  const dataDir = storageKind === 'lowdb' ? resolve(options.data ?? '.kw-data') : null;
  const operatorKey = options.operatorKey ?? generateOperatorKey();

  let storage: Storage;
  if (dataDir) {
    await mkdir(dataDir, { recursive: true });
    storage = await lowdbStorage({ dir: dataDir });
  } else {
    storage = memoryStorage();
  }

  let active: Handler = starting;
  const handler: Handler = (request) => active(request);
  let listener: Awaited<ReturnType<typeof listen>>;
  try {
    listener = await listen(handler, { host: options.host ?? '127.0.0.1', port: options.port ?? 8787 });
  } catch (error) {
    await storage.close();
    throw error;
  }

  const engine = createEngine({
    storage,
    baseUrl: listener.url,
    ...(options.budgetWindowMs === undefined ? {} : { budgetWindowMs: options.budgetWindowMs }),
  });
  let demo: DemoSeed | null = null;
  let demoSeededNow = false;
  try {
    if (options.seed === 'demo') ({ demo, seededNow: demoSeededNow } = await demoFor(engine, dataDir));
    active = createApiHandler({ engine, operatorKey });
  } catch (error) {
    await listener.close();
    await engine.close();
    throw error;
  }

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
    engine,
    close() {
      closing ??= (async () => {
        try {
          await listener.close();
        } finally {
          await engine.close();
        }
      })();
      return closing;
    },
  };
}
