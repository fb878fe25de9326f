/**
 * Test kit of the PostgreSQL adapter: a fresh database `kw_test_<random>` on the server at
 * 127.0.0.1:5432 when one answers, otherwise PGlite in this process (which serializes everything:
 * it proves the SQL and the conformance suite, not races between processes).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { test } from 'uvu';
import type { SqlDriver, SqlResult, SqlSession } from './driver.ts';
import { openPostgresStorage, postgresStorage, type PostgresStorage } from './postgres-storage.ts';

/** The database the kit connects to first (to create and drop the fresh ones). */
export const ADMIN_URL = process.env.KW_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let answers: Promise<string | null> | null = null;

/** Null when the server at {@link ADMIN_URL} answers; else why not (printed by tests that skip). */
export function serverUnavailableReason(): Promise<string | null> {
  answers ??= (async () => {
    const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      return null;
    } catch (error) {
      return `no PostgreSQL server answers at ${ADMIN_URL.replace(/\/\/[^@]*@/, '//')}: ${(error as Error).message}`;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return answers;
}

/** Runs one statement on the admin database. */
export async function adminQuery(text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  client.on('error', () => {});
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end().catch(() => {});
  }
}

/** A fresh, empty database on the server: its URL, and `drop()` (which ends its connections). */
export interface FreshDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** Creates `kw_test_<random>` on the server at {@link ADMIN_URL}. */
export async function freshDatabase(): Promise<FreshDatabase> {
  const name = `kw_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * A {@link SqlDriver} over one PGlite instance: one connection, so sessions and statements take
 * turns. `end()` leaves the instance open (several storages of a test share it).
 */
export function pgliteDriver(db: PGlite): SqlDriver {
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = turn.then(fn);
    turn = run.catch(() => {});
    return run;
  };
  const direct: SqlSession = {
    query: async <R,>(text: string, params?: unknown[]) => ({ rows: (await db.query(text, params)).rows as R[] }) as SqlResult<R>,
  };
  const unlisten: (() => Promise<void>)[] = [];
  return {
    session: (fn) => exclusive(() => fn(direct)),
    query: (text, params) => exclusive(() => direct.query(text, params)),
    async listen(channel, onNotify) {
      unlisten.push(await db.listen(channel, onNotify));
    },
    async end() {
      for (const stop of unlisten.splice(0)) await stop().catch(() => {});
    },
  };
}

/** Where the kit's storages live: a fresh server database, or PGlite. */
export interface StorageHome {
  kind: 'server' | 'pglite';
  /** Opens a storage on the home's database. */
  open(options?: { pollMs?: number }): Promise<PostgresStorage>;
  /** Empties every table (between tests sharing the home). */
  empty(): Promise<void>;
  /** Drops the database (server) or closes PGlite. */
  dispose(): Promise<void>;
  /** The server database's URL; null on PGlite. */
  url: string | null;
}

const TABLES = 'kw_heads, kw_snapshots, kw_updates, kw_records, kw_streams, kw_uploads, kw_upload_chunks';

/** A home on the server when it answers (`reason` null), else on PGlite (`reason` says why). */
export async function storageHome(): Promise<StorageHome & { reason: string | null }> {
  const reason = await serverUnavailableReason();
  if (reason === null) {
    const fresh = await freshDatabase();
    return {
      kind: 'server',
      reason,
      url: fresh.url,
      open: (options = {}) => postgresStorage({ url: fresh.url, ...options }),
      async empty() {
        const client = new pg.Client({ connectionString: fresh.url });
        await client.connect();
        try {
          await client.query(`DO $$ BEGIN IF to_regclass('kw_heads') IS NOT NULL THEN TRUNCATE ${TABLES}; END IF; END $$`);
        } finally {
          await client.end();
        }
      },
      dispose: () => fresh.drop(),
    };
  }
  const db = new PGlite();
  return {
    kind: 'pglite',
    reason,
    url: null,
    open: (options = {}) => openPostgresStorage(pgliteDriver(db), options),
    async empty() {
      await db.exec(`DO $$ BEGIN IF to_regclass('kw_heads') IS NOT NULL THEN TRUNCATE ${TABLES}; END IF; END $$`);
    },
    dispose: () => db.close(),
  };
}

/**
 * Storages of `home` for the tests of a uvu suite: every storage a test opened (or handed to
 * `track`) is closed and the database emptied after it, and the home disposed of after the suite.
 */
export function suiteStorages(home: StorageHome, suite: typeof test): { open(options?: { pollMs?: number }): Promise<PostgresStorage>; track<S extends PostgresStorage>(storage: S): S } {
  const opened: PostgresStorage[] = [];
  suite.after.each(async () => {
    for (const s of opened.splice(0)) await s.close().catch(() => {});
    await home.empty();
  });
  suite.after(async () => {
    await home.dispose();
  });
  const track = <S extends PostgresStorage>(storage: S): S => {
    opened.push(storage);
    return storage;
  };
  return { open: async (options) => track(await home.open(options)), track };
}
