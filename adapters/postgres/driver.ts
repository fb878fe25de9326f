/**
 * The SQL connection the PostgreSQL adapter runs on: a `pg` pool plus one dedicated LISTEN
 * connection, behind a small interface (the tests run the same adapter on PGlite).
 * @module
 */
import pg from 'pg';
import { StorageUnavailableError } from '../../src/ports.ts';

/** The rows of one statement. */
export interface SqlResult<R = Record<string, unknown>> {
  rows: R[];
}

/** One connection, held for a transaction. */
export interface SqlSession {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<SqlResult<R>>;
  /**
   * The connection is not fit for reuse (it may hold a session lock it could not release): it is
   * ended when the session settles instead of going back to the pool. Absent where there is no pool.
   */
  discard?(reason: Error): void;
}

/** What the adapter needs of a database. */
export interface SqlDriver {
  /** Runs `fn` on one connection of the pool, held until it settles. */
  session<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /** One statement on any connection of the pool. */
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<SqlResult<R>>;
  /**
   * LISTENs on `channel` on a dedicated connection: `onNotify` gets each payload; after the
   * connection was lost and is back (LISTENing again), `onResync` is called, since notifications
   * sent meanwhile are gone. Resolves once listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, onResync: () => void): Promise<void>;
  /** Closes the pool and the LISTEN connection. */
  end(): Promise<void>;
  /** Connections the pool opened so far (not the LISTEN connection); absent where there is no pool. */
  connectionsOpened?(): number;
}

/**
 * Every statement is bounded, so that a lock held on a service table (say, a long ACCESS EXCLUSIVE)
 * makes requests answer 503 quickly instead of waiting for it. Inside a transaction the bounds are
 * the server's, set with `SET LOCAL` in the round trip of its BEGIN (never per session: the service
 * may run behind PgBouncer in transaction mode): `lock_timeout` and `statement_timeout`. A statement
 * outside a transaction is bounded by the client (`query_timeout`): past it its connection is
 * dropped and the answer is 503 — a single-statement write may then still apply once the lock is
 * released, which its idempotency key makes safe to retry. A statement past its bound is answered
 * 503 at once (StorageUnavailableError), not tried again.
 */
export const STATEMENT_BOUNDS = { lockTimeoutMs: 2_000, statementTimeoutMs: 10_000, outsideTransactionMs: 3_000 } as const;

const BOUNDED_BEGIN = `BEGIN; SET LOCAL lock_timeout = ${STATEMENT_BOUNDS.lockTimeoutMs}; SET LOCAL statement_timeout = ${STATEMENT_BOUNDS.statementTimeoutMs}`;

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED']);
/** SQLSTATEs of a server that went away or does not take connections now. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '55000', '3D000']);
const CONNECTION_MESSAGE = /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|not queryable|terminating connection|the database system is (starting up|shutting down)|is not currently accepting connections/i;

/** True when `error` says the database could not be reached or dropped the connection. */
export function isConnectionFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e.code === 'string' && (CONNECTION_CODES.has(e.code) || UNAVAILABLE_STATES.has(e.code) || e.code.startsWith('08'))) return true;
  return typeof e.message === 'string' && CONNECTION_MESSAGE.test(e.message);
}

/**
 * True when a statement ran past its bound ({@link STATEMENT_BOUNDS}): 55P03 lock_not_available,
 * 57014 query_canceled (statement_timeout), or the client's own read timeout.
 */
function pastBound(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return e?.code === '55P03' || e?.code === '57014' || e?.message === 'Query read timeout';
}

/** `error` as a {@link StorageUnavailableError} (with the driver's error as cause). */
export function unavailable(error: unknown): StorageUnavailableError {
  const message = error instanceof Error ? error.message : String(error);
  return new StorageUnavailableError(`PostgreSQL is unavailable: ${message}`, { retryAfterMs: 1000, cause: error });
}

/** Options of the `pg` pool; see {@link pgDriver}. */
export type PoolOptions = pg.PoolConfig;

/**
 * The driver over `pg`: a pool for statements and transactions, and one client for LISTEN that
 * reconnects by itself (backing off up to 2 s) until {@link SqlDriver.end}.
 * @param listenUrl where the LISTEN client connects (a direct connection when `options` name a
 * pooler in transaction mode, which does not deliver notifications); default: where the pool does.
 * @remarks Nothing here keeps state in a pooled connection's session: statements are unnamed (no
 * session prepared statements), settings are transaction-local, locks transaction-scoped; so the
 * pool may point at PgBouncer in `pool_mode = transaction`.
 */
export function pgDriver(options: PoolOptions, listenUrl?: string): SqlDriver {
  const pool = new pg.Pool({ max: 10, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, ...options });
  // An idle client losing its connection emits on the pool; without a handler the process would crash.
  pool.on('error', () => {});
  let opened = 0;
  pool.on('connect', () => opened++);
  let ended = false;
  /** The LISTEN clients, one per {@link SqlDriver.listen} call. */
  const listeners = new Set<pg.Client>();
  const retries = new Set<ReturnType<typeof setTimeout>>();

  async function connectListener(channel: string, onNotify: (payload: string) => void, onResync: () => void, again: boolean): Promise<void> {
    const client = new pg.Client({ ...options, ...(listenUrl === undefined ? {} : { connectionString: listenUrl }), connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5_000 });
    let lost = false;
    const reconnect = (delay: number) => {
      if (ended || lost) return;
      lost = true;
      listeners.delete(client);
      client.end().catch(() => {});
      const retry = setTimeout(() => {
        retries.delete(retry);
        connectListener(channel, onNotify, onResync, true).catch(() => reconnect(Math.min(delay * 2, 2_000)));
      }, delay);
      retries.add(retry);
      retry.unref?.();
    };
    client.on('error', () => reconnect(100));
    client.on('end', () => reconnect(100));
    client.on('notification', (message) => {
      if (message.channel === channel && message.payload !== undefined) onNotify(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      lost = true;
      client.end().catch(() => {});
      if (!again) throw error;
      const retry = setTimeout(() => {
        retries.delete(retry);
        connectListener(channel, onNotify, onResync, true).catch(() => {});
      }, 500);
      retries.add(retry);
      retry.unref?.();
      return;
    }
    if (ended) {
      await client.end().catch(() => {});
      return;
    }
    listeners.add(client);
    if (again) onResync();
  }

  /**
   * Runs `fn` on one pooled connection. Afterwards the connection goes back to the pool unless it
   * failed or is still inside a transaction (then it is ended). A statement that the server refused
   * (a conflict's KW409, a unique violation) leaves its connection idle and fit for reuse: `pg`'s
   * own `pool.query` ends the connection after *any* error, which cost every conflict a new
   * connection — a backend started, authenticated and warmed up again (bench/postgres.md).
   */
  async function session<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let broken: unknown = undefined;
    // A checked-out client that loses its connection between statements emits 'error'; without a
    // listener that would crash the process. The next statement then fails and reports it.
    const onError = (error: unknown) => (broken = error);
    client.on('error', onError);
    const discard = (reason: Error) => {
      broken ??= reason;
    };
    const run = async (text: string, params?: unknown[]): Promise<never> => {
      if (text === 'BEGIN') {
        await client.query(BOUNDED_BEGIN);
        return { rows: [] } as never;
      }
      if (client.getTransactionStatus() === 'I') return (await client.query({ text, values: params, query_timeout: STATEMENT_BOUNDS.outsideTransactionMs } as pg.QueryConfig)) as never;
      return (await client.query(text, params)) as never;
    };
    const query = (text: string, params?: unknown[]): Promise<never> =>
      run(text, params).catch((error: unknown) => {
        if (!pastBound(error)) throw error;
        // Past its bound (a lock held elsewhere): answered 503 at once, not retried; the connection is not reused.
        broken ??= error;
        throw unavailable(error);
      });
    try {
      return await fn({ query, discard });
    } catch (error) {
      if (isConnectionFailure(error)) broken = error;
      throw error;
    } finally {
      client.off('error', onError);
      // 'I': idle, outside a transaction. A connection left in one ('T', or 'E' failed) is not reused.
      if (broken === undefined && client.getTransactionStatus() !== 'I') broken = new Error('connection left inside a transaction');
      client.release(broken === undefined ? undefined : (broken as Error));
    }
  }

  return {
    session,
    query: (text, params) => session((client) => client.query(text, params) as never),
    listen: (channel, onNotify, onResync) => connectListener(channel, onNotify, onResync, false),
    async end() {
      ended = true;
      for (const r of retries) clearTimeout(r);
      retries.clear();
      const clients = [...listeners];
      listeners.clear();
      await Promise.all(clients.map((c) => c.end().catch(() => {})));
      await pool.end();
    },
    connectionsOpened: () => opened,
  };
}
