/**
 * The in-memory state shared by the memory and lowdb adapters: documents with their logs, a
 * per-account head index, record collections with their listings, and streams.
 * @module
 */
import type { DocumentHead, HeadAndUpdates, HeadCursor, RecordPage, StoredDocument, StoredRecord, StoredUpdate, StreamEntry } from '../../src/ports.ts';
import type { FactSource } from './batch-validator.ts';
import { partitionPoint } from './binary-search.ts';
import type { CollectionView, CoreView, CoreDocumentView, StreamView } from './core-view.ts';
import { HeadIndex } from './head-index.ts';
import { decodePagePosition, encodePagePosition } from './page-position.ts';
import type { PreparedOp } from './prepared-op.ts';
import { checkAfterSeq, checkLimit } from './read-arguments.ts';
import { RecordTable } from './record-table.ts';

interface DocEntry {
  head: DocumentHead;
  snapshot: Uint8Array;
  /** Strictly ascending versions, all > head.snapshotVersion. Only pushed to or replaced. */
  updates: StoredUpdate[];
  /** The log's bytes: appended updates are views into this buffer (see {@link UpdateSlab}). */
  slab: UpdateSlab;
}

/** Smallest and largest buffer a document's log bytes are packed into. */
const SLAB_MIN = 256;
const SLAB_MAX = 16 * 1024;

/**
 * Where one document's logged updates are kept: copied into a shared buffer, each a view of its
 * bytes, instead of each in a buffer of its own.
 * @remarks A buffer per small update (tens of bytes) costs the garbage collector far more than its
 * bytes: an ArrayBuffer, its backing store and its tracking, for every mutation kept. Buffers double
 * from {@link SLAB_MIN} to {@link SLAB_MAX} as the document's log grows (and start small again after
 * a compaction), so the buffers of a log hold at most about twice its bytes; an update over a
 * quarter of the largest size gets a buffer of its own. Written bytes are never changed.
 */
class UpdateSlab {
  private buffer: Uint8Array | null = null;
  private used = 0;
  private size = SLAB_MIN;

  /** A copy of `bytes` that shares a buffer with the neighbouring updates. */
  keep(bytes: Uint8Array): Uint8Array {
    const n = bytes.byteLength;
    if (n > SLAB_MAX >>> 2) return bytes.slice();
    let buffer = this.buffer;
    if (buffer === null || this.used + n > buffer.byteLength) {
      if (buffer !== null && this.size < SLAB_MAX) this.size *= 2;
      buffer = this.buffer = new Uint8Array(Math.max(this.size, n));
      this.used = 0;
    }
    const at = this.used;
    buffer.set(bytes, at);
    this.used = at + n;
    return new Uint8Array(buffer.buffer, at, n);
  }

  /**
   * Start a new, small buffer with the next update (the log was compacted: the current buffer may be
   * released, and a quiet document does not keep a large one for its next few updates).
   */
  release(): void {
    this.buffer = null;
    this.used = 0;
    this.size = SLAB_MIN;
  }
}

/** Index of the first update with version > `version` (binary search; versions ascend). */
function firstAfter(updates: readonly StoredUpdate[], version: number): number {
  return partitionPoint(updates, (u) => u.version > version);
}

function copyUpdates(updates: readonly StoredUpdate[], from: number, to: number): StoredUpdate[] {
  const out: StoredUpdate[] = new Array(to - from);
  for (let i = from; i < to; i++) out[i - from] = { version: updates[i].version, update: updates[i].update.slice() };
  return out;
}

/**
 * Documents and records held in Maps, read with copies and written by {@link apply}.
 * @remarks
 * - `apply` trusts its ops: run {@link validateBatch} first (against this core and anything queued).
 * - Stored heads, snapshots, update bytes and record entries are never mutated in place, so a
 *   {@link CoreView} taken by {@link view} stays valid while later batches are applied.
 * - An append is O(1) amortised: it replaces the head object and pushes to the log.
 * - The stored `snapshotVersion` belongs to the storage: an append keeps it whatever the head says.
 */
export class MemoryCore implements FactSource {
  private readonly docs = new Map<string, DocEntry>();
  private readonly heads = new HeadIndex<DocEntry>();
  private readonly tables = new Map<string, RecordTable>();
  /** Each stream's entries as JSON text; entry seq n is at n - 1. Only pushed to. */
  private readonly streams = new Map<string, string[]>();

  /** {@link FactSource}: the current head (which carries version, snapshotVersion and generation), or null. */
  doc(documentRef: string): DocumentHead | null {
    return this.docs.get(documentRef)?.head ?? null;
  }

  /** {@link FactSource}: the record's revision, 0 when absent. */
  recordRevision(collection: string, key: string): number {
    return this.tables.get(collection)?.get(key)?.revision ?? 0;
  }

  /** {@link FactSource}: the seq of the stream's last entry, 0 when it has none. */
  streamHead(stream: string): number {
    return this.streams.get(stream)?.length ?? 0;
  }

  /** A copy of the head, or null. */
  getDocumentHead(documentRef: string): DocumentHead | null {
    const entry = this.docs.get(documentRef);
    return entry === undefined ? null : { ...entry.head };
  }

  /** Head, snapshot and log, all copied; null when absent. */
  loadDocument(documentRef: string): StoredDocument | null {
    const entry = this.docs.get(documentRef);
    if (entry === undefined) return null;
    return { head: { ...entry.head }, snapshot: entry.snapshot.slice(), updates: copyUpdates(entry.updates, 0, entry.updates.length) };
  }

  /** Copies of the updates after `afterVersion`; null when absent or compacted beyond it. */
  loadUpdates(documentRef: string, afterVersion: number): StoredUpdate[] | null {
    const entry = this.docs.get(documentRef);
    if (entry === undefined || afterVersion < entry.head.snapshotVersion) return null;
    return copyUpdates(entry.updates, firstAfter(entry.updates, afterVersion), entry.updates.length);
  }

  /** A copy of the head and copies of the updates after `afterVersion` (null: compacted beyond); null when absent. */
  loadHeadAndUpdates(documentRef: string, afterVersion: number): HeadAndUpdates | null {
    const head = this.getDocumentHead(documentRef);
    return head === null ? null : { head, updates: this.loadUpdates(documentRef, afterVersion) };
  }

  /** Copies of one account's heads, newest first, strictly after `after`. */
  listDocumentHeads(accountId: string, limit: number, after?: HeadCursor): DocumentHead[] {
    return this.heads.list(accountId, limit, after).map((entry) => ({ ...entry.head }));
  }

  /** The record with a freshly parsed value, or null. */
  getRecord<T>(collection: string, key: string): StoredRecord<T> | null {
    const entry = this.tables.get(collection)?.get(key);
    return entry === undefined ? null : { key, value: JSON.parse(entry.json) as T, revision: entry.revision };
  }

  /** Records of a collection whose key starts with `prefix`, ascending by key, values freshly parsed. */
  listRecords<T>(collection: string, prefix = ''): StoredRecord<T>[] {
    const table = this.tables.get(collection);
    if (table === undefined) return [];
    return table.list(prefix).map(([key, entry]) => ({ key, value: JSON.parse(entry.json) as T, revision: entry.revision }));
  }

  /** One page of a collection's listing `partition` (see `Storage.listPage`), values freshly parsed. */
  listPage<T>(collection: string, partition: string, limit: number, after?: string | null): RecordPage<T> {
    checkLimit('listPage', limit);
    const position = after === undefined || after === null ? null : decodePagePosition(after);
    const table = this.tables.get(collection);
    if (table === undefined) return { records: [], next: null };
    // One extra entry tells whether a next page exists.
    const entries = table.page(partition, limit + 1, position);
    const more = entries.length > limit;
    if (more) entries.pop();
    const records = entries.map(({ position, entry }) => ({ key: position.key, value: JSON.parse(entry.json) as T, revision: entry.revision }));
    const next = more ? encodePagePosition(entries[entries.length - 1].position) : null;
    return { records, next };
  }

  /** Entries of `stream` after `afterSeq`, ascending, at most `limit`, values freshly parsed. */
  readStream<T>(stream: string, afterSeq: number, limit: number): StreamEntry<T>[] {
    checkAfterSeq(afterSeq);
    checkLimit('readStream', limit);
    const entries = this.streams.get(stream);
    if (entries === undefined) return [];
    const end = Math.min(entries.length, afterSeq + limit);
    const out: StreamEntry<T>[] = [];
    for (let i = afterSeq; i < end; i++) out.push({ seq: i + 1, value: JSON.parse(entries[i]) as T });
    return out;
  }

  /**
   * Applies validated, storage-owned ops in order. Takes ownership of their heads and snapshots;
   * appended update bytes are copied into the document's log (see {@link UpdateSlab}).
   */
  apply(ops: readonly PreparedOp[]): void {
    for (const op of ops) {
      switch (op.kind) {
        case 'document.create': {
          const entry: DocEntry = { head: op.head, snapshot: op.snapshot, updates: [], slab: new UpdateSlab() };
          this.docs.set(op.head.documentRef, entry);
          this.heads.add(entry);
          break;
        }
        case 'document.append': {
          const entry = this.docs.get(op.head.documentRef) as DocEntry;
          const previous = entry.head;
          const head = op.head;
          head.snapshotVersion = previous.snapshotVersion;
          entry.head = head;
          entry.updates.push({ version: head.version, update: entry.slab.keep(op.update) });
          if (head.accountId !== previous.accountId) {
            this.heads.remove(entry, previous.accountId);
            this.heads.add(entry);
          } else if (head.updatedAt !== previous.updatedAt) {
            this.heads.touch(head.accountId);
          }
          break;
        }
        case 'document.compact': {
          const entry = this.docs.get(op.documentRef) as DocEntry;
          entry.updates = entry.updates.slice(firstAfter(entry.updates, op.snapshotVersion));
          entry.slab.release();
          entry.snapshot = op.snapshot;
          entry.head = { ...entry.head, snapshotVersion: op.snapshotVersion, generation: op.generation };
          break;
        }
        case 'record.put': {
          let table = this.tables.get(op.collection);
          if (table === undefined) {
            table = new RecordTable();
            this.tables.set(op.collection, table);
          }
          table.put(op.key, op.json, op.value, op.index);
          break;
        }
        case 'record.delete':
          this.tables.get(op.collection)?.delete(op.key);
          break;
        case 'stream.append': {
          const entries = this.streams.get(op.stream);
          if (entries === undefined) this.streams.set(op.stream, [op.json]);
          else entries.push(op.json);
          break;
        }
      }
    }
  }

  /** A point-in-time view of everything, for a checkpoint (see {@link CoreView}). */
  view(): CoreView {
    const documents: CoreDocumentView[] = [];
    for (const entry of this.docs.values()) {
      documents.push({ head: entry.head, snapshot: entry.snapshot, updates: entry.updates, updateCount: entry.updates.length });
    }
    const collections: CollectionView[] = [];
    for (const [collection, table] of this.tables) {
      if (table.size > 0) collections.push({ collection, entries: table.snapshot() });
    }
    const streams: StreamView[] = [];
    for (const [stream, entries] of this.streams) streams.push({ stream, entries, count: entries.length });
    return { documents, collections, streams };
  }

  /**
   * Builds a core holding exactly what `view` holds (loading a checkpoint).
   * @remarks Takes ownership of the view's objects; the caller must not use them afterwards.
   */
  static fromView(view: CoreView): MemoryCore {
    const core = new MemoryCore();
    for (const doc of view.documents) {
      const updates = doc.updates.length === doc.updateCount ? (doc.updates as StoredUpdate[]) : doc.updates.slice(0, doc.updateCount);
      const entry: DocEntry = { head: doc.head, snapshot: doc.snapshot, updates, slab: new UpdateSlab() };
      core.docs.set(doc.head.documentRef, entry);
      core.heads.add(entry);
    }
    for (const { collection, entries } of view.collections) {
      const table = new RecordTable();
      for (const [key, entry] of entries) table.load(key, entry);
      core.tables.set(collection, table);
    }
    for (const { stream, entries, count } of view.streams) {
      core.streams.set(stream, entries.length === count ? (entries as string[]) : entries.slice(0, count));
    }
    return core;
  }
}
