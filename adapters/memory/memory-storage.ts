/**
 * The in-process storage adapter.
 * @module
 */
import type { BatchOp, Storage } from '../../src/ports.ts';
import { validateBatch } from './batch-validator.ts';
import { MemoryCore } from './memory-core.ts';
import { prepareBatch } from './prepared-op.ts';

function closedError(): Error {
  return new Error('memory storage is closed');
}

/**
 * Creates an empty storage held in Maps of this process; nothing survives the process.
 * @remarks
 * - `commit` copies the batch (bytes with `.slice()`, record values as JSON text), validates every op
 *   against the state plus the batch's own earlier ops, and only then applies all of them, in one
 *   synchronous step: a failing batch changes nothing and no other commit can interleave.
 * - An append is O(1) amortised; reads return fresh copies.
 * - After `close()` every call rejects; `close()` itself is idempotent.
 * @example
 * ```ts
 * const storage = memoryStorage();
 * await storage.commit([{ kind: 'record.put', collection: 'c', key: 'k', value: 1, expectedRevision: null }]);
 * ```
 */
export function memoryStorage(): Storage {
  const core = new MemoryCore();
  let closed = false;

  function run<T>(read: () => T): Promise<T> {
    if (closed) return Promise.reject(closedError());
    try {
      return Promise.resolve(read());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  return {
    getDocumentHead: (documentRef) => run(() => core.getDocumentHead(documentRef)),
    loadDocument: (documentRef) => run(() => core.loadDocument(documentRef)),
    loadUpdates: (documentRef, afterVersion) => run(() => core.loadUpdates(documentRef, afterVersion)),
    listDocumentHeads: (accountId, limit, after) => run(() => core.listDocumentHeads(accountId, limit, after)),
    getRecord: (collection, key) => run(() => core.getRecord(collection, key)),
    listRecords: (collection, prefix) => run(() => core.listRecords(collection, prefix)),
    commit: (ops: BatchOp[]) =>
      run(() => {
        const prepared = prepareBatch(ops);
        validateBatch(core, prepared);
        core.apply(prepared);
      }),
    close: () => {
      closed = true;
      return Promise.resolve();
    },
  };
}
