/**
 * Folded history: the stretch of a document's log that a compaction folds into the new snapshot,
 * kept (with the snapshot it started from) for as long as a receipt of one of its versions replays,
 * so that the hash of any such version can still be derived when first asked for.
 * @module
 */
import type { Clock } from '../clock.ts';
import type { ErrorReporter } from '../deps.ts';
import { ExpirySweeper, expiryIndex } from '../idempotency/sweep.ts';
import { decodeBase64, encodeBase64 } from '../library/base64.ts';
import type { BatchOp, Storage, StoredDocument } from '../ports.ts';

/** The storage collection of folded stretches, keyed by document and first version. */
export const HISTORY_COLLECTION = 'document-history';

/** A folded stretch as stored (a record value is JSON: the bytes are one compressed, base64 blob). */
interface StoredStretch {
  /**
   * When the version before `to` was committed (its head's `updatedAt`, which is also the `createdAt`
   * of its receipt and at least that of every earlier one), or later: the stretch expires with the
   * last receipt that may ask for it (version `to` itself is the live snapshot's, then the next
   * stretch's first).
   */
  createdAt: number;
  /** The version of the snapshot; the stretch rebuilds versions `from` to `to`. */
  from: number;
  to: number;
  /** Base64 of the deflated {@link packBytes} of the snapshot and the updates of `from + 1` to `to`. */
  data: string;
}

/** What rebuilds the versions of one stretch: a Yjs snapshot at `from` and the updates after it. */
export interface Stretch {
  from: number;
  to: number;
  snapshot: Uint8Array;
  /** Update of version `from + 1 + i` at index i. */
  updates: Uint8Array[];
}

/** Versions sort as fixed-width decimal text in keys (a revision carries at most 16 digits). */
const keyOf = (documentRef: string, from: number) => `${documentRef}\u0000${String(from).padStart(16, '0')}`;

/** Byte strings as one: each as a 4-byte little-endian length and its bytes. */
function packBytes(items: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const item of items) size += 4 + item.byteLength;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const item of items) {
    view.setUint32(at, item.byteLength, true);
    out.set(item, at + 4);
    at += 4 + item.byteLength;
  }
  return out;
}

/** The byte strings of {@link packBytes}. */
function unpackBytes(packed: Uint8Array): Uint8Array[] {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const items: Uint8Array[] = [];
  for (let at = 0; at < packed.byteLength; ) {
    const length = view.getUint32(at, true);
    items.push(packed.slice(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return items;
}

/** `bytes` through a web-standard (de)compression stream. */
async function transform(bytes: Uint8Array, stream: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  const owned = bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
  const piped = new Blob([owned]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(piped).arrayBuffer());
}

/**
 * Folded stretches over the storage port: written in the compaction's own batch, found by version,
 * swept once their retention has passed.
 * @remarks Why keep the log rather than hashes: a receipt's hash is lazy (computed when first read,
 * at most once), and most callers never read it, so at compaction time most folded versions have
 * no hash. Hashing them all then would cost one SHA-256 of the whole document per version (plus
 * rebuilding each version's JSON), which is the cost the lazy hash removed from the write path,
 * only moved into the compaction that holds the document's lock. Why not keep the live log back to
 * the oldest replayable version instead: every load would replay a whole retention window of
 * updates, and a rebuild (a fresh history, see `Compactor`) could never happen while edits go on.
 * A stretch costs storage proportional to what the compaction folds (one snapshot plus the
 * updates, deflated: edits of the same blocks compress about tenfold), bounded by the retention
 * window like the idempotency records themselves; a replay that needs it rebuilds the one version
 * it asks for. Loads stay as short as before: the live snapshot is at the head.
 */
export class FoldedHistory {
  private readonly sweeper: ExpirySweeper;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    /** How long a receipt replays (the idempotency retention): stretches are kept as long. */
    readonly retentionMs: number,
    reportError: ErrorReporter,
  ) {
    this.sweeper = new ExpirySweeper(storage, clock, HISTORY_COLLECTION, retentionMs, undefined, reportError);
  }

  /** True when a receipt committed at `updatedAt` (or before) may still replay. */
  replayable(updatedAt: number): boolean {
    return this.clock.now() - updatedAt < this.retentionMs;
  }

  /**
   * The op that keeps versions `stored.head.snapshotVersion` to `to` of `stored`, whose receipts were
   * all created at `updatedAt` or before.
   * @remarks It fails the batch when a stretch from the same version exists: then another process
   * compacted from the same snapshot meanwhile, and this compaction must not go ahead.
   */
  async keepOp(stored: StoredDocument, to: number, updatedAt: number): Promise<BatchOp> {
    const from = stored.head.snapshotVersion;
    const items = [stored.snapshot];
    for (const u of stored.updates) if (u.version <= to) items.push(u.update);
    const data = encodeBase64(await transform(packBytes(items), new CompressionStream('deflate')));
    const value: StoredStretch = { createdAt: updatedAt, from, to, data };
    return { kind: 'record.put', collection: HISTORY_COLLECTION, key: keyOf(stored.head.documentRef, from), value, expectedRevision: null, index: expiryIndex(updatedAt) };
  }

  /**
   * The kept stretch of `documentRef` that rebuilds `version`, or null.
   * @remarks Reads every stretch kept for the document (one per compaction in the retention window):
   * only a replay of a version that is both out of the loaded document's ring and compacted away
   * comes here, and each version's hash is derived once (see `VersionRegistry`).
   */
  async find(documentRef: string, version: number): Promise<Stretch | null> {
    const records = await this.storage.listRecords<StoredStretch>(HISTORY_COLLECTION, `${documentRef}\u0000`);
    for (const { value } of records) {
      if (value.from <= version && version <= value.to) {
        const [snapshot, ...updates] = unpackBytes(await transform(decodeBase64(value.data), new DecompressionStream('deflate')));
        return { from: value.from, to: value.to, snapshot: snapshot!, updates };
      }
    }
    return null;
  }

  /**
   * Remove expired stretches in the background (at most once per sweep interval).
   * @remarks Called at every compaction: once compactions stop, the stretches of the last window stay
   * until the next one (as many as that window had compactions).
   */
  maybeSweep(): void {
    this.sweeper.maybeSweep();
  }

  /** Settles when the running sweep (if any) has settled. */
  flush(): Promise<void> {
    return this.sweeper.flush();
  }
}
