/**
 * What the library's command handlers share, and the idempotent-write helper they all use.
 * @remarks The idempotency key travels in the command body. It is scoped to the account and the
 * command type; the fingerprint is the SHA-256 of the parsed command without its key, so the same
 * key with the same command replays (the same item, never a duplicate) and with another command is
 * IDEMPOTENCY_CONFLICT. The write and its idempotency record commit in one batch (the one write
 * protocol, src/idempotency).
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import type { Actor } from '../actor.ts';
import { canonicalJson } from '../canonical-json.ts';
import { IdempotencyStore, createdReceipt, newReceiptRef, replayedReceipt, writeScope, type IdempotencyRecord, type WriteReceipt } from '../idempotency/idempotency.ts';
import type { BatchOp } from '../ports.ts';
import type { CaptureEnv } from './capture-runner.ts';
import type { CaptureQueue } from './capture-queue.ts';
import { LibraryCollections, accountKey, type ItemRecord } from './records.ts';
import { notFound } from '../errors.ts';
import type { StoredRecord } from '../ports.ts';
import type { UploadSpool } from './upload-spool.ts';
import type { KeyedLock } from '../keyed-lock.ts';

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

/** A library write's answer: the value, whether this call stored it, and its receipt (keyed writes). */
export interface Written<A> {
  answer: A;
  created: boolean;
  receipt: WriteReceipt | null;
}

/**
 * Apply a library write through the write protocol. `apply` builds the batch; `replay` turns a
 * remembered result into the answer (for the first application too, so both answer alike). Without
 * a key (only set-reading-state, guarded by its revision) the write is applied as it comes.
 */
export async function idempotent<R, A>(
  ctx: LibraryContext,
  actor: Actor,
  command: { type: string; idempotencyKey?: string | undefined },
  apply: () => Promise<Application<R>>,
  replay: (result: R) => Promise<A>,
): Promise<Written<A>> {
  const key = command.idempotencyKey;
  if (key === undefined) {
    const app = await apply();
    await ctx.deps.storage.commit(app.ops);
    app.after?.();
    return { answer: await replay(app.result), created: true, receipt: null };
  }
  const scope = writeScope(`library.${command.type}`, actor.accountId, key);
  const { idempotencyKey: _key, ...rest } = command;
  const fingerprint = ctx.deps.sha256(canonicalJson(rest));
  return ctx.idem.run<R, Written<A>>(
    scope,
    fingerprint,
    async () => {
      const app = await apply();
      const receiptRef = newReceiptRef(ctx.deps.ids);
      await ctx.deps.storage.commit([...app.ops, ctx.idem.recordOp(scope, { fingerprint, receiptRef, createdAt: ctx.deps.clock.now(), result: app.result })]);
      app.after?.();
      return { answer: await replay(app.result), created: true, receipt: createdReceipt(receiptRef) };
    },
    async (record: IdempotencyRecord<R>) => ({ answer: await replay(record.result), created: false, receipt: replayedReceipt(record) }),
  );
}

/** Load an item of the actor's account, or NOT_FOUND. */
export async function loadItem(ctx: LibraryContext, actor: Actor, itemId: string, what = 'Library item'): Promise<StoredRecord<ItemRecord>> {
  const stored = await ctx.deps.storage.getRecord<ItemRecord>(LibraryCollections.items, accountKey(actor.accountId, itemId));
  if (!stored) throw notFound(`${what} ${itemId}`);
  return stored;
}

/** Mint a fresh library id with `prefix` (`litm`, `lcap`, `lrep`, `lupl`). */
export function mintId(ctx: LibraryContext, prefix: 'litm' | 'lupl'): string {
  return `${prefix}_${ctx.deps.ids.hex(24)}`;
}
