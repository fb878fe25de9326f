/**
 * What the library's command handlers share, and the idempotent-write helper they all use.
 * @remarks The idempotency key travels in the command body. It is scoped to the account; the
 * fingerprint is the SHA-256 of the parsed command without its key, so the same key with the same
 * command replays (the same item, never a duplicate) and with another command is IDEMPOTENCY_CONFLICT.
 * The write and its idempotency record commit in one batch.
 * @module
 */
import type { Actor, EngineDeps } from '../deps.ts';
import { IdempotencyStore, scopedKey } from '../idempotency/idempotency.ts';
import { isStorageConflict, type BatchOp } from '../ports.ts';
import type { CaptureEnv } from './capture-runner.ts';
import type { CaptureQueue } from './capture-queue.ts';
import { Collections, accountKey, type ItemRecord } from './records.ts';
import { notFound } from '../errors.ts';
import type { StoredRecord } from '../ports.ts';
import type { UploadSpool } from './upload-spool.ts';
import type { KeyedLock } from './keyed-lock.ts';

/** Upload limits. */
export interface UploadSettings {
  /** Where upload bytes wait from their PUT until their capture has run. */
  spool: UploadSpool;
  /** Largest upload accepted, in bytes. */
  maxBytes: number;
  /** Unfinished uploads one credential may hold at once, and their declared bytes together. */
  maxOpenUploads: number;
  maxOpenUploadBytes: number;
  /** How long a prepared upload stays open. */
  ttlMs: number;
  /** The path template the edge serves PUTs on; `{uploadId}` is replaced. */
  pathTemplate: string;
}

/** Shared state of one library service. */
export interface LibraryContext {
  deps: EngineDeps;
  idem: IdempotencyStore;
  capture: CaptureEnv;
  queue: CaptureQueue;
  uploads: UploadSettings;
  /** Settles when the start-up sweep of uploads has run (prepare and PUT wait for it). */
  uploadsReady: Promise<void>;
  /** Upload ids whose bytes a PUT is sending right now (one PUT per upload at a time). */
  uploading: Set<string>;
  /** Serialises prepare-upload per credential (the caps). */
  uploadLocks: KeyedLock;
}

/** One application of a keyed write: the ops to commit, the value to remember, and what to do after. */
export interface Application<R> {
  ops: BatchOp[];
  result: R;
  after?: () => void;
}

/**
 * Apply a keyed write once. `apply` builds the batch; `replay` turns a remembered result into the
 * answer (for the first application too, so both answer alike).
 * @returns the answer and whether this call created it.
 */
export async function idempotent<R, A>(
  ctx: LibraryContext,
  actor: Actor,
  command: { idempotencyKey: string },
  apply: () => Promise<Application<R>>,
  replay: (result: R) => Promise<A>,
): Promise<{ answer: A; created: boolean }> {
  const scope = `library\u0000${scopedKey(actor.accountId, command.idempotencyKey)}`;
  const { idempotencyKey: _key, ...rest } = command;
  const fingerprint = ctx.deps.sha256(JSON.stringify(rest));
  const prior = await ctx.idem.lookup<R>(scope, fingerprint);
  if (prior) return { answer: await replay(prior.result), created: false };
  const application = (async () => {
    const app = await apply();
    const record = { fingerprint, receiptRef: `lrcpt_${ctx.deps.ids.hex(32)}`, createdAt: ctx.deps.clock.now(), result: app.result };
    await ctx.deps.storage.commit([...app.ops, ctx.idem.recordOp(scope, record)]);
    app.after?.();
    return app.result;
  })();
  try {
    const result = await ctx.idem.track(scope, application);
    return { answer: await replay(result), created: true };
  } catch (e) {
    // A concurrent first application of the same key won the race: answer as its replay.
    if (isStorageConflict(e)) {
      const winner = await ctx.idem.find<R>(scope, fingerprint);
      if (winner) return { answer: await replay(winner.result), created: false };
    }
    throw e;
  }
}

/** Load an item of the actor's account, or NOT_FOUND. */
export async function loadItem(ctx: LibraryContext, actor: Actor, itemId: string, what = 'Library item'): Promise<StoredRecord<ItemRecord>> {
  const stored = await ctx.deps.storage.getRecord<ItemRecord>(Collections.items, accountKey(actor.accountId, itemId));
  if (!stored) throw notFound(`${what} ${itemId}`);
  return stored;
}

/** Mint a fresh library id with `prefix` (`litm`, `lcap`, `lrep`, `lupl`). */
export function mintId(ctx: LibraryContext, prefix: 'litm' | 'lupl'): string {
  return `${prefix}_${ctx.deps.ids.hex(24)}`;
}
