/**
 * Writes on existing items: highlights and notes on a source, and an item's reading state.
 * @module
 */
import type { Actor } from '../actor.ts';
import { ServiceError, invalid } from '../errors.ts';
import { isStorageConflict } from '../ports.ts';
import type { WriteReceipt } from '../idempotency/idempotency.ts';
import { idempotent, loadItem, mintId, type LibraryContext, type Written } from './context.ts';
import { currentCapture, loadSource } from './reader-page.ts';
import { accountKey, itemPutOp, jobPutOp, toLibraryItem, type ItemRecord, type LibraryItem } from './records.ts';
import { commandTarget, type CreateNoteCommand, type HighlightCommand, type RecaptureCommand, type SetReadingStateCommand } from './schemas.ts';
import { checkSelections } from './selection.ts';

type WrittenItem = Promise<{ item: LibraryItem; created: boolean; receipt: WriteReceipt | null }>;

function newItem(ctx: LibraryContext, actor: Actor, kind: 'highlight' | 'note', sourceId: string): ItemRecord {
  const now = ctx.deps.clock.now();
  return { itemId: mintId(ctx, 'litm'), accountId: actor.accountId, kind, createdAt: now, updatedAt: now, read: false, archived: false, sourceId };
}

const replayItem = (ctx: LibraryContext, actor: Actor) => async (itemId: string) => toLibraryItem(await loadItem(ctx, actor, itemId));

async function wrap(p: Promise<Written<LibraryItem>>): WrittenItem {
  const { answer, created, receipt } = await p;
  return { item: answer, created, receipt };
}

/**
 * Store a highlight of a captured source. Every selection must match the saved text exactly; one
 * miss refuses the whole highlight with a fieldError per failing selection, and nothing is stored.
 */
export function highlight(ctx: LibraryContext, actor: Actor, command: HighlightCommand): WrittenItem {
  const apply = async () => {
    const source = await loadSource(ctx, actor, command.sourceId);
    const capture = await currentCapture(ctx, source.value);
    if (!capture) {
      const state = source.value.capture?.state ?? 'pending';
      throw new ServiceError('CONFLICT', `Source ${command.sourceId} has no captured text to highlight (capture ${state}); wait for the capture or read its reason with get.`, {
        fieldErrors: [{ field: 'sourceId', message: `capture is ${state}` }],
        retryable: state === 'pending',
        requiredAction: 'refresh-resource',
      });
    }
    const errors = checkSelections(command.selections, capture);
    if (errors.length) throw invalid(`${errors.length} of ${command.selections.length} selections do not match the saved text: ${errors[0]!.field} ${errors[0]!.message}.`, errors);
    const item: ItemRecord = { ...newItem(ctx, actor, 'highlight', command.sourceId), selections: command.selections };
    return { ops: [itemPutOp(item, null)], result: item.itemId };
  };
  return wrap(idempotent(ctx, actor, command, apply, replayItem(ctx, actor)));
}

/** Store a Markdown note on a source. */
export function createNote(ctx: LibraryContext, actor: Actor, command: CreateNoteCommand): WrittenItem {
  const apply = async () => {
    await loadSource(ctx, actor, command.sourceId);
    const item: ItemRecord = { ...newItem(ctx, actor, 'note', command.sourceId), markdown: command.markdown };
    return { ops: [itemPutOp(item, null)], result: item.itemId };
  };
  return wrap(idempotent(ctx, actor, command, apply, replayItem(ctx, actor)));
}

function stale(itemId: string, expected: number, current: number): ServiceError {
  return new ServiceError('PRECONDITION_FAILED', `Item ${itemId} is at revision ${current}, not ${expected}; read it again and resend with its current revision.`, {
    fieldErrors: [{ field: 'expectedRevision', message: `is stale: the item is at revision ${current}` }],
    requiredAction: 'refresh-resource',
  });
}

/** Set read and archived on any item, guarded by its current revision (stale → PRECONDITION_FAILED, item unchanged). */
export function setReadingState(ctx: LibraryContext, actor: Actor, command: SetReadingStateCommand): WrittenItem {
  const target = commandTarget(command);
  const load = () => (target.role === 'sourceId' ? loadSource(ctx, actor, target.id) : loadItem(ctx, actor, target.id));
  const apply = async () => {
    const stored = await load();
    if (stored.revision !== command.expectedRevision) throw stale(target.id, command.expectedRevision, stored.revision);
    const now = ctx.deps.clock.now();
    const item: ItemRecord = { ...stored.value, read: command.read, archived: command.archived, updatedAt: Math.max(now, stored.value.updatedAt) };
    return { ops: [itemPutOp(item, stored.revision)], result: item.itemId };
  };
  return wrap(
    idempotent(ctx, actor, command, apply, replayItem(ctx, actor)).catch(async (e: unknown) => {
      // The item moved between the read and the commit (a capture finished): that is a stale revision too.
      if (!isStorageConflict(e)) throw e;
      const now = await load();
      throw stale(target.id, command.expectedRevision, now.revision);
    }),
  );
}

/**
 * Capture a source whose capture failed once more: the same item goes back to `pending` (revision
 * +1, reason cleared) and a fresh background capture fetches it again.
 * @remarks 409 CONFLICT on `sourceId` when the capture is not `failed` (pending, ready and partial
 * sources keep their state), and for an uploaded file (its bytes are not kept after its capture:
 * upload it again).
 */
export function recapture(ctx: LibraryContext, actor: Actor, command: RecaptureCommand): WrittenItem {
  const apply = async () => {
    const stored = await loadSource(ctx, actor, command.sourceId);
    const source = stored.value;
    const state = source.capture?.state ?? 'pending';
    if (state !== 'failed') {
      throw new ServiceError('CONFLICT', `Source ${command.sourceId} has capture ${state}; only a failed capture is taken again.`, {
        fieldErrors: [{ field: 'sourceId', message: `capture is ${state}, not failed` }],
        requiredAction: 'refresh-resource',
      });
    }
    if (source.origin === 'upload') {
      throw new ServiceError('CONFLICT', `Source ${command.sourceId} is an uploaded file; its bytes are not kept after its capture, so upload the file again.`, {
        fieldErrors: [{ field: 'sourceId', message: 'is an upload; upload the file again' }],
      });
    }
    const now = ctx.deps.clock.now();
    const item: ItemRecord = {
      ...source,
      updatedAt: Math.max(now, source.updatedAt),
      capture: { state: 'pending', reason: null, captureId: null, representationId: null, format: null, capturedAt: null },
    };
    return {
      ops: [itemPutOp(item, stored.revision), jobPutOp({ accountId: actor.accountId, itemId: item.itemId, enqueuedAt: now })],
      result: item.itemId,
      after: () => void ctx.queue.offer(accountKey(actor.accountId, item.itemId)),
    };
  };
  return wrap(idempotent(ctx, actor, command, apply, replayItem(ctx, actor)));
}
