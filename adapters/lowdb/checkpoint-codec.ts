/**
 * The checkpoint file's JSON: the whole state plus the journal generation and batch sequence it
 * covers. Written as a stream of pieces so a large state never becomes one giant string.
 * @module
 */
import type { DocumentHead, StoredUpdate } from '../../src/ports.ts';
import type { CollectionView, CoreView, DocumentView } from '../core/core-view.ts';
import type { RecordEntry } from '../core/record-table.ts';
import { fromBase64, toBase64 } from './bytes-codec.ts';

/** The `format` field that marks a checkpoint file. */
export const CHECKPOINT_FORMAT = 'knowledge-workspace/lowdb-checkpoint';
const FORMAT_VERSION = 1;

/**
 * What a checkpoint holds.
 * @remarks `generation`: every journal with a generation <= it is folded in (and may be deleted).
 * `lastSeq`: the sequence number of the last batch folded in; replay continues at `lastSeq + 1`.
 */
export interface CheckpointState {
  generation: number;
  lastSeq: number;
  view: CoreView;
}

function documentJson(doc: DocumentView): string {
  const updates: string[] = new Array(doc.updateCount);
  for (let i = 0; i < doc.updateCount; i++) updates[i] = `[${doc.updates[i].version},"${toBase64(doc.updates[i].update)}"]`;
  return `{"head":${JSON.stringify(doc.head)},"snapshot":"${toBase64(doc.snapshot)}","updates":[${updates.join(',')}]}`;
}

/**
 * The checkpoint file as a sequence of text pieces, roughly one per document and per few hundred
 * records; concatenated they are one JSON document.
 */
export function* checkpointPieces(state: CheckpointState): Generator<string> {
  yield `{"format":"${CHECKPOINT_FORMAT}","formatVersion":${FORMAT_VERSION},"generation":${state.generation},"lastSeq":${state.lastSeq},\n"documents":[`;
  for (let i = 0; i < state.view.documents.length; i++) yield `${i ? ',' : ''}\n${documentJson(state.view.documents[i])}`;
  yield '],\n"collections":[';
  for (let c = 0; c < state.view.collections.length; c++) {
    const { collection, entries } = state.view.collections[c];
    yield `${c ? ',' : ''}\n{"collection":${JSON.stringify(collection)},"entries":[`;
    for (let from = 0; from < entries.length; from += 256) {
      const part = entries.slice(from, from + 256).map(([key, e]) => `[${JSON.stringify(key)},${e.revision},${e.json}]`);
      yield `${from ? ',' : ''}${part.join(',')}`;
    }
    yield ']}';
  }
  yield ']}\n';
}

function fail(reason: string): never {
  throw new Error(`checkpoint is not valid: ${reason}`);
}

function decodeDocument(raw: unknown): DocumentView {
  const d = raw as { head?: DocumentHead; snapshot?: unknown; updates?: unknown };
  if (typeof d?.head?.documentRef !== 'string' || typeof d.head.version !== 'number') fail('document without head');
  if (!Array.isArray(d.updates)) fail(`document ${d.head.documentRef} without updates`);
  const updates: StoredUpdate[] = d.updates.map((u: unknown) => {
    if (!Array.isArray(u) || typeof u[0] !== 'number') fail(`bad update in ${d.head?.documentRef}`);
    return { version: u[0] as number, update: fromBase64(u[1]) };
  });
  return { head: d.head, snapshot: fromBase64(d.snapshot), updates, updateCount: updates.length };
}

function decodeCollection(raw: unknown): CollectionView {
  const c = raw as { collection?: unknown; entries?: unknown };
  if (typeof c?.collection !== 'string' || !Array.isArray(c.entries)) fail('bad collection');
  const entries = c.entries.map((e: unknown): [string, RecordEntry] => {
    if (!Array.isArray(e) || typeof e[0] !== 'string' || typeof e[1] !== 'number' || e.length !== 3) fail(`bad record in ${String(c.collection)}`);
    return [e[0], { revision: e[1], json: JSON.stringify(e[2]) }];
  });
  return { collection: c.collection, entries };
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
  if (raw.formatVersion !== FORMAT_VERSION) fail(`format version ${String(raw.formatVersion)} is not supported`);
  if (typeof raw.generation !== 'number' || typeof raw.lastSeq !== 'number') fail('no generation or lastSeq');
  if (!Array.isArray(raw.documents) || !Array.isArray(raw.collections)) fail('no documents or collections');
  return {
    generation: raw.generation,
    lastSeq: raw.lastSeq,
    view: { documents: raw.documents.map(decodeDocument), collections: raw.collections.map(decodeCollection) },
  };
}
