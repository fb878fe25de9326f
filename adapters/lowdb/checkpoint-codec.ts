/**
 * The checkpoint file's JSON: the whole state plus the journal generation and batch sequence it
 * covers. Written as a stream of pieces so a large state never becomes one giant string.
 * @module
 */
import type { DocumentHead, StoredUpdate } from '../../src/ports.ts';
import type { CollectionView, CoreView, CoreDocumentView, StreamView } from '../core/core-view.ts';
import type { RecordEntry } from '../core/record-table.ts';
import { fromBase64, toBase64 } from './bytes-codec.ts';

/** The `format` field that marks a checkpoint file. */
export const CHECKPOINT_FORMAT = 'knowledge-workspace/lowdb-checkpoint';
/** Version 2 added index entries, streams and `nextJournal`; version 1 files are still read. */
const FORMAT_VERSION = 2;

/**
 * What a checkpoint holds.
 * @remarks `generation`: every journal with a generation <= it is folded in (and may be deleted).
 * `lastSeq`: the sequence number of the last batch folded in; replay continues at `lastSeq + 1`.
 * `nextJournal`: the journal that follows (generation + 1), created with its header before this
 * checkpoint was written, so opening can tell a journal that was deleted or emptied from one that
 * never existed; null only in version-1 checkpoints and the empty default.
 */
export interface CheckpointState {
  generation: number;
  lastSeq: number;
  nextJournal: number | null;
  view: CoreView;
}

function documentJson(doc: CoreDocumentView): string {
  const updates: string[] = new Array(doc.updateCount);
  for (let i = 0; i < doc.updateCount; i++) updates[i] = `[${doc.updates[i].version},"${toBase64(doc.updates[i].update)}"]`;
  return `{"head":${JSON.stringify(doc.head)},"snapshot":"${toBase64(doc.snapshot)}","updates":[${updates.join(',')}]}`;
}

/**
 * The checkpoint file as a sequence of text pieces, roughly one per document and per few hundred
 * records; concatenated they are one JSON document.
 */
export function* checkpointPieces(state: CheckpointState): Generator<string> {
  yield `{"format":"${CHECKPOINT_FORMAT}","formatVersion":${FORMAT_VERSION},"generation":${state.generation},"lastSeq":${state.lastSeq},"nextJournal":${state.nextJournal},\n"documents":[`;
  for (let i = 0; i < state.view.documents.length; i++) yield `${i ? ',' : ''}\n${documentJson(state.view.documents[i])}`;
  yield '],\n"collections":[';
  for (let c = 0; c < state.view.collections.length; c++) {
    const { collection, entries } = state.view.collections[c];
    yield `${c ? ',' : ''}\n{"collection":${JSON.stringify(collection)},"entries":[`;
    for (let from = 0; from < entries.length; from += 256) {
      const part = entries.slice(from, from + 256).map(([key, e]) => {
        const index = e.index === null ? '' : `,${JSON.stringify(e.index.partition)},${JSON.stringify(e.index.sortKey)}`;
        return `[${JSON.stringify(key)},${e.revision},${e.json}${index}]`;
      });
      yield `${from ? ',' : ''}${part.join(',')}`;
    }
    yield ']}';
  }
  yield '],\n"streams":[';
  for (let i = 0; i < state.view.streams.length; i++) {
    const { stream, entries, count } = state.view.streams[i];
    yield `${i ? ',' : ''}\n{"stream":${JSON.stringify(stream)},"entries":[`;
    for (let from = 0; from < count; from += 256) yield `${from ? ',' : ''}${entries.slice(from, Math.min(count, from + 256)).join(',')}`;
    yield ']}';
  }
  yield ']}\n';
}

function fail(reason: string): never {
  throw new Error(`checkpoint is not valid: ${reason}`);
}

function decodeDocument(raw: unknown): CoreDocumentView {
  const d = raw as { head?: DocumentHead; snapshot?: unknown; updates?: unknown };
  if (typeof d?.head?.documentRef !== 'string' || typeof d.head.version !== 'number') fail('document without head');
  if (!Array.isArray(d.updates)) fail(`document ${d.head.documentRef} without updates`);
  const updates: StoredUpdate[] = d.updates.map((u: unknown) => {
    if (!Array.isArray(u) || typeof u[0] !== 'number') fail(`bad update in ${d.head?.documentRef}`);
    return { version: u[0] as number, update: fromBase64(u[1]) };
  });
  // Heads written before they had a generation are of generation 0.
  const head: DocumentHead = typeof d.head.generation === 'number' ? d.head : { ...d.head, generation: 0 };
  return { head, snapshot: fromBase64(d.snapshot), updates, updateCount: updates.length };
}

function decodeCollection(raw: unknown): CollectionView {
  const c = raw as { collection?: unknown; entries?: unknown };
  if (typeof c?.collection !== 'string' || !Array.isArray(c.entries)) fail('bad collection');
  const entries = c.entries.map((e: unknown): [string, RecordEntry] => {
    const indexed = Array.isArray(e) && e.length === 5 && typeof e[3] === 'string' && typeof e[4] === 'string';
    if (!Array.isArray(e) || typeof e[0] !== 'string' || typeof e[1] !== 'number' || !(e.length === 3 || indexed)) {
      fail(`bad record in ${String(c.collection)}`);
    }
    return [e[0], { revision: e[1], json: JSON.stringify(e[2]), index: indexed ? { partition: e[3] as string, sortKey: e[4] as string } : null }];
  });
  return { collection: c.collection, entries };
}

function decodeStream(raw: unknown): StreamView {
  const s = raw as { stream?: unknown; entries?: unknown };
  if (typeof s?.stream !== 'string' || !Array.isArray(s.entries)) fail('bad stream');
  const entries = s.entries.map((value: unknown) => JSON.stringify(value));
  return { stream: s.stream, entries, count: entries.length };
}

/**
 * Parses a checkpoint file's text.
 * @throws Error when it is not a checkpoint of a known format version.
 */
export function decodeCheckpoint(text: string): CheckpointState {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    fail(`not JSON (${(error as Error).message})`);
  }
  if (raw?.format !== CHECKPOINT_FORMAT) fail('unknown format');
  if (raw.formatVersion !== FORMAT_VERSION && raw.formatVersion !== 1) fail(`format version ${String(raw.formatVersion)} is not supported`);
  if (typeof raw.generation !== 'number' || typeof raw.lastSeq !== 'number') fail('no generation or lastSeq');
  if (!Array.isArray(raw.documents) || !Array.isArray(raw.collections)) fail('no documents or collections');
  const streams = raw.formatVersion === 1 ? [] : raw.streams;
  if (!Array.isArray(streams)) fail('no streams');
  const nextJournal = raw.formatVersion === 1 ? null : raw.nextJournal;
  if (nextJournal !== null && nextJournal !== raw.generation + 1) fail(`nextJournal ${String(nextJournal)} does not follow generation ${raw.generation}`);
  return {
    generation: raw.generation,
    lastSeq: raw.lastSeq,
    nextJournal: nextJournal as number | null,
    view: { documents: raw.documents.map(decodeDocument), collections: raw.collections.map(decodeCollection), streams: streams.map(decodeStream) },
  };
}
