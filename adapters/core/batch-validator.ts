/**
 * Checks every precondition of a batch before anything is applied: the half of "atomic or nothing"
 * that decides. Ops see the effects of earlier ops of the same batch (and, for a journaling adapter,
 * of batches queued before it).
 * @module
 */
import { StorageConflictError } from '../../src/ports.ts';
import type { PreparedOp } from './prepared-op.ts';

/** What validation needs to know about a document: its version, its snapshot's version and its history generation. */
export interface DocFacts {
  readonly version: number;
  readonly snapshotVersion: number;
  readonly generation: number;
}

/**
 * A source of facts to validate against.
 * @remarks `doc` returns null for "does not exist"; `recordRevision` returns 0 for "does not exist".
 * A layered source (see {@link validateBatch}'s `pending`) returns `undefined` for "no opinion, ask
 * the layer below".
 */
export interface FactSource {
  doc(documentRef: string): DocFacts | null | undefined;
  recordRevision(collection: string, key: string): number | undefined;
  /** The seq of the stream's last entry (0 when it has none). */
  streamHead(stream: string): number | undefined;
}

/** The unambiguous id of a record across collections (a length prefix keeps `a`+`bc` apart from `ab`+`c`). */
export function recordId(collection: string, key: string): string {
  return `${collection.length}:${collection}${key}`;
}

/**
 * What a validated batch will leave behind, per touched document and record.
 * @remarks Documents map to null when absent, records to revision 0 when absent, streams to the
 * seq of their last entry. A map is only created when the batch touches its kind (the commit path of
 * the memory adapter validates a 2-op batch per mutation).
 */
export class BatchEffects {
  private docMap: Map<string, DocFacts | null> | null = null;
  private recordMap: Map<string, number> | null = null;
  private streamMap: Map<string, number> | null = null;

  /** Facts of each document the batch creates, appends to or compacts. */
  get docs(): ReadonlyMap<string, DocFacts | null> {
    return this.docMap ?? EMPTY;
  }

  /** Revision of each record the batch puts or deletes, by {@link recordId}. */
  get records(): ReadonlyMap<string, number> {
    return this.recordMap ?? EMPTY;
  }

  /** Seq of the last entry of each stream the batch appends to. */
  get streams(): ReadonlyMap<string, number> {
    return this.streamMap ?? EMPTY;
  }

  /** Records what the batch leaves of a document. */
  setDoc(ref: string, facts: DocFacts | null): void {
    (this.docMap ??= new Map()).set(ref, facts);
  }

  /** Records what the batch leaves of a record (0: deleted). */
  setRecord(id: string, revision: number): void {
    (this.recordMap ??= new Map()).set(id, revision);
  }

  /** Records the seq of a stream's last entry after the batch. */
  setStream(stream: string, seq: number): void {
    (this.streamMap ??= new Map()).set(stream, seq);
  }

  /** The facts of `ref` after the ops seen so far, or undefined when none touched it. */
  doc(ref: string): DocFacts | null | undefined {
    return this.docMap?.get(ref);
  }

  /** The revision of a record after the ops seen so far, or undefined when none touched it. */
  recordRevision(collection: string, key: string): number | undefined {
    return this.recordMap === null ? undefined : this.recordMap.get(recordId(collection, key));
  }

  /** The stream's last seq after the ops seen so far, or undefined when none appended to it. */
  streamHead(stream: string): number | undefined {
    return this.streamMap?.get(stream);
  }
}

const EMPTY: ReadonlyMap<string, never> = new Map<string, never>();

function conflict(index: number, op: PreparedOp, reason: string): StorageConflictError {
  return new StorageConflictError(`batch op ${index} (${op.kind}): ${reason}`, index);
}

/** A document's facts as the batch sees them: its own earlier ops, then `pending`, then `committed`. */
function docOf(fx: BatchEffects, committed: FactSource, pending: FactSource | undefined, ref: string): DocFacts | null {
  const own = fx.doc(ref);
  if (own !== undefined) return own;
  const queued = pending?.doc(ref);
  if (queued !== undefined) return queued;
  return committed.doc(ref) ?? null;
}

/** A record's revision as the batch sees it (0: absent). */
function revisionOf(fx: BatchEffects, committed: FactSource, pending: FactSource | undefined, collection: string, key: string): number {
  const own = fx.recordRevision(collection, key);
  if (own !== undefined) return own;
  const queued = pending?.recordRevision(collection, key);
  if (queued !== undefined) return queued;
  return committed.recordRevision(collection, key) ?? 0;
}

/** A stream's last seq as the batch sees it (0: no entries). */
function streamHeadOf(fx: BatchEffects, committed: FactSource, pending: FactSource | undefined, stream: string): number {
  const own = fx.streamHead(stream);
  if (own !== undefined) return own;
  const queued = pending?.streamHead(stream);
  if (queued !== undefined) return queued;
  return committed.streamHead(stream) ?? 0;
}

/**
 * Validates `ops` in order against `committed`, optionally layered under `pending` (the projected
 * effects of batches accepted but not yet applied).
 * @param collect record the effect of the last op too (a caller that only checks, and never reads
 * the effects, passes false: no later op of the batch needs it).
 * @returns the batch's effects, for a journaling adapter to fold into its pending projection.
 * @throws StorageConflictError naming the first failing op; nothing has been changed anywhere.
 * @remarks Semantics (the conformance suite pins them): create needs an absent document; append needs
 * `head.version === version + 1` and `head.generation === generation`; compact needs
 * `snapshotVersion <= snapshotVersion' <= version` with `generation' === generation`, or
 * `snapshotVersion' === version` with `generation' === generation + 1` (a rebuild); put
 * with `expectedRevision` null needs an absent record, with a number needs exactly that revision;
 * delete with a number needs exactly that revision, without one always succeeds; a stream append
 * needs `seq === head + 1`.
 */
export function validateBatch(committed: FactSource, ops: readonly PreparedOp[], pending?: FactSource, collect = true): BatchEffects {
  const fx = new BatchEffects();
  const last = ops.length - 1;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    const keep = collect || i < last;
    switch (op.kind) {
      case 'document.create': {
        const ref = op.head.documentRef;
        if (docOf(fx, committed, pending, ref) !== null) throw conflict(i, op, `document ${ref} already exists`);
        if (keep) fx.setDoc(ref, { version: op.head.version, snapshotVersion: op.head.snapshotVersion, generation: op.head.generation });
        break;
      }
      case 'document.append': {
        const ref = op.head.documentRef;
        const doc = docOf(fx, committed, pending, ref);
        if (doc === null) throw conflict(i, op, `document ${ref} does not exist`);
        if (op.head.version !== doc.version + 1) {
          throw conflict(i, op, `document ${ref} is at version ${doc.version}; an append must carry ${doc.version + 1}, got ${op.head.version}`);
        }
        if (op.head.generation !== doc.generation) {
          throw conflict(i, op, `document ${ref} is at generation ${doc.generation}; an append must carry it, got ${op.head.generation}`);
        }
        if (keep) fx.setDoc(ref, { version: op.head.version, snapshotVersion: doc.snapshotVersion, generation: doc.generation });
        break;
      }
      case 'document.compact': {
        const ref = op.documentRef;
        const doc = docOf(fx, committed, pending, ref);
        if (doc === null) throw conflict(i, op, `document ${ref} does not exist`);
        if (!(op.snapshotVersion >= doc.snapshotVersion && op.snapshotVersion <= doc.version)) {
          throw conflict(
            i,
            op,
            `document ${ref}: snapshotVersion ${op.snapshotVersion} is outside ${doc.snapshotVersion}..${doc.version}`,
          );
        }
        const rebuild = op.generation === doc.generation + 1;
        if (op.generation !== doc.generation && !rebuild) {
          throw conflict(i, op, `document ${ref} is at generation ${doc.generation}; a compaction must carry it (or ${doc.generation + 1} for a rebuild), got ${op.generation}`);
        }
        if (rebuild && op.snapshotVersion !== doc.version) {
          throw conflict(i, op, `document ${ref}: a rebuild (generation ${op.generation}) must be at the current version ${doc.version}, got ${op.snapshotVersion}`);
        }
        if (keep) fx.setDoc(ref, { version: doc.version, snapshotVersion: op.snapshotVersion, generation: op.generation });
        break;
      }
      case 'record.put': {
        const revision = revisionOf(fx, committed, pending, op.collection, op.key);
        const expected = op.expectedRevision;
        if (expected === null && revision !== 0) {
          throw conflict(i, op, `record ${op.collection}/${op.key} exists (revision ${revision})`);
        }
        if (typeof expected === 'number' && (revision === 0 || revision !== expected)) {
          throw conflict(i, op, `record ${op.collection}/${op.key} is at revision ${revision || 'absent'}, expected ${expected}`);
        }
        if (keep) fx.setRecord(recordId(op.collection, op.key), revision + 1);
        break;
      }
      case 'record.delete': {
        const revision = revisionOf(fx, committed, pending, op.collection, op.key);
        const expected = op.expectedRevision;
        if (typeof expected === 'number' && (revision === 0 || revision !== expected)) {
          throw conflict(i, op, `record ${op.collection}/${op.key} is at revision ${revision || 'absent'}, expected ${expected}`);
        }
        if (keep) fx.setRecord(recordId(op.collection, op.key), 0);
        break;
      }
      case 'stream.append': {
        const head = streamHeadOf(fx, committed, pending, op.stream);
        if (op.seq !== head + 1) throw conflict(i, op, `stream ${op.stream} is at seq ${head}; an append must carry ${head + 1}, got ${op.seq}`);
        if (keep) fx.setStream(op.stream, op.seq);
        break;
      }
    }
  }
  return fx;
}
