/**
 * Keeping unfinished uploads bounded: the per-credential caps checked by prepare-upload, and the
 * sweep that expires uploads left unfinished, releases the bytes of captured ones, and (at start)
 * removes spool bytes no upload claims any more.
 * @remarks Live uploads — unfinished ones, and finished ones until their capture has run — carry an
 * index entry in {@link LIVE_UPLOADS_PARTITION}; everything here reads that listing, which the caps
 * keep small (at most `maxOpenUploads` unfinished per credential).
 * @module
 */
import { isoTimestamp } from '../clock.ts';
import type { Actor } from '../actor.ts';
import { ServiceError } from '../errors.ts';
import { isStorageConflict, type BatchOp, type RecordPage, type StoredRecord } from '../ports.ts';
import type { LibraryContext } from './context.ts';
import { LibraryCollections, LIVE_UPLOADS_PARTITION, accountKey, uploadPutOp, type UploadRecord } from './records.ts';

/** Every live upload record. */
export async function liveUploads(ctx: LibraryContext): Promise<StoredRecord<UploadRecord>[]> {
  const out: StoredRecord<UploadRecord>[] = [];
  let after: string | null = null;
  do {
    const page: RecordPage<UploadRecord> = await ctx.deps.storage.listPage<UploadRecord>(LibraryCollections.uploads, LIVE_UPLOADS_PARTITION, 1000, after);
    out.push(...page.records);
    after = page.next;
  } while (after !== null);
  return out;
}

const isOpen = (u: UploadRecord, now: number) => (u.state === 'awaiting-bytes' || u.state === 'received') && now <= u.expiresAt;
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(bytes % 1048576 === 0 ? 0 : 1)} MiB`;

/**
 * Refuse a new upload of `byteLength` bytes when the actor's credential already holds
 * `maxOpenUploads` unfinished uploads, or when their declared bytes plus these would pass
 * `maxOpenUploadBytes`: 409 CONFLICT (the state of the credential's uploads does not allow another;
 * finishing one or letting it expire does), retryable, with the time the oldest one expires.
 */
export async function checkOpenUploadCaps(ctx: LibraryContext, actor: Actor, byteLength: number): Promise<void> {
  const now = ctx.deps.clock.now();
  const who = actor.credentialRef ?? null;
  const open = (await liveUploads(ctx)).map((r) => r.value).filter((u) => u.accountId === actor.accountId && (u.credentialRef ?? null) === who && isOpen(u, now));
  const { maxOpenUploads, maxOpenUploadBytes } = ctx.uploads;
  const held = open.reduce((sum, u) => sum + u.byteLength, 0);
  const soonest = open.reduce((t, u) => Math.min(t, u.expiresAt), Infinity);
  const retry = { retryable: true, ...(open.length ? { retryAfterMs: Math.max(0, Math.min(86_400_000, soonest - now)) } : {}) };
  const when = open.length ? ` or wait until the oldest expires at ${isoTimestamp(soonest)}` : '';
  if (open.length >= maxOpenUploads) {
    throw new ServiceError('CONFLICT', `This credential already has ${open.length} unfinished uploads, the most it may hold at once; finish one with finish-upload${when}.`, {
      ...retry,
      fieldErrors: [{ field: 'type', message: `at most ${maxOpenUploads} unfinished uploads per credential` }],
    });
  }
  if (held + byteLength > maxOpenUploadBytes) {
    throw new ServiceError(
      'CONFLICT',
      `This credential's unfinished uploads already declare ${mib(held)}; ${mib(byteLength)} more would pass the ${mib(maxOpenUploadBytes)} it may hold at once. Finish one with finish-upload${when}.`,
      { ...retry, fieldErrors: [{ field: 'byteLength', message: `at most ${maxOpenUploadBytes - held} more bytes of unfinished uploads for this credential` }] },
    );
  }
}

/** What one sweep did. */
export interface SweepReport {
  /** Unfinished uploads past their expiry: marked `expired`, bytes dropped. */
  expired: number;
  /** Finished uploads whose capture has run: bytes dropped (normally the capture does it itself). */
  released: number;
  /** Spool bytes no live upload claims (only when `orphans` is set: at start). */
  orphans: number;
}

async function commitQuietly(ctx: LibraryContext, ops: BatchOp[]): Promise<boolean> {
  try {
    await ctx.deps.storage.commit(ops);
    return true;
  } catch (e) {
    // The upload moved meanwhile (a PUT, a finish, a capture): the next sweep looks again.
    if (isStorageConflict(e)) return false;
    throw e;
  }
}

/**
 * Expire unfinished uploads past their time, release the bytes of captured ones and, with
 * `orphans`, remove spool bytes that no live upload claims (a crash between a commit and a spool
 * removal leaves such bytes; run it before any PUT can start, as the library does at start).
 */
export async function sweepUploads(ctx: LibraryContext, options: { orphans: boolean }): Promise<SweepReport> {
  const report: SweepReport = { expired: 0, released: 0, orphans: 0 };
  const spool = ctx.uploads.spool;
  const now = ctx.deps.clock.now();
  const wanted = new Set<string>();
  for (const stored of await liveUploads(ctx)) {
    const u = stored.value;
    if (u.state === 'finished') {
      const pending = u.itemId !== null && (await ctx.deps.storage.getRecord(LibraryCollections.jobs, accountKey(u.accountId, u.itemId))) !== null;
      if (pending) wanted.add(u.uploadId);
      else if (await commitQuietly(ctx, [uploadPutOp(u, stored.revision, false)])) {
        await spool.remove(u.uploadId);
        report.released++;
      }
      continue;
    }
    if (now > u.expiresAt && !ctx.uploading.has(u.uploadId)) {
      const expired: UploadRecord = { ...u, state: 'expired', receivedBytes: null, sha256: null };
      if (await commitQuietly(ctx, [uploadPutOp(expired, stored.revision, false)])) {
        await spool.remove(u.uploadId);
        report.expired++;
      }
      continue;
    }
    wanted.add(u.uploadId);
  }
  if (options.orphans) {
    for (const id of await spool.list()) {
      if (wanted.has(id) || ctx.uploading.has(id)) continue;
      await spool.remove(id);
      report.orphans++;
    }
  }
  return report;
}
