/**
 * Batch ops in the form the in-memory core keeps them: bytes copied, heads copied field by field,
 * record values serialised to JSON text once.
 * @module
 */
import { isFrozenRecordValue, type BatchOp, type DocumentHead, type RecordIndexEntry } from '../../src/ports.ts';

/**
 * A {@link BatchOp} after {@link prepareBatch}: owned by the storage, safe to keep and to journal.
 * @remarks `record.put` carries the value as JSON text (`json`), which doubles as its deep copy and as
 * its serialised form in a journal; readers get a fresh `JSON.parse` of it each time. Only when
 * {@link prepareBatch} prepares for an in-place apply, a value marked by `freezeRecordValue` is
 * carried as is in `value`, with `json` null (see {@link putJson}), and an append carries the
 * caller's bytes (the core copies them as it applies the batch).
 */
export type PreparedOp =
  | { kind: 'document.create'; head: DocumentHead; snapshot: Uint8Array }
  | { kind: 'document.append'; head: DocumentHead; update: Uint8Array }
  | { kind: 'document.compact'; documentRef: string; snapshotVersion: number; generation: number; snapshot: Uint8Array }
  | {
      kind: 'record.put';
      collection: string;
      key: string;
      json: string | null;
      value?: unknown;
      expectedRevision?: number | null;
      index: RecordIndexEntry | null;
    }
  | { kind: 'record.delete'; collection: string; key: string; expectedRevision?: number }
  | { kind: 'stream.append'; stream: string; seq: number; json: string };

/**
 * Copies the fields of a {@link DocumentHead} (and nothing else) into a fresh object.
 * @remarks Extra properties a caller may have attached are dropped, so what is stored is exactly the
 * port's shape and serialises identically in every adapter.
 */
export function copyHead(head: DocumentHead): DocumentHead {
  return {
    documentRef: head.documentRef,
    spaceRef: head.spaceRef,
    accountId: head.accountId,
    title: head.title,
    version: head.version,
    snapshotVersion: head.snapshotVersion,
    generation: head.generation,
    contentSha256: head.contentSha256,
    blockCount: head.blockCount,
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
  };
}

function checkBytes(bytes: Uint8Array, what: string): Uint8Array {
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${what} must be a Uint8Array`);
  return bytes;
}

function copyBytes(bytes: Uint8Array, what: string): Uint8Array {
  return checkBytes(bytes, what).slice();
}

function toJson(value: unknown, what: string): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError(`${what}: value must be a JSON value`);
  return json;
}

/** The index entry in storage-owned form: a frozen entry as it is (it cannot change), else a copy. */
function copyIndex(index: RecordIndexEntry | undefined, collection: string, key: string): RecordIndexEntry | null {
  if (index === undefined) return null;
  if (typeof index !== 'object' || index === null || typeof index.partition !== 'string' || typeof index.sortKey !== 'string') {
    throw new TypeError(`record ${collection}/${key}: index must be { partition: string, sortKey: string }`);
  }
  if (Object.isFrozen(index)) return index;
  return { partition: index.partition, sortKey: index.sortKey };
}

/** The JSON text of a prepared `record.put` (serialising a value kept frozen). */
export function putJson(op: Extract<PreparedOp, { kind: 'record.put' }>): string {
  return op.json ?? JSON.stringify(op.value);
}

/**
 * Copies every op of a batch into storage-owned form.
 * @param inPlace the batch goes to a `MemoryCore.apply` within the same synchronous call
 * (the memory adapter): record values marked by `freezeRecordValue` are kept by reference instead of
 * serialised (`json` null), and appended update bytes are checked but not copied here (the core
 * copies them into its log as it applies them, before the caller can change them).
 * @throws TypeError for an unknown op kind, bytes that are not a Uint8Array, or a record value that
 * is not JSON-serialisable. Nothing is validated against stored state here.
 */
export function prepareBatch(ops: readonly BatchOp[], inPlace = false): PreparedOp[] {
  if (!Array.isArray(ops)) throw new TypeError('commit expects an array of ops');
  const out: PreparedOp[] = new Array(ops.length);
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    switch (op.kind) {
      case 'document.create':
        out[i] = { kind: op.kind, head: copyHead(op.head), snapshot: copyBytes(op.snapshot, 'snapshot') };
        break;
      case 'document.append':
        out[i] = { kind: op.kind, head: copyHead(op.head), update: inPlace ? checkBytes(op.update, 'update') : copyBytes(op.update, 'update') };
        break;
      case 'document.compact':
        out[i] = {
          kind: op.kind,
          documentRef: op.documentRef,
          snapshotVersion: op.snapshotVersion,
          generation: op.generation,
          snapshot: copyBytes(op.snapshot, 'snapshot'),
        };
        break;
      case 'record.put': {
        const index = copyIndex(op.index, op.collection, op.key);
        const put: PreparedOp =
          inPlace && isFrozenRecordValue(op.value)
            ? { kind: op.kind, collection: op.collection, key: op.key, json: null, value: op.value, index }
            : { kind: op.kind, collection: op.collection, key: op.key, json: toJson(op.value, `record ${op.collection}/${op.key}`), index };
        if (op.expectedRevision !== undefined) put.expectedRevision = op.expectedRevision;
        out[i] = put;
        break;
      }
      case 'record.delete': {
        const del: PreparedOp = { kind: op.kind, collection: op.collection, key: op.key };
        if (op.expectedRevision !== undefined) del.expectedRevision = op.expectedRevision;
        out[i] = del;
        break;
      }
      case 'stream.append':
        if (typeof op.stream !== 'string') throw new TypeError(`stream.append at index ${i}: stream must be a string`);
        out[i] = { kind: op.kind, stream: op.stream, seq: op.seq, json: toJson(op.value, `stream ${op.stream} entry ${op.seq}`) };
        break;
      default:
        throw new TypeError(`unknown batch op kind ${JSON.stringify((op as { kind?: unknown }).kind)} at index ${i}`);
    }
  }
  return out;
}
