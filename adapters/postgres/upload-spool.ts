/**
 * The upload spool on PostgreSQL: the bytes of an upload wait in the shared database, so that its
 * PUT on one process and its finish-upload or capture on another see the same bytes (see the
 * {@link UploadSpool} port in src/library/upload-spool.ts).
 * @remarks Tables of migration 2 (schema.ts): `kw_uploads`, one row per id holding bytes (possibly
 * none yet), and `kw_upload_chunks`, the chunks in arrival order. Every method is one statement
 * (its own transaction): `append` inserts one chunk (never rewrites the upload), `read` joins the
 * chunks in order — only those it needs for `maxBytes` — and `remove` deletes both. Ids are text
 * escaped like every key of the adapter (text-codec.ts).
 * @module
 */
import type { UploadSpool } from '../../src/library/upload-spool.ts';
import type { PostgresStorage, SqlQuery } from './postgres-storage.ts';
import { escapeText as esc, unescapeText as unesc } from './text-codec.ts';

/**
 * A spool in the tables of the storage's database, on the storage's own pool (no second pool);
 * pass a {@link PostgresStorage} or anything that runs one statement ({@link SqlQuery}).
 * The storage's migrations create the tables; closing the storage ends the spool too.
 */
export function postgresUploadSpool(db: PostgresStorage | SqlQuery): UploadSpool {
  const sql: SqlQuery = 'sql' in db ? db.sql : db;
  return {
    async create(id) {
      await sql.query(
        `WITH dropped AS (DELETE FROM kw_upload_chunks WHERE upload_id = $1 RETURNING 1)
         INSERT INTO kw_uploads (upload_id) VALUES ($1) ON CONFLICT DO NOTHING`,
        [esc(id)],
      );
    },
    async append(id, chunk) {
      // Appends to one id are never concurrent (the port's contract), so max(seq) + 1 is free.
      await sql.query(
        `WITH made AS (INSERT INTO kw_uploads (upload_id) VALUES ($1::text) ON CONFLICT DO NOTHING RETURNING 1)
         INSERT INTO kw_upload_chunks (upload_id, seq, bytes)
         SELECT $1, coalesce(max(seq), 0) + 1, $2::bytea FROM kw_upload_chunks WHERE upload_id = $1`,
        [esc(id), chunk],
      );
    },
    async read(id, maxBytes = Infinity) {
      const limit = Math.max(0, Math.floor(Math.min(maxBytes, Number.MAX_SAFE_INTEGER)));
      // The chunks that start before `limit`, in order; the uploads row tells "no bytes" from "unknown".
      const { rows } = await sql.query<{ bytes: Uint8Array | null }>(
        `SELECT c.bytes FROM kw_uploads u
         LEFT JOIN LATERAL (
           SELECT seq, bytes, sum(length(bytes)) OVER (ORDER BY seq) - length(bytes) AS before
           FROM kw_upload_chunks WHERE upload_id = u.upload_id
         ) c ON c.before < $2::bigint
         WHERE u.upload_id = $1 ORDER BY c.seq`,
        [esc(id), limit],
      );
      if (rows.length === 0) return null;
      const chunks = rows.flatMap((r) => (r.bytes === null ? [] : [r.bytes]));
      const size = chunks.reduce((n, c) => n + c.byteLength, 0);
      const out = new Uint8Array(Math.min(size, limit));
      let at = 0;
      for (const c of chunks) {
        if (at >= out.length) break;
        const part = c.subarray(0, out.length - at);
        out.set(part, at);
        at += part.length;
      }
      return out;
    },
    async remove(id) {
      await sql.query(
        `WITH dropped AS (DELETE FROM kw_upload_chunks WHERE upload_id = $1 RETURNING 1)
         DELETE FROM kw_uploads WHERE upload_id = $1`,
        [esc(id)],
      );
    },
    async list() {
      const { rows } = await sql.query<{ upload_id: string }>('SELECT upload_id FROM kw_uploads ORDER BY upload_id');
      return rows.map((r) => unesc(r.upload_id));
    },
  };
}
