/**
 * The reader page of a source: its captured readable text as blocks, with every identifier and
 * offset a client needs to build a highlight selection.
 * @module
 */
import type { ReaderPage } from './result-schemas.ts';
import type { Actor } from '../actor.ts';
import { invalid } from '../errors.ts';
import type { StoredRecord } from '../ports.ts';
import { loadItem, type LibraryContext } from './context.ts';
import { LibraryCollections, accountKey, toLibraryItem, type CaptureRecord, type ItemRecord } from './records.ts';
import { codePointLength } from './schemas.ts';

export type { ReaderBlock, ReaderPage } from './result-schemas.ts';

/** Load a source item (not a highlight or note), or refuse naming the field. */
export async function loadSource(ctx: LibraryContext, actor: Actor, sourceId: string): Promise<StoredRecord<ItemRecord>> {
  const stored = await loadItem(ctx, actor, sourceId, 'Library source');
  if (stored.value.kind !== 'source') {
    throw invalid(`Item ${sourceId} is a ${stored.value.kind}, not a source; pass the itemId of a saved link or upload.`, [
      { field: 'sourceId', message: `names a ${stored.value.kind}, not a source` },
    ]);
  }
  return stored;
}

/** The current capture of a source, or null while there is none. */
export async function currentCapture(ctx: LibraryContext, source: ItemRecord): Promise<CaptureRecord | null> {
  const id = source.capture?.captureId;
  if (!id) return null;
  const stored = await ctx.deps.storage.getRecord<CaptureRecord>(LibraryCollections.captures, accountKey(source.accountId, id));
  return stored?.value ?? null;
}

/** Build the reader page of `sourceId`. */
export async function readerPage(ctx: LibraryContext, actor: Actor, sourceId: string): Promise<ReaderPage> {
  const stored = await loadSource(ctx, actor, sourceId);
  const capture = await currentCapture(ctx, stored.value);
  return {
    source: toLibraryItem(stored),
    capture: capture && {
      captureId: capture.captureId,
      representationId: capture.representationId,
      format: capture.format,
      url: capture.url,
      title: capture.title,
      byline: capture.byline,
      blocks: capture.blocks.map((b) => ({ blockId: b.blockId, text: b.text, length: codePointLength(b.text) })),
    },
  };
}
