/**
 * The ports the engine declares. Everything concrete (storage, clock, ids) is passed in.
 *
 * The storage port speaks small typed records and bytes. Documents are event-sourced: a Yjs snapshot
 * at `snapshotVersion` plus an append-only log of updates, one per version. An append succeeds only as
 * the next version (compare-and-set), which keeps one document linear even when several processes
 * share one database. Key layout and codecs live in the engine, so adapters stay dumb.
 * @module
 */

/** The stored head of one document: everything but its content. Times are epoch milliseconds. */
export interface DocumentHead {
  documentRef: string;
  spaceRef: string;
  accountId: string;
  title: string;
  /** Current version: 1 after creation, +1 per applied mutation. */
  version: number;
  /** The version the stored snapshot is at (<= version). */
  snapshotVersion: number;
  /**
   * The generation of the document's Yjs history: 0 at creation, +1 each time the document is
   * rebuilt (a compaction that writes a snapshot with a fresh history, rebuilt from the content; see
   * {@link BatchOp} `document.compact`). An update applies only to a Y.Doc of the generation it was
   * made in: a process that holds a Y.Doc of an older generation must load the snapshot again, and a
   * live co-editing peer must drop its Y.Doc and sync again from the snapshot. The storage owns it:
   * an append must carry the stored generation, a compaction sets it.
   */
  generation: number;
  contentSha256: string;
  blockCount: number;
  createdAt: number;
  updatedAt: number;
}

/** One logged Yjs update and the version it produced. */
export interface StoredUpdate {
  version: number;
  update: Uint8Array;
}

/** The answer of {@link Storage.loadHeadAndUpdates}. */
export interface HeadAndUpdates {
  head: DocumentHead;
  updates: StoredUpdate[] | null;
}

/**
 * {@link Storage.loadHeadAndUpdates} of `storage` when it offers it, else the same from
 * `getDocumentHead` and `loadUpdates` (two reads; `updates` null when the head moved past a
 * compaction between them, as for a log that no longer reaches back).
 */
export async function loadHeadAndUpdates(storage: Storage, documentRef: string, afterVersion: number): Promise<HeadAndUpdates | null> {
  if (storage.loadHeadAndUpdates !== undefined) return storage.loadHeadAndUpdates(documentRef, afterVersion);
  const head = await storage.getDocumentHead(documentRef);
  if (head === null) return null;
  const updates = (await storage.loadUpdates(documentRef, afterVersion))?.filter((u) => u.version <= head.version) ?? null;
  // An append between the two reads is left out; a compaction between them leaves a gap: null.
  return { head, updates: updates !== null && updates.length === Math.max(0, head.version - afterVersion) ? updates : null };
}

/** A document as stored: head, snapshot, and the updates after the snapshot in ascending version. */
export interface StoredDocument {
  head: DocumentHead;
  snapshot: Uint8Array;
  updates: StoredUpdate[];
}

/** A JSON record with a storage-assigned revision (1 on insert, +1 per put). */
export interface StoredRecord<T = unknown> {
  key: string;
  value: T;
  revision: number;
}

/** Cursor position for {@link Storage.listDocumentHeads}: strictly after this (updatedAt, documentRef). */
export interface HeadCursor {
  updatedAt: number;
  documentRef: string;
}

/**
 * One operation of an atomic batch.
 * - `document.create`: fails if the document exists.
 * - `document.append`: `head.version` must be exactly the stored version + 1 and `head.generation`
 *   the stored generation; replaces the head and appends the update.
 * - `document.compact`: replaces the snapshot with one at `snapshotVersion` (<= current version) and
 *   drops logged updates at or below it. `generation` is the stored generation (the snapshot
 *   continues the same Yjs history) or the stored generation + 1 (a rebuild: a snapshot with a fresh
 *   history, allowed only at the current version, since no logged update applies to it); the stored
 *   head takes it.
 * - `record.put`: `expectedRevision` null means "must not exist", a number means "must be at that
 *   revision", absent means unconditional.
 * - `record.delete`: deletes if present; with `expectedRevision`, only at that revision.
 */
export type BatchOp =
  | { kind: 'document.create'; head: DocumentHead; snapshot: Uint8Array }
  | { kind: 'document.append'; head: DocumentHead; update: Uint8Array }
  | { kind: 'document.compact'; documentRef: string; snapshotVersion: number; generation: number; snapshot: Uint8Array }
  | { kind: 'record.put'; collection: string; key: string; value: unknown; expectedRevision?: number | null; index?: RecordIndexEntry }
  | { kind: 'record.delete'; collection: string; key: string; expectedRevision?: number }
  | { kind: 'stream.append'; stream: string; seq: number; value: unknown };

/**
 * Where a record stands in its collection's listing (see {@link Storage.listPage}). A put without
 * `index` removes the record from the listing; a put with one replaces its previous position.
 */
export interface RecordIndexEntry {
  /** The listing the record belongs to, e.g. a credential's jobs. */
  partition: string;
  /**
   * What the listing sorts by, compared as strings (newest first = largest first); ties are broken by
   * the record key, also descending. Callers encode numbers fixed-width (see {@link sortKeyOfTime}).
   */
  sortKey: string;
}

/** A fixed-width, string-sortable encoding of epoch milliseconds for {@link RecordIndexEntry.sortKey}. */
export function sortKeyOfTime(epochMs: number): string {
  return Math.max(0, Math.floor(epochMs)).toString(16).padStart(13, '0');
}

/** One page of {@link Storage.listPage}. */
export interface RecordPage<T = unknown> {
  records: StoredRecord<T>[];
  /** Opaque position after the last record of this page; null when no record follows. */
  next: string | null;
}

/** One entry of an append-only stream. */
export interface StreamEntry<T = unknown> {
  /** 1 for the first entry, +1 for each next one. */
  seq: number;
  value: T;
}

/**
 * A payload-free change notification's topic: a record, a stream or a document. Built with
 * {@link recordTopic}, {@link streamTopic} and {@link documentTopic}.
 */
export type ChangeTopic = string;

/** The topic of one record. */
export function recordTopic(collection: string, key: string): ChangeTopic {
  return `record\u0000${collection}\u0000${key}`;
}

/** The topic of one stream. */
export function streamTopic(stream: string): ChangeTopic {
  return `stream\u0000${stream}`;
}

/**
 * The topic of one document: a batch that creates, appends to or compacts it (a page that follows a
 * document live re-reads its head on each call).
 */
export function documentTopic(documentRef: string): ChangeTopic {
  return `document\u0000${documentRef}`;
}

/**
 * The values {@link freezeRecordValue} froze last. An adapter asks right when the value is
 * committed (the engine freezes a record and commits it in one synchronous step), so a short memory
 * is enough; a value it no longer recognises is copied like any other, which is always correct. A
 * WeakSet of every value ever frozen would cost an insertion and garbage-collector work per record.
 */
const RECENT_FROZEN = 16;
const recentFrozen: (object | undefined)[] = new Array<object | undefined>(RECENT_FROZEN);
let recentAt = 0;

function notJson(): TypeError {
  return new TypeError('a frozen record value must be plain JSON data (objects, arrays, strings, numbers, booleans, null)');
}

function deepFreeze(value: object): void {
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null) freezeObject(item);
      else if (typeof item === 'bigint' || typeof item === 'symbol' || typeof item === 'function') throw notJson();
    }
    return;
  }
  for (const key in value) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null) freezeObject(item);
    else if (typeof item === 'bigint' || typeof item === 'symbol' || typeof item === 'function') throw notJson();
  }
}

function freezeObject(value: object): void {
  if (!Array.isArray(value)) {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw notJson();
  }
  deepFreeze(value);
}

/**
 * Deep-freeze a record value (plain, acyclic JSON data: objects, arrays, strings, numbers, booleans,
 * null) and mark it as safe to keep by reference.
 * @remarks An adapter that holds values in memory may keep a value marked so as it is, instead of
 * copying it on {@link Storage.commit} (it can no longer change, so "mutating what you passed does not
 * change what is stored" holds by construction); reads still return copies. Adapters that serialise
 * values anyway ignore the mark. Used by the engine for idempotency records on the mutation path.
 * @returns the same value, now frozen.
 */
export function freezeRecordValue<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    freezeObject(value);
    recentFrozen[recentAt] = value;
    recentAt = (recentAt + 1) % RECENT_FROZEN;
  } else if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function') throw notJson();
  return value;
}

/**
 * True for a value that went through {@link freezeRecordValue} (in this copy of the module), among
 * the last 16 it froze: ask when the value is committed. False says "copy it", never "it may change".
 */
export function isFrozenRecordValue(value: unknown): boolean {
  return typeof value === 'object' && value !== null && recentFrozen.includes(value);
}

/**
 * Thrown (rejected) by {@link Storage.commit} when a precondition of the batch does not hold.
 * Nothing of the batch was written. Recognised by `name`.
 */
export class StorageConflictError extends Error {
  override readonly name = 'StorageConflictError';
  constructor(
    message: string,
    /** The index of the failing op in the batch. */
    readonly opIndex: number,
  ) {
    super(message);
  }
}

/** True for a {@link StorageConflictError}, also across module copies or realms. */
export function isStorageConflict(e: unknown): e is StorageConflictError {
  return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'StorageConflictError';
}

/** The storage's "cannot write for now" error: adapters throw it (defined in errors.ts, where the edge's errors live). */
export { StorageUnavailableError, isStorageUnavailable } from './errors.ts';

/** The answer of {@link Storage.takeCount}. */
export interface CountTaken {
  /** True when the use was counted; false when the window's `limit` was already reached (nothing changed). */
  taken: boolean;
  /** Uses counted in the current window after this call. */
  used: number;
}

/** The value of a counter record of {@link Storage.takeCount}. */
export interface CounterValue {
  v: 1;
  /** Start of the window `used` counts in (epoch ms). */
  windowStart: number;
  used: number;
}

/**
 * The storage port. Adapters: `memoryStorage()`, `lowdbStorage({ dir })`, `postgresStorage({ url })`.
 * @remarks
 * - `commit` is atomic (all ops or none) and durable when it resolves.
 * - Values and bytes handed in or returned are owned by the receiver afterwards: adapters copy
 *   what they keep, callers do not mutate what they get. A record value marked by
 *   {@link freezeRecordValue} is immutable, so an adapter may keep it by reference instead.
 * - Record values are JSON values (no bytes, no undefined inside).
 */
export interface Storage {
  getDocumentHead(documentRef: string): Promise<DocumentHead | null>;
  loadDocument(documentRef: string): Promise<StoredDocument | null>;
  /** Updates with version > afterVersion in ascending order; null if the log no longer reaches back that far. */
  loadUpdates(documentRef: string, afterVersion: number): Promise<StoredUpdate[] | null>;
  /**
   * Optional: the head of a document and its updates with version > afterVersion (ascending), read
   * together (one round trip on a database); `updates` is null when the log no longer reaches back
   * that far. Null when the document does not exist. A process whose cached document is behind
   * catches up with it in one read instead of two ({@link Storage.getDocumentHead}, then
   * {@link Storage.loadUpdates}).
   */
  loadHeadAndUpdates?(documentRef: string, afterVersion: number): Promise<HeadAndUpdates | null>;
  /** Heads of one account, newest `updatedAt` first (ties: documentRef descending), strictly after `after`. */
  listDocumentHeads(accountId: string, limit: number, after?: HeadCursor): Promise<DocumentHead[]>;
  getRecord<T = unknown>(collection: string, key: string): Promise<StoredRecord<T> | null>;
  /** Records of a collection whose key starts with `prefix`, in ascending key order. */
  listRecords<T = unknown>(collection: string, prefix?: string): Promise<StoredRecord<T>[]>;
  /**
   * One page of a collection's records that carry an index entry of `partition`, ordered by
   * `sortKey` descending, then key descending; strictly after `after` (a `next` of an earlier page of
   * the same collection and partition). `limit` is 1-1000.
   * @remarks A position stays usable after the record it came from moved or was deleted (the page
   * continues strictly after that (sortKey, key)). Rejects with a RangeError for a `limit` outside
   * 1-1000 and a TypeError for an `after` that is not a position `listPage` returned.
   */
  listPage<T = unknown>(collection: string, partition: string, limit: number, after?: string | null): Promise<RecordPage<T>>;
  /**
   * Entries of `stream` with seq > `afterSeq`, ascending, at most `limit` (1-1000); `[]` for an
   * unknown stream. Rejects with a RangeError for a negative or fractional `afterSeq` or a `limit`
   * outside 1-1000.
   */
  readStream<T = unknown>(stream: string, afterSeq: number, limit: number): Promise<StreamEntry<T>[]>;
  /** The seq of the last entry of `stream`; 0 when it has none. */
  streamHead(stream: string): Promise<number>;
  /**
   * Apply a batch atomically.
   * @remarks `stream.append` succeeds only when `seq` is exactly the stream's head + 1 (counting
   * earlier appends of the same batch), like a document append. After the batch is durable, every
   * listener of a touched record or stream topic is called once (without payload; it reads the store).
   */
  commit(ops: BatchOp[]): Promise<void>;
  /**
   * Call `listener` after every committed batch that touches `topic` (a record put or delete, a stream
   * append, a document create, append or compaction), in this process and — for adapters shared by several processes — in the others.
   * @returns a function that removes the listener (calling it again does nothing). Listeners must
   * not throw; one that does is ignored.
   * @remarks A listener is called at most once per batch and topic, never for a rejected batch, and
   * only once the batch is durable and readable; for one topic, calls follow commit order. In-process
   * adapters call it before `commit` resolves; adapters shared by processes may call it later.
   * Throws after `close()`.
   */
  subscribe(topic: ChangeTopic, listener: () => void): () => void;
  /** Flush and release resources (files, locks, connections). Further calls reject. */
  close(): Promise<void>;
  /**
   * True when several processes share this storage (PostgreSQL): state a process keeps in memory
   * (counters, caches) must then go through the storage to stay exact. Absent means false.
   */
  readonly sharedByProcesses?: boolean;
  /**
   * Optional: count one use of a windowed counter, atomically across every process sharing the store.
   * The counter is the record `collection`/`key`, whose value is a {@link CounterValue}. When the record
   * is absent or counts an earlier window than `windowStart`, it restarts at 0 in `windowStart` (a
   * record of a later window keeps counting in it). Then, when `used < limit`, `used` grows by 1 (the
   * record's revision too) and `taken` is true; otherwise nothing changes and `taken` is false.
   * @remarks Never more than `limit` takes succeed per window, whichever processes race. Listeners of
   * the record's topic may or may not be called. Adapters shared by processes implement it; budgets
   * use it when {@link Storage.sharedByProcesses} is true.
   */
  takeCount?(collection: string, key: string, windowStart: number, limit: number): Promise<CountTaken>;
  /**
   * Optional: hand `payload` to every listener of `channel` ({@link Storage.subscribeEphemeral}) in
   * this process and, for adapters shared by processes, in the others. Nothing is stored: delivery is
   * at most once (a message sent while nobody listens, or while a listening connection is down, is
   * gone; the listener's `onLost` is then called). Messages one process publishes on one channel,
   * each after the previous one resolved, arrive in that order. Live co-editing forwards editors'
   * traffic between processes with it (transports/sync/relay.ts).
   */
  publishEphemeral?(channel: string, payload: Uint8Array): Promise<void>;
  /**
   * Optional (with {@link Storage.publishEphemeral}): call `listener` with each payload published on
   * `channel`; `onLost` when payloads may have been lost (a listening connection dropped and is back).
   * @returns a function that removes the listener. Throws after `close()`.
   */
  subscribeEphemeral?(channel: string, listener: (payload: Uint8Array) => void, onLost?: () => void): () => void;
  /**
   * Optional, for adapters shared by processes: call `listener` with the head and the update of each
   * document append another process committed, when its change notification could carry them (an
   * update too large for one is told only to the document's topic listeners). A process keeps its
   * cached documents current with it instead of reading each one again before its next edit.
   * @remarks Best effort and after the fact: an append may be missed (a notification lost, a large
   * update) and arrives after its commit, in commit order per document; a listener applies only an
   * append that follows what it holds (version + 1, same generation) and reads the store otherwise.
   * Never called for this process's own commits. Listeners must not throw. Throws after `close()`.
   * @returns a function that removes the listener.
   */
  subscribeAppends?(listener: (head: DocumentHead, update: Uint8Array) => void): () => void;
}
