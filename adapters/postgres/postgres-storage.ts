/**
 * The storage adapter for several processes on one PostgreSQL database.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  documentTopic,
  StorageConflictError,
  type BatchOp,
  type CountTaken,
  type DocumentHead,
  type HeadAndUpdates,
  type HeadCursor,
  type RecordPage,
  type Storage,
  type StoredDocument,
  type StoredRecord,
  type StoredUpdate,
  type StreamEntry,
} from '../../src/ports.ts';
import { ChangeNotifier, topicsOf } from '../core/change-notifier.ts';
import { decodePagePosition, encodePagePosition } from '../core/page-position.ts';
import { prepareBatch, putJson, type PreparedOp } from '../core/prepared-op.ts';
import { checkAfterSeq, checkLimit } from '../core/read-arguments.ts';
import { isConnectionFailure, pgDriver, unavailable, type PoolOptions, type SqlDriver, type SqlResult, type SqlSession } from './driver.ts';
import { CHANGE_CHANNEL, migrate } from './schema.ts';
import { postgresEphemeral } from './ephemeral.ts';
import { escapeText as esc, unescapeText as unesc } from './text-codec.ts';

/** Options of {@link postgresStorage}. */
export interface PostgresStorageOptions {
  /** A connection URL, `postgres://user@host:port/database`; or give `pool`. */
  url?: string;
  /**
   * A direct connection URL used only to LISTEN for other processes' commits, for when `url` points
   * at a pooler in transaction mode (PgBouncer `pool_mode = transaction`), which does not deliver
   * notifications. Default: LISTEN where `url` (or `pool`) connects.
   */
  listenUrl?: string;
  /** Options of the `pg` pool (host, user, database, max connections …); `url` wins for the connection. */
  pool?: PoolOptions;
  /**
   * How often the fallback poll looks for commits whose notification never arrived (ms); default
   * 5000. Notifications are the fast path; the poll only covers a silently dead LISTEN connection.
   */
  pollMs?: number;
}

/** A {@link Storage} on PostgreSQL, with what the dev server needs of a shared database. */
export type PostgresStorage = Storage & {
  readonly sharedByProcesses: true;
  /** The schema versions this open applied (empty when the database was up to date). */
  readonly migrated: readonly number[];
  /**
   * Runs `fn` while holding the database-wide lock `name` (a transaction-scoped advisory lock, held
   * by a transaction left open on one connection until `fn` settles, so it works through a pooler in
   * transaction mode and ends with the connection): a process that calls it with the same name
   * meanwhile waits. Used to load the demo seed once per database.
   */
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Counters for tests and benchmarks. */
  stats(): PostgresStats;
  /**
   * One statement on the storage's own pool, for tables of the same database beside the port's
   * (the upload spool): rejects once the storage is closed; a lost connection rejects as a
   * {@link StorageUnavailableError}. Not retried: the caller knows whether a statement is safe to repeat.
   */
  readonly sql: SqlQuery;
};

/** Runs one statement; see {@link PostgresStorage.sql}. */
export interface SqlQuery {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<SqlResult<R>>;
}

/** What a {@link PostgresStorage} counted since it opened. */
export interface PostgresStats {
  commits: number;
  /** Commits rejected with StorageConflictError (a precondition was false: another version, a taken key …). */
  conflicts: number;
  /** Transactions run again after a serialization failure or deadlock. */
  retries: number;
  /**
   * Connections the pool opened since the storage opened (not the LISTEN connection). Stays at most
   * the pool's size unless connections fail or sit idle past the pool's idle timeout: a conflict
   * does not cost one.
   */
  connectionsOpened: number;
  /** Notifications received (of every process's commits, this one's included). */
  notificationsReceived: number;
  /** Times every listener was called because notifications may have been missed. */
  resyncs: number;
}

/** SQLSTATEs after which a transaction is simply run again. */
const RETRY_STATES = new Set(['40001', '40P01']);
const UNIQUE_VIOLATION = '23505';
/** NOTIFY payloads must stay under 8000 bytes; a longer topic travels as its hash. */
const MAX_TOPIC_BYTES = 7_000;

const HEAD_COLUMNS = 'document_ref, space_ref, account_id, title, version, snapshot_version, generation, content_sha256, block_count, created_at, updated_at';

type Row = Record<string, unknown>;

function headOf(row: Row): DocumentHead {
  return {
    documentRef: unesc(row.document_ref as string),
    spaceRef: unesc(row.space_ref as string),
    accountId: unesc(row.account_id as string),
    title: unesc(row.title as string),
    version: Number(row.version),
    snapshotVersion: Number(row.snapshot_version),
    generation: Number(row.generation),
    contentSha256: unesc(row.content_sha256 as string),
    blockCount: Number(row.block_count),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Driver bytes (a Buffer from `pg`, a Uint8Array from PGlite) as a plain Uint8Array of their own. */
function bytesOf(value: unknown): Uint8Array {
  const b = value as Uint8Array;
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function updatesOf(versions: unknown, updates: unknown): StoredUpdate[] {
  const vs = (versions ?? []) as unknown[];
  const us = (updates ?? []) as unknown[];
  return vs.map((v, i) => ({ version: Number(v), update: bytesOf(us[i]) }));
}

/** The NOTIFY form of a topic: escaped (no U+0000), or `#` and its SHA-256 when too long. */
function wireTopic(topic: string): string {
  const escaped = esc(topic);
  if (Buffer.byteLength(escaped) <= MAX_TOPIC_BYTES) return escaped;
  return `#${createHash('sha256').update(topic).digest('hex')}`;
}

/**
 * The notification of a document append that carries the append (`@` and JSON: the head's fields,
 * then the update in base64), or null when it would not fit in one notification.
 */
function appendWire(head: DocumentHead, update: Uint8Array): string | null {
  if (update.byteLength > MAX_TOPIC_BYTES) return null;
  const wire = `@${JSON.stringify([head.documentRef, head.spaceRef, head.accountId, head.title, head.version, head.snapshotVersion, head.generation, head.contentSha256, head.blockCount, head.createdAt, head.updatedAt, Buffer.from(update.buffer, update.byteOffset, update.byteLength).toString('base64')])}`;
  return Buffer.byteLength(wire) <= MAX_TOPIC_BYTES ? wire : null;
}

/** The head and update of an {@link appendWire} notification (null: not one). */
function appendOf(wire: string): { head: DocumentHead; update: Uint8Array } | null {
  let f: unknown;
  try {
    f = JSON.parse(wire.slice(1));
  } catch {
    return null;
  }
  if (!Array.isArray(f) || f.length !== 12) return null;
  const [documentRef, spaceRef, accountId, title, version, snapshotVersion, generation, contentSha256, blockCount, createdAt, updatedAt, update] = f as [string, string, string, string, number, number, number, string, number, number, number, string];
  return {
    head: { documentRef, spaceRef, accountId, title, version, snapshotVersion, generation, contentSha256, blockCount, createdAt, updatedAt },
    update: new Uint8Array(Buffer.from(update, 'base64')),
  };
}

function conflict(index: number, op: PreparedOp, reason: string): StorageConflictError {
  return new StorageConflictError(`batch op ${index} (${op.kind}): ${reason}`, index);
}

/** Adds a parameter and returns its placeholder. */
type Param = (value: unknown) => string;

/**
 * One op as named data-modifying CTEs (suffixed with its index): run alone in a transaction, or
 * together with the batch's other ops in one statement. `check` names the CTE whose emptiness means
 * the op's precondition is false (null: it has none). A type error of the op is a conflict here.
 */
interface Fragment {
  ctes: string[];
  check: string | null;
}

function fragmentOf(op: PreparedOp, i: number, p: Param): Fragment | StorageConflictError {
  switch (op.kind) {
    case 'document.create': {
      const h = op.head;
      const values = [esc(h.documentRef), esc(h.spaceRef), esc(h.accountId), esc(h.title), h.version, h.snapshotVersion, h.generation, esc(h.contentSha256), h.blockCount, h.createdAt, h.updatedAt].map(p);
      return {
        ctes: [
          `h${i} AS (INSERT INTO kw_heads (${HEAD_COLUMNS}) VALUES (${values.join(', ')}) ON CONFLICT (document_ref) DO NOTHING RETURNING document_ref)`,
          `c${i} AS (INSERT INTO kw_snapshots (document_ref, snapshot) SELECT document_ref, ${p(op.snapshot)}::bytea FROM h${i} RETURNING 1)`,
        ],
        check: `c${i}`,
      };
    }
    case 'document.append': {
      const h = op.head;
      if (!Number.isSafeInteger(h.version) || !Number.isSafeInteger(h.generation)) return conflict(i, op, 'version and generation must be integers');
      const version = p(h.version);
      // The head row is the guard: its update takes the row lock, and a racing append waits for it,
      // then finds another version and changes nothing.
      return {
        ctes: [
          `h${i} AS (UPDATE kw_heads SET space_ref = ${p(esc(h.spaceRef))}, account_id = ${p(esc(h.accountId))}, title = ${p(esc(h.title))}, version = ${version}::bigint,
             content_sha256 = ${p(esc(h.contentSha256))}, block_count = ${p(h.blockCount)}, created_at = ${p(h.createdAt)}, updated_at = ${p(h.updatedAt)}
             WHERE document_ref = ${p(esc(h.documentRef))} AND version = ${version}::bigint - 1 AND generation = ${p(h.generation)}::bigint RETURNING document_ref)`,
          `c${i} AS (INSERT INTO kw_updates (document_ref, version, update) SELECT document_ref, ${version}::bigint, ${p(op.update)}::bytea FROM h${i} RETURNING 1)`,
        ],
        check: `c${i}`,
      };
    }
    case 'document.compact': {
      if (!Number.isSafeInteger(op.snapshotVersion) || !Number.isSafeInteger(op.generation)) return conflict(i, op, 'snapshotVersion and generation must be integers');
      const sv = `${p(op.snapshotVersion)}::bigint`;
      const g = `${p(op.generation)}::bigint`;
      return {
        ctes: [
          `h${i} AS (UPDATE kw_heads SET snapshot_version = ${sv}, generation = ${g}
             WHERE document_ref = ${p(esc(op.documentRef))} AND ${sv} >= snapshot_version AND ${sv} <= version
               AND (${g} = generation OR (${g} = generation + 1 AND ${sv} = version)) RETURNING document_ref)`,
          `c${i} AS (UPDATE kw_snapshots SET snapshot = ${p(op.snapshot)}::bytea WHERE document_ref IN (SELECT document_ref FROM h${i}) RETURNING 1)`,
          `d${i} AS (DELETE FROM kw_updates WHERE document_ref IN (SELECT document_ref FROM h${i}) AND version <= ${sv} RETURNING 1)`,
        ],
        check: `c${i}`,
      };
    }
    case 'record.put': {
      const [c, k, v] = [p(esc(op.collection)), p(esc(op.key)), p(putJson(op))];
      const [part, sort] = [p(op.index === null ? null : esc(op.index.partition)), p(op.index === null ? null : esc(op.index.sortKey))];
      const expected = op.expectedRevision;
      if (expected === undefined) {
        return {
          ctes: [
            `c${i} AS (INSERT INTO kw_records AS r (collection, key, value, revision, partition, sort_key) VALUES (${c}, ${k}, ${v}, 1, ${part}, ${sort})
               ON CONFLICT (collection, key) DO UPDATE SET value = EXCLUDED.value, revision = r.revision + 1, partition = EXCLUDED.partition, sort_key = EXCLUDED.sort_key RETURNING 1)`,
          ],
          check: null,
        };
      }
      if (expected === null) {
        return {
          ctes: [`c${i} AS (INSERT INTO kw_records (collection, key, value, revision, partition, sort_key) VALUES (${c}, ${k}, ${v}, 1, ${part}, ${sort}) ON CONFLICT (collection, key) DO NOTHING RETURNING 1)`],
          check: `c${i}`,
        };
      }
      if (!Number.isSafeInteger(expected)) return conflict(i, op, `record ${op.collection}/${op.key}: expectedRevision ${expected} is not a revision`);
      return {
        ctes: [`c${i} AS (UPDATE kw_records SET value = ${v}, revision = revision + 1, partition = ${part}, sort_key = ${sort} WHERE collection = ${c} AND key = ${k} AND revision = ${p(expected)} RETURNING 1)`],
        check: `c${i}`,
      };
    }
    case 'record.delete': {
      const expected = op.expectedRevision;
      const where = `collection = ${p(esc(op.collection))} AND key = ${p(esc(op.key))}`;
      if (expected === undefined) return { ctes: [`c${i} AS (DELETE FROM kw_records WHERE ${where} RETURNING 1)`], check: null };
      if (!Number.isSafeInteger(expected)) return conflict(i, op, `record ${op.collection}/${op.key}: expectedRevision ${expected} is not a revision`);
      return { ctes: [`c${i} AS (DELETE FROM kw_records WHERE ${where} AND revision = ${p(expected)} RETURNING 1)`], check: `c${i}` };
    }
    case 'stream.append': {
      if (!Number.isSafeInteger(op.seq) || op.seq < 1) return conflict(i, op, `seq ${op.seq} is not head + 1`);
      const stream = p(esc(op.stream));
      const seq = `${p(op.seq)}::bigint`;
      // Two racing appends of one seq: the second waits on the primary key, then violates it.
      return {
        ctes: [
          `c${i} AS (INSERT INTO kw_streams (stream, seq, value)
             SELECT ${stream}, ${seq}, ${p(op.json)} WHERE (SELECT coalesce(max(seq), 0) FROM kw_streams WHERE stream = ${stream}) = ${seq} - 1 RETURNING 1)`,
        ],
        check: `c${i}`,
      };
    }
  }
}

/** Why op `i` conflicts, for its message. */
function conflictReason(op: PreparedOp): string {
  switch (op.kind) {
    case 'document.create':
      return `document ${op.head.documentRef} already exists`;
    case 'document.append':
      return `document ${op.head.documentRef} is missing, not at version ${op.head.version - 1}, or not at generation ${op.head.generation}`;
    case 'document.compact':
      return `document ${op.documentRef} is missing, or snapshotVersion ${op.snapshotVersion} / generation ${op.generation} do not fit it`;
    case 'record.put':
      return op.expectedRevision === null ? `record ${op.collection}/${op.key} exists` : `record ${op.collection}/${op.key} is absent or not at revision ${op.expectedRevision}`;
    case 'record.delete':
      return `record ${op.collection}/${op.key} is absent or not at revision ${op.expectedRevision}`;
    case 'stream.append':
      return `stream ${op.stream} is not at seq ${op.seq - 1}`;
  }
}

/** A parameter list and its placeholder maker. */
function parameters(): { params: unknown[]; p: Param } {
  const params: unknown[] = [];
  return { params, p: (value) => `$${params.push(value)}` };
}

/** Runs one op of a batch inside its transaction; a precondition that does not hold throws a conflict. */
async function applyOp(s: SqlSession, op: PreparedOp, i: number): Promise<void> {
  const { params, p } = parameters();
  const fragment = fragmentOf(op, i, p);
  if (fragment instanceof StorageConflictError) throw fragment;
  const { rows } = await s.query(`WITH ${fragment.ctes.join(',\n')} SELECT ${fragment.check === null ? '1' : `(SELECT count(*) FROM ${fragment.check})`} AS n`, params);
  if (Number(rows[0]?.n ?? 0) === 0) throw conflict(i, op, conflictReason(op));
}

/** What an op writes (a document, a record, a stream), to tell whether a batch's ops are independent. */
function targetOf(op: PreparedOp): string {
  if (op.kind === 'record.put' || op.kind === 'record.delete') return `r${op.collection.length}:${op.collection}${op.key}`;
  if (op.kind === 'stream.append') return `s${op.stream}`;
  return `d${op.kind === 'document.compact' ? op.documentRef : op.head.documentRef}`;
}

/**
 * A batch whose ops each write another document, record or stream as one statement (one round
 * trip, its own transaction): every op's CTEs, then a check that raises KW409 naming the first op
 * whose precondition is false, and the NOTIFYs. Null when two ops share a target (a later op must
 * see an earlier one's effect, which CTEs of one statement do not) or an op is malformed.
 */
function oneStatement(prepared: PreparedOp[], wire: string[]): { text: string; params: unknown[] } | null {
  const targets = new Set<string>();
  const { params, p } = parameters();
  const ctes: string[] = [];
  const checks: string[] = [];
  for (let i = 0; i < prepared.length; i++) {
    const op = prepared[i]!;
    const target = targetOf(op);
    if (targets.has(target)) return null;
    targets.add(target);
    const fragment = fragmentOf(op, i, p);
    if (fragment instanceof StorageConflictError) return null;
    ctes.push(...fragment.ctes);
    if (fragment.check !== null) checks.push(`WHEN NOT EXISTS (SELECT 1 FROM ${fragment.check}) THEN kw_conflict(${i})`);
  }
  // The checks come first: a change seq is only taken by a batch that passed them (the fallback
  // poll reads a seq nobody notified as a missed notification).
  const passed = (then: string) => (checks.length === 0 ? then : `CASE ${checks.join(' ')} ELSE ${then} END`);
  if (wire.length === 0) return { text: `WITH ${ctes.join(',\n')} SELECT ${passed('0')} AS failed, NULL AS seq`, params };
  ctes.push(`seq AS (SELECT ${passed(`nextval('kw_change_seq')`)} AS seq)`);
  return { text: `WITH ${ctes.join(',\n')} SELECT seq FROM seq`, params };
}

/** A commit's notification waiting to be sent: its change seq and its topics as they travel. */
interface Note {
  seq: number;
  wire: readonly string[];
}

/** Takes of one counter waiting for the next side statement, with their waiters in arrival order. */
interface TakeGroup {
  collection: string;
  key: string;
  windowStart: number;
  limit: number;
  waiters: { resolve: (taken: CountTaken) => void; reject: (error: unknown) => void }[];
}

/**
 * The side statement: the budget takes and the NOTIFYs of committed batches that waited while the
 * previous side statement was on its way, together in one transaction that does not wait for its WAL
 * flush (`synchronous_commit` off, transaction-local), so under load a request's charge and an
 * edit's notification each cost a fraction of a transaction, and no write waits for either.
 * @remarks
 * - Why the NOTIFY is not in the write's transaction: one that NOTIFYs holds PostgreSQL's
 *   database-wide notify lock from before its commit record until it is flushed, so notifying write
 *   transactions commit one WAL flush at a time (no group commit): measured 398 vs 3126 tps with 8
 *   pgbench clients. The write commits without it (durably); its seq was taken by the write, so a
 *   lost notification (a crash in between) is a gap the fallback poll sees and resyncs.
 * - Why a take is not in the write's transaction: its counter row would stay locked through the
 *   write's WAL flush, so one credential's writes would commit one flush at a time; here it is locked
 *   for a statement that does not wait for a flush. A crash of the database may forget the takes of
 *   its last WAL writer interval (well under the second decisions.md allows).
 * - Counters are taken in key order (`kw_take_count` locks each row), so two processes' side
 *   statements cannot deadlock on the same two counters.
 */
function sideStatement(origin: string, groups: readonly TakeGroup[], notes: readonly Note[]): { text: string; params: unknown[] } {
  const seqs: string[] = [];
  const topics: string[] = [];
  for (const note of notes) {
    for (const t of note.wire) {
      seqs.push(String(note.seq));
      topics.push(t);
    }
  }
  const ctes = [`async AS (SELECT set_config('synchronous_commit', 'off', true) AS off)`];
  const params: unknown[] = [];
  const selects: string[] = [];
  if (groups.length > 0) {
    params.push(
      groups.map((g) => esc(g.collection)),
      groups.map((g) => esc(g.key)),
      groups.map((g) => g.windowStart),
      groups.map((g) => g.limit),
      groups.map((g) => g.waiters.length),
    );
    ctes.push(`t AS (SELECT a.i, r.granted, r.used FROM async, unnest($1::text[], $2::text[], $3::float8[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS a(c, k, ws, lim, n, i)
      CROSS JOIN LATERAL kw_take_count(a.c, a.k, a.ws, a.lim, a.n) AS r)`);
    selects.push(`(SELECT json_agg(json_build_array(t.i, t.granted, t.used) ORDER BY t.i) FROM t)::text AS takes`);
  }
  if (topics.length > 0) {
    const at = params.length;
    params.push(origin, seqs, topics);
    ctes.push(`n AS (SELECT count(pg_notify('${CHANGE_CHANNEL}', s || ':' || $${at + 1} || ':' || tp)) AS sent FROM async, unnest($${at + 2}::text[], $${at + 3}::text[]) AS q(s, tp))`);
    selects.push('(SELECT sent FROM n) AS sent');
  }
  return { text: `WITH ${ctes.join(',\n')} SELECT ${selects.join(', ')}`, params };
}

/** Where a commit stood when it failed: before COMMIT was sent nothing is written; during it, the outcome is unknown. */
type Phase = 'ops' | 'committing';

/**
 * Opens the storage on a PostgreSQL database: connects, migrates the schema (see schema.ts), and
 * LISTENs for the commits of other processes.
 * @remarks
 * - A commit is one transaction (READ COMMITTED): one statement when its ops write distinct targets, else op by op. A document append is guarded by its head row
 *   (`UPDATE kw_heads … WHERE version = $expected`), so one document stays linear whichever
 *   process appends; a record put with `expectedRevision` is guarded the same way by its row, a
 *   claim (`null`) by the primary key, a stream append by `(stream, seq)`. A loser rejects with
 *   StorageConflictError; serialization failures and deadlocks are retried.
 * - Change notification: each transaction that touches topics takes a change seq, and right after its
 *   COMMIT a statement of its own NOTIFYs `kw_changes` once per topic with `<change seq>:<origin>:<topic>` (escaped; a topic over 7000 bytes as its hash). This
 *   process calls its own listeners right after COMMIT and skips the echo; notifications of other
 *   processes arrive on a dedicated LISTEN connection, which reconnects by itself and then calls
 *   every listener (notifications sent meanwhile are lost). A slow poll of the change sequence
 *   catches a LISTEN connection that died silently.
 * - Connection loss: calls reject with StorageUnavailableError (the API answers 503) while the
 *   database cannot be reached; a commit whose COMMIT got no answer may or may not have applied
 *   (it was not acknowledged; a retry with the same idempotency key settles it).
 * - `takeCount` is one call of `kw_take_count` (schema.ts) under the counter row's lock (atomic across
 *   processes); concurrent takes of one counter in this process share a call.
 * @example
 * ```ts
 * const storage = await postgresStorage({ url: process.env.DATABASE_URL });
 * ```
 */
export async function postgresStorage(options: PostgresStorageOptions): Promise<PostgresStorage> {
  const pool: PoolOptions = { ...options.pool };
  if (options.url !== undefined) pool.connectionString = options.url;
  return openPostgresStorage(pgDriver(pool, options.listenUrl), options);
}

/**
 * Opens the storage on any {@link SqlDriver} (the tests pass PGlite). The driver is the storage's:
 * `close()` ends it, and so does a failed open.
 */
export async function openPostgresStorage(driver: SqlDriver, options: Pick<PostgresStorageOptions, 'pollMs'> = {}): Promise<PostgresStorage> {
  let migrated: number[];
  try {
    migrated = await driver.session(migrate);
  } catch (error) {
    await driver.end().catch(() => {});
    throw isConnectionFailure(error) ? unavailable(error) : error;
  }
  const notifier = new ChangeNotifier();
  /** Listeners of {@link Storage.subscribeAppends}. */
  const appendListeners = new Set<(head: DocumentHead, update: Uint8Array) => void>();
  /** Long topics by the hash they travel as. */
  const hashed = new Map<string, string>();
  /** This storage's mark in the notifications of its commits (their echo is skipped). */
  const origin = randomBytes(6).toString('hex');
  const inflight = new Set<Promise<unknown>>();
  const stats: Omit<PostgresStats, 'connectionsOpened'> = { commits: 0, conflicts: 0, retries: 0, notificationsReceived: 0, resyncs: 0 };
  let closed = false;
  let closing: Promise<void> | null = null;
  let highest = 0;
  let gapSince = 0;

  const resync = () => {
    stats.resyncs++;
    notifier.notifyTopics(notifier.subscribedTopics());
  };

  function onNotify(payload: string): void {
    stats.notificationsReceived++;
    const first = payload.indexOf(':');
    const second = payload.indexOf(':', first + 1);
    const seq = Number(payload.slice(0, first));
    if (seq > highest) highest = seq;
    // This process's own commits called its listeners right after COMMIT.
    if (payload.slice(first + 1, second) === origin) return;
    const wire = payload.slice(second + 1);
    if (wire.startsWith('@')) {
      const append = appendOf(wire);
      if (append === null) return;
      for (const listener of appendListeners) {
        try {
          listener(append.head, append.update);
        } catch {
          // A listener must not throw; one that does is ignored.
        }
      }
      notifier.notifyTopics([documentTopic(append.head.documentRef)]);
      return;
    }
    const topic = wire.startsWith('#') ? hashed.get(wire.slice(1)) : unesc(wire);
    if (topic !== undefined) notifier.notifyTopics([topic]);
  }

  try {
    await driver.listen(CHANGE_CHANNEL, onNotify, resync);
    const { rows } = await driver.query<{ last_value: string | number; is_called: boolean }>('SELECT last_value, is_called FROM kw_change_seq');
    highest = rows[0]!.is_called ? Number(rows[0]!.last_value) : 0;
  } catch (error) {
    await driver.end().catch(() => {});
    throw isConnectionFailure(error) ? unavailable(error) : error;
  }

  // The fallback poll: a change seq above every one seen, still there a full period later, means
  // notifications were missed (a seq is taken by the write, NOTIFYed right after its COMMIT, so a gap rarely outlives one).
  const poll = setInterval(() => {
    driver.query<{ last_value: string | number; is_called: boolean }>('SELECT last_value, is_called FROM kw_change_seq').then(
      ({ rows }) => {
        const last = rows[0]!.is_called ? Number(rows[0]!.last_value) : 0;
        if (last <= highest) {
          gapSince = 0;
        } else if (gapSince === 0 || gapSince > last) {
          gapSince = last;
        } else {
          highest = Math.max(highest, gapSince, last);
          gapSince = 0;
          if (!closed) resync();
        }
      },
      () => {},
    );
  }, options.pollMs ?? 5_000);
  poll.unref?.();

  /**
   * The side channel (see {@link sideStatement}): takes and notifications that arrive while a side
   * statement is on its way go together in the next one. One side statement at a time.
   */
  const pendingTakes = new Map<string, TakeGroup>();
  let unsent: Note[] = [];
  let siding = false;
  function kickSide(): void {
    if (siding) return;
    siding = true;
    const sending = (async () => {
      while (pendingTakes.size > 0 || unsent.length > 0) {
        const groups = [...pendingTakes.values()].sort((x, y) => (x.collection === y.collection ? (x.key < y.key ? -1 : x.key > y.key ? 1 : 0) : x.collection < y.collection ? -1 : 1));
        pendingTakes.clear();
        const notes = unsent.splice(0, 1_000);
        await sendSide(groups, notes);
      }
      siding = false;
    })();
    inflight.add(sending);
    void sending.then(() => inflight.delete(sending));
  }

  /** One side statement; settles its takes' waiters. A failed notification is a gap the poll repairs. */
  async function sendSide(groups: TakeGroup[], notes: Note[]): Promise<void> {
    const statement = sideStatement(origin, groups, notes);
    if (groups.length === 0) {
      await driver.query(statement.text, statement.params).catch(() => undefined);
      return;
    }
    let rows: { takes: string | null }[];
    try {
      rows = (await read(() => retried(() => driver.query<{ takes: string | null }>(statement.text, statement.params)))).rows;
    } catch (error) {
      for (const g of groups) for (const w of g.waiters) w.reject(error);
      // The takes failed, not necessarily the commits they rode with: their notifications go alone.
      if (notes.length > 0) await sendSide([], notes);
      return;
    }
    const answers = JSON.parse(rows[0]!.takes ?? '[]') as [number, number | string, number | string][];
    for (const [i, grantedText, usedText] of answers) {
      const granted = Number(grantedText);
      const used = Number(usedText);
      groups[i - 1]!.waiters.forEach((w, j) => w.resolve(j < granted ? { taken: true, used: used - granted + j + 1 } : { taken: false, used }));
    }
  }

  /** Runs `run` again after a serialization failure or deadlock (up to 10 tries), as commits are. */
  async function retried<T>(run: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await run();
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (!(typeof code === 'string' && RETRY_STATES.has(code) && tries < 10)) throw error;
        stats.retries++;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * tries));
      }
    }
  }

  function queueNotify(seq: number, wire: readonly string[]): void {
    unsent.push({ seq, wire });
    kickSide();
  }

  /**
   * A take of one counter: waits for the next side statement, which counts all of a counter's
   * waiting takes at once (`kw_take_count(…, n)`): the first `granted` waiters get the counts, in
   * arrival order, exact as one by one.
   */
  function takeGrouped(collection: string, key: string, windowStart: number, limit: number): Promise<CountTaken> {
    const group = `${collection.length}:${collection}${key}\u0000${windowStart}\u0000${limit}`;
    return new Promise<CountTaken>((resolve, reject) => {
      const waiting = pendingTakes.get(group);
      if (waiting !== undefined) waiting.waiters.push({ resolve, reject });
      else pendingTakes.set(group, { collection, key, windowStart, limit, waiters: [{ resolve, reject }] });
      kickSide();
    });
  }

  const closedError = () => new Error('postgres storage is closed');

  /** A read: rejects after close, retries once on a dropped pooled connection, maps connection loss. */
  async function read<T>(run: () => Promise<T>): Promise<T> {
    if (closed) throw closedError();
    try {
      return await run();
    } catch (error) {
      if (!isConnectionFailure(error)) throw error;
      if (closed) throw closedError();
      try {
        return await run();
      } catch (again) {
        throw isConnectionFailure(again) ? unavailable(again) : again;
      }
    }
  }

  /** One attempt of a batch as one statement; returns its change seq (null: no topics). */
  async function attemptOne(prepared: PreparedOp[], statement: { text: string; params: unknown[] }, at: { phase: Phase }): Promise<number | null> {
    // One statement is its own transaction: once sent, its outcome is only known from its answer.
    at.phase = 'committing';
    try {
      const { rows } = await driver.query<{ seq: string | number | null }>(statement.text, statement.params);
      const seq = rows[0]?.seq;
      return seq === null || seq === undefined ? null : Number(seq);
    } catch (error) {
      const e = error as { code?: unknown; message?: unknown };
      if (e.code === 'KW409') {
        const i = Number(e.message);
        throw conflict(i, prepared[i]!, conflictReason(prepared[i]!));
      }
      if (e.code !== undefined) at.phase = 'ops'; // the server answered with an error: nothing was written
      throw error;
    }
  }

  /** One attempt of a batch in one transaction, op by op; returns its change seq (null: no topics). */
  async function attempt(prepared: PreparedOp[], wire: string[], at: { phase: Phase }): Promise<number | null> {
    return driver.session(async (s) => {
      at.phase = 'ops';
      await s.query('BEGIN');
      try {
        for (let i = 0; i < prepared.length; i++) {
          try {
            await applyOp(s, prepared[i]!, i);
          } catch (error) {
            if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) throw conflict(i, prepared[i]!, 'a racing commit took its key first');
            throw error;
          }
        }
        let seq: number | null = null;
        if (wire.length > 0) {
          const { rows } = await s.query<{ seq: string | number }>(`SELECT nextval('kw_change_seq') AS seq`);
          seq = Number(rows[0]!.seq);
        }
        at.phase = 'committing';
        await s.query('COMMIT');
        return seq;
      } catch (error) {
        if (at.phase === 'ops') await s.query('ROLLBACK').catch(() => {});
        throw error;
      }
    });
  }

  async function commit(ops: BatchOp[]): Promise<void> {
    const prepared = prepareBatch(ops);
    if (prepared.length === 0) return;
    const topics = topicsOf(prepared);
    // An append's notification carries the append itself, when it fits (and is the batch's only
    // append of its document): other processes holding the document catch up without reading it
    // (Storage.subscribeAppends).
    const carried = new Map<string, string | null>();
    for (const op of prepared) {
      if (op.kind !== 'document.append') continue;
      const topic = documentTopic(op.head.documentRef);
      carried.set(topic, carried.has(topic) ? null : appendWire(op.head, op.update));
    }
    const wire = [...topics].map((t) => carried.get(t) ?? wireTopic(t));
    // Independent ops go as one statement; a unique violation there (which op?) reruns op by op.
    let statement = oneStatement(prepared, wire);
    for (let tries = 1; ; tries++) {
      const at = { phase: 'ops' as Phase };
      try {
        const seq = statement === null ? await attempt(prepared, wire, at) : await attemptOne(prepared, statement, at);
        stats.commits++;
        if (seq !== null && seq > highest) highest = seq;
        notifier.notifyTopics(topics);
        if (seq !== null) {
          // Committed already: the commit does not wait for it (one round trip less per write), and
          // a failed NOTIFY is a gap the fallback poll repairs, not a failed commit. Close awaits it.
          queueNotify(seq, wire);
        }
        return;
      } catch (error) {
        if (error instanceof StorageConflictError) {
          stats.conflicts++;
          throw error;
        }
        const code = (error as { code?: unknown }).code;
        if (code === UNIQUE_VIOLATION && statement !== null) {
          statement = null;
          continue;
        }
        if (typeof code === 'string' && RETRY_STATES.has(code) && tries < 10) {
          stats.retries++;
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * tries));
          continue;
        }
        if (!isConnectionFailure(error)) throw error;
        // Nothing was written before COMMIT was sent: run it once more on a fresh connection.
        if (at.phase === 'ops' && tries === 1 && !closed) continue;
        // The outcome of a COMMIT without answer is unknown: tell this process's listeners anyway
        // (they read the store), since the echo of a commit that did apply is skipped.
        if (at.phase === 'committing') notifier.notifyTopics(topics);
        throw unavailable(error);
      }
    }
  }

  const storage: PostgresStorage = {
    sharedByProcesses: true,
    migrated,

    getDocumentHead: (documentRef) =>
      read(async () => {
        const { rows } = await driver.query(`SELECT ${HEAD_COLUMNS} FROM kw_heads WHERE document_ref = $1`, [esc(documentRef)]);
        return rows.length === 0 ? null : headOf(rows[0]!);
      }),

    loadDocument: (documentRef) =>
      read(async (): Promise<StoredDocument | null> => {
        // One statement: head, snapshot and log from one snapshot of the database.
        const { rows } = await driver.query(
          `SELECT ${HEAD_COLUMNS.split(', ').map((c) => `h.${c}`).join(', ')}, s.snapshot,
             (SELECT array_agg(u.version ORDER BY u.version) FROM kw_updates u WHERE u.document_ref = h.document_ref AND u.version > h.snapshot_version) AS versions,
             (SELECT array_agg(u.update ORDER BY u.version) FROM kw_updates u WHERE u.document_ref = h.document_ref AND u.version > h.snapshot_version) AS updates
           FROM kw_heads h JOIN kw_snapshots s ON s.document_ref = h.document_ref WHERE h.document_ref = $1`,
          [esc(documentRef)],
        );
        if (rows.length === 0) return null;
        const row = rows[0]!;
        return { head: headOf(row), snapshot: bytesOf(row.snapshot), updates: updatesOf(row.versions, row.updates) };
      }),

    loadUpdates: (documentRef, afterVersion) =>
      read(async () => {
        const { rows } = await driver.query(
          `SELECT h.snapshot_version,
             (SELECT array_agg(u.version ORDER BY u.version) FROM kw_updates u WHERE u.document_ref = h.document_ref AND u.version > $2) AS versions,
             (SELECT array_agg(u.update ORDER BY u.version) FROM kw_updates u WHERE u.document_ref = h.document_ref AND u.version > $2) AS updates
           FROM kw_heads h WHERE h.document_ref = $1`,
          [esc(documentRef), afterVersion],
        );
        if (rows.length === 0 || afterVersion < Number(rows[0]!.snapshot_version)) return null;
        return updatesOf(rows[0]!.versions, rows[0]!.updates);
      }),

    loadHeadAndUpdates: (documentRef, afterVersion) =>
      read(async (): Promise<HeadAndUpdates | null> => {
        const { rows } = await driver.query(
          `SELECT ${HEAD_COLUMNS.split(', ').map((c) => `h.${c}`).join(', ')},
             (SELECT array_agg(u.version ORDER BY u.version) FROM kw_updates u WHERE u.document_ref = h.document_ref AND u.version > $2) AS versions,
             (SELECT array_agg(u.update ORDER BY u.version) FROM kw_updates u WHERE u.document_ref = h.document_ref AND u.version > $2) AS updates
           FROM kw_heads h WHERE h.document_ref = $1`,
          [esc(documentRef), afterVersion],
        );
        if (rows.length === 0) return null;
        const head = headOf(rows[0]!);
        return { head, updates: afterVersion < head.snapshotVersion ? null : updatesOf(rows[0]!.versions, rows[0]!.updates) };
      }),

    listDocumentHeads: (accountId, limit, after?: HeadCursor) =>
      read(async () => {
        if (!(limit > 0)) return [];
        const params: unknown[] = [esc(accountId), Math.floor(limit)];
        let where = 'account_id = $1';
        if (after !== undefined) {
          where += ' AND (updated_at, document_ref) < ($3, $4)';
          params.push(after.updatedAt, esc(after.documentRef));
        }
        const { rows } = await driver.query(`SELECT ${HEAD_COLUMNS} FROM kw_heads WHERE ${where} ORDER BY updated_at DESC, document_ref DESC LIMIT $2`, params);
        return rows.map(headOf);
      }),

    getRecord: <T>(collection: string, key: string) =>
      read(async (): Promise<StoredRecord<T> | null> => {
        const { rows } = await driver.query('SELECT value, revision FROM kw_records WHERE collection = $1 AND key = $2', [esc(collection), esc(key)]);
        if (rows.length === 0) return null;
        return { key, value: JSON.parse(rows[0]!.value as string) as T, revision: Number(rows[0]!.revision) };
      }),

    listRecords: <T>(collection: string, prefix = '') =>
      read(async (): Promise<StoredRecord<T>[]> => {
        const p = esc(prefix);
        const { rows } = await driver.query(
          'SELECT key, value, revision FROM kw_records WHERE collection = $1 AND key >= $2 AND starts_with(key, $2) ORDER BY key',
          [esc(collection), p],
        );
        return rows.map((r) => ({ key: unesc(r.key as string), value: JSON.parse(r.value as string) as T, revision: Number(r.revision) }));
      }),

    listPage: <T>(collection: string, partition: string, limit: number, after?: string | null) =>
      read(async (): Promise<RecordPage<T>> => {
        checkLimit('listPage', limit);
        const params: unknown[] = [esc(collection), esc(partition), limit + 1];
        let where = 'collection = $1 AND partition = $2';
        if (after !== undefined && after !== null) {
          const position = decodePagePosition(after);
          where += ' AND (sort_key, key) < ($4, $5)';
          params.push(esc(position.sortKey), esc(position.key));
        }
        const { rows } = await driver.query(
          `SELECT key, value, revision, sort_key FROM kw_records WHERE ${where} ORDER BY sort_key DESC, key DESC LIMIT $3`,
          params,
        );
        const more = rows.length > limit;
        const page = more ? rows.slice(0, limit) : rows;
        const records = page.map((r) => ({ key: unesc(r.key as string), value: JSON.parse(r.value as string) as T, revision: Number(r.revision) }));
        const last = page[page.length - 1];
        return { records, next: more && last ? encodePagePosition({ sortKey: unesc(last.sort_key as string), key: unesc(last.key as string) }) : null };
      }),

    readStream: <T>(stream: string, afterSeq: number, limit: number) =>
      read(async (): Promise<StreamEntry<T>[]> => {
        checkAfterSeq(afterSeq);
        checkLimit('readStream', limit);
        const { rows } = await driver.query('SELECT seq, value FROM kw_streams WHERE stream = $1 AND seq > $2 ORDER BY seq LIMIT $3', [esc(stream), afterSeq, limit]);
        return rows.map((r) => ({ seq: Number(r.seq), value: JSON.parse(r.value as string) as T }));
      }),

    streamHead: (stream) =>
      read(async () => {
        const { rows } = await driver.query('SELECT coalesce(max(seq), 0) AS head FROM kw_streams WHERE stream = $1', [esc(stream)]);
        return Number(rows[0]!.head);
      }),

    commit(ops) {
      if (closed) return Promise.reject(closedError());
      const run = commit(ops);
      inflight.add(run);
      const done = () => inflight.delete(run);
      run.then(done, done);
      return run;
    },

    ...postgresEphemeral(driver, () => closed),

    subscribe(topic, listener) {
      if (closed) throw closedError();
      const wire = typeof topic === 'string' ? wireTopic(topic) : '';
      if (wire.startsWith('#')) hashed.set(wire.slice(1), topic);
      return notifier.subscribe(topic, listener);
    },

    subscribeAppends(listener) {
      if (closed) throw closedError();
      const own = (head: DocumentHead, update: Uint8Array) => listener(head, update);
      appendListeners.add(own);
      return () => void appendListeners.delete(own);
    },

    takeCount: (collection, key, windowStart, limit) => {
      if (closed) return Promise.reject(closedError());
      if (!Number.isFinite(windowStart)) return Promise.reject(new RangeError(`takeCount: windowStart must be a finite number, got ${String(windowStart)}`));
      if (!Number.isSafeInteger(limit) || limit < 0) return Promise.reject(new RangeError(`takeCount: limit must be a non-negative integer, got ${String(limit)}`));
      return takeGrouped(collection, key, windowStart, limit);
    },

    exclusive: async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
      if (closed) throw closedError();
      return driver.session(async (s) => {
        await s.query('BEGIN');
        let result: T;
        try {
          await s.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`kw:${name}`]);
          result = await fn();
        } catch (error) {
          // A lost connection ended the transaction (and its lock) already; the driver discards it.
          await s.query('ROLLBACK').catch(() => {});
          throw error;
        }
        await s.query('COMMIT');
        return result;
      });
    },

    stats: () => ({ ...stats, connectionsOpened: driver.connectionsOpened?.() ?? 0 }),

    sql: {
      async query<R>(text: string, params?: unknown[]): Promise<SqlResult<R>> {
        if (closed) throw closedError();
        try {
          return await driver.query<R>(text, params);
        } catch (error) {
          throw isConnectionFailure(error) ? unavailable(error) : error;
        }
      },
    },

    close() {
      closed = true;
      closing ??= (async () => {
        clearInterval(poll);
        while (inflight.size > 0) await Promise.allSettled([...inflight]);
        notifier.clear();
        await driver.end();
      })();
      return closing;
    },
  };
  return storage;
}
