/**
 * The schema of the PostgreSQL adapter and its versioned migrations, applied at start under a
 * transaction-scoped advisory lock, so that processes starting at once migrate one after another.
 * @module
 */
import type { SqlSession } from './driver.ts';

/** The advisory lock key of migrations (any fixed 64-bit number; "kw-migr" in ASCII). */
export const MIGRATION_LOCK = 0x6b772d6d696772n;

/** The channel every commit NOTIFYs on. */
export const CHANGE_CHANNEL = 'kw_changes';

/**
 * The migrations, in order; a database records the versions it has in `kw_schema_migrations`.
 * Never edit a released one: append the next.
 * @remarks Every text column that is compared or sorted is declared `COLLATE "C"` (byte order, as
 * the port's listings expect, whatever the database's default collation).
 */
export const MIGRATIONS: readonly { version: number; name: string; statements: readonly string[] }[] = [
  {
    version: 1,
    name: 'documents, records, streams, change sequence',
    statements: statementsOf(`
CREATE TABLE kw_heads (
  document_ref text COLLATE "C" PRIMARY KEY,
  space_ref text NOT NULL,
  account_id text COLLATE "C" NOT NULL,
  title text NOT NULL,
  version bigint NOT NULL,
  snapshot_version bigint NOT NULL,
  generation bigint NOT NULL,
  content_sha256 text NOT NULL,
  block_count bigint NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX kw_heads_by_account ON kw_heads (account_id, updated_at DESC, document_ref DESC);
CREATE TABLE kw_snapshots (
  document_ref text COLLATE "C" PRIMARY KEY,
  snapshot bytea NOT NULL
);
CREATE TABLE kw_updates (
  document_ref text COLLATE "C" NOT NULL,
  version bigint NOT NULL,
  update bytea NOT NULL,
  PRIMARY KEY (document_ref, version)
);
CREATE TABLE kw_records (
  collection text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  value text NOT NULL,
  revision bigint NOT NULL,
  partition text COLLATE "C",
  sort_key text COLLATE "C",
  PRIMARY KEY (collection, key)
);
CREATE INDEX kw_records_listing ON kw_records (collection, partition, sort_key DESC, key DESC) WHERE partition IS NOT NULL;
CREATE TABLE kw_streams (
  stream text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (stream, seq)
);
CREATE SEQUENCE kw_change_seq;
`).concat(
      // Raised inside a one-statement batch when op i finds its precondition false (SQLSTATE KW409).
      `CREATE FUNCTION kw_conflict(i integer) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'KW409', MESSAGE = i::text;
END $$`,
    ),
  },
  {
    version: 2,
    name: 'upload spool',
    statements: statementsOf(`
CREATE TABLE kw_uploads (
  upload_id text COLLATE "C" PRIMARY KEY
);
CREATE TABLE kw_upload_chunks (
  upload_id text COLLATE "C" NOT NULL,
  seq integer NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (upload_id, seq)
);
`),
  },
  {
    version: 3,
    name: 'windowed counter takes in one call',
    statements: [
      // takeCount for n callers at once (the adapter groups concurrent takes of one counter): counts
      // min(n, limit - used) in the stored window (restarted when older) under the row's lock.
      // Its own transaction does not wait for its WAL flush (synchronous_commit off, transaction-local).
      `CREATE FUNCTION kw_take_count(c text, k text, ws float8, lim bigint, n bigint, OUT granted bigint, OUT used bigint) LANGUAGE plpgsql AS $$
DECLARE
  stored text;
  cur_ws float8;
  cur_used bigint;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT r.value INTO stored FROM kw_records r WHERE r.collection = c AND r.key = k FOR UPDATE;
  IF NOT FOUND THEN
    granted := least(n, lim);
    used := granted;
    IF granted = 0 THEN RETURN; END IF;
    INSERT INTO kw_records (collection, key, value, revision) VALUES (c, k, json_build_object('v', 1, 'windowStart', ws, 'used', granted)::text, granted)
      ON CONFLICT (collection, key) DO NOTHING;
    IF FOUND THEN RETURN; END IF;
    SELECT r.value INTO stored FROM kw_records r WHERE r.collection = c AND r.key = k FOR UPDATE;
  END IF;
  cur_ws := (stored::json->>'windowStart')::float8;
  cur_used := (stored::json->>'used')::bigint;
  IF cur_ws < ws THEN
    cur_ws := ws;
    cur_used := 0;
  END IF;
  granted := greatest(0, least(n, lim - cur_used));
  used := cur_used + granted;
  IF granted > 0 THEN
    UPDATE kw_records SET value = json_build_object('v', 1, 'windowStart', cur_ws, 'used', used)::text, revision = revision + granted
      WHERE collection = c AND key = k;
  END IF;
END $$`,
    ],
  },
];

function statementsOf(sql: string): string[] {
  return sql.split(';').map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * Brings the schema to the latest version, in one transaction holding {@link MIGRATION_LOCK}.
 * @returns the versions applied by this call (empty when the database was up to date).
 */
export async function migrate(session: SqlSession): Promise<number[]> {
  const applied: number[] = [];
  await session.query('BEGIN');
  try {
    await session.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
    await session.query(
      'CREATE TABLE IF NOT EXISTS kw_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await session.query<{ version: number }>('SELECT version FROM kw_schema_migrations');
    const have = new Set(rows.map((r) => Number(r.version)));
    const newest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
    const unknown = [...have].filter((v) => v > newest);
    if (unknown.length > 0) {
      throw new Error(`the database's schema is at version ${Math.max(...unknown)}, newer than this program knows (${newest}); upgrade the program`);
    }
    for (const m of MIGRATIONS) {
      if (have.has(m.version)) continue;
      for (const statement of m.statements) await session.query(statement);
      await session.query('INSERT INTO kw_schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    await session.query('COMMIT');
  } catch (error) {
    await session.query('ROLLBACK').catch(() => {});
    throw error;
  }
  return applied;
}
