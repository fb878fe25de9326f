/**
 * The in-process storage adapter.
 * @module
 */
import type { BatchOp, Storage } from '../../src/ports.ts';
import { validateBatch } from '../core/batch-validator.ts';
import { ChangeNotifier } from '../core/change-notifier.ts';
import { EphemeralHub, ephemeralMembers } from '../core/ephemeral-hub.ts';
import { MemoryCore } from '../core/memory-core.ts';
import { prepareBatch } from '../core/prepared-op.ts';
import { takeCountByRevision } from '../core/take-count.ts';

function closedError(): Error {
  return new Error('memory storage is closed');
}

/** Runs a synchronous read as a settled promise: its value, or its throw as a rejection. */
function settle<T>(closed: boolean, read: () => T): Promise<T> {
  if (closed) return Promise.reject(closedError());
  try {
    return Promise.resolve(read());
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Creates an empty storage held in Maps of this process; nothing survives the process.
 * @remarks
 * - `commit` copies the batch (bytes with `.slice()`, record values as JSON text; a value marked by
 *   `freezeRecordValue` is immutable and kept as it is, serialised only when read), validates every op
 *   against the state plus the batch's own earlier ops, and only then applies all of them, in one
 *   synchronous step: a failing batch changes nothing and no other commit can interleave.
 * - An append is O(1) amortised; reads return fresh copies.
 * - Listings (`listPage`) are kept sorted per collection and partition on every write; a page costs
 *   O(log n + limit). Streams are arrays; `readStream` slices.
 * - `subscribe` listeners run synchronously right after the batch is applied, before `commit`'s
 *   promise settles, once per touched topic; a rejected batch notifies nobody.
 * - After `close()` every call rejects; `close()` itself is idempotent.
 * @example
 * ```ts
 * const storage = memoryStorage();
 * await storage.commit([{ kind: 'record.put', collection: 'c', key: 'k', value: 1, expectedRevision: null }]);
 * ```
 */
export function memoryStorage(): Storage {
  const core = new MemoryCore();
  const notifier = new ChangeNotifier();
  let closed = false;
  const ephemeral = new EphemeralHub();
  // Each method settles synchronously. getDocumentHead, getRecord and commit are written out (no
  // per-call closure) because the engine calls them on every mutation.
  const storage: Storage = {
    getDocumentHead(documentRef) {
      if (closed) return Promise.reject(closedError());
      return Promise.resolve(core.getDocumentHead(documentRef));
    },
    loadDocument(documentRef) {
      if (closed) return Promise.reject(closedError());
      return Promise.resolve(core.loadDocument(documentRef));
    },
    loadUpdates(documentRef, afterVersion) {
      if (closed) return Promise.reject(closedError());
      return Promise.resolve(core.loadUpdates(documentRef, afterVersion));
    },
    loadHeadAndUpdates(documentRef, afterVersion) {
      if (closed) return Promise.reject(closedError());
      return Promise.resolve(core.loadHeadAndUpdates(documentRef, afterVersion));
    },
    listDocumentHeads(accountId, limit, after) {
      if (closed) return Promise.reject(closedError());
      return Promise.resolve(core.listDocumentHeads(accountId, limit, after));
    },
    getRecord(collection, key) {
      if (closed) return Promise.reject(closedError());
      try {
        return Promise.resolve(core.getRecord(collection, key));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    listRecords: (collection, prefix) => settle(closed, () => core.listRecords(collection, prefix)),
    listPage: (collection, partition, limit, after) => settle(closed, () => core.listPage(collection, partition, limit, after)),
    readStream: (stream, afterSeq, limit) => settle(closed, () => core.readStream(stream, afterSeq, limit)),
    streamHead: (stream) => settle(closed, () => core.streamHead(stream)),
    commit(ops: BatchOp[]) {
      if (closed) return Promise.reject(closedError());
      let prepared;
      try {
        prepared = prepareBatch(ops, true);
        validateBatch(core, prepared, undefined, false);
        core.apply(prepared);
      } catch (error) {
        return Promise.reject(error);
      }
      notifier.notify(prepared);
      return Promise.resolve();
    },
    subscribe(topic, listener) {
      if (closed) throw closedError();
      return notifier.subscribe(topic, listener);
    },
    takeCount: (collection, key, windowStart, limit) => takeCountByRevision(storage, collection, key, windowStart, limit),
    ...ephemeralMembers(ephemeral, () => closed),
    close: () => {
      closed = true;
      notifier.clear();
      ephemeral.clear();
      return Promise.resolve();
    },
  };
  return storage;
}
