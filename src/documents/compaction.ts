/**
 * Background compaction: a document's update log is folded into a new snapshot once it outweighs it;
 * the folded stretch is kept while its receipts replay; a document whose Yjs history outweighs its
 * content is rebuilt on a fresh Y.Doc.
 * @module
 */
import type { BlockTree } from '../blocks/tree.ts';
import type { ErrorReporter } from '../deps.ts';
import { isStorageConflict, type BatchOp, type Storage } from '../ports.ts';
import type { DocumentCache, Loaded } from './cache.ts';
import type { FoldedHistory } from './history.ts';
import type { KeyedLock } from '../keyed-lock.ts';

/** When to compact (see `DocumentsOptions`). */
export interface CompactionPolicy {
  compactEvery: number;
  compactEveryBytes: number;
}

/**
 * A compaction rebuilds the document when its Y.Doc holds more than this many structs per block:
 * one is the block's live entry, the rest are tombstones of replaced or deleted entries.
 * @remarks A tombstone costs about as much heap (~216 bytes) as a small block's record and index,
 * so at 2 the history stays within about the weight of the content. A rebuild costs one pass over
 * the blocks and happens at most once per compaction, so its cost per edit stays small.
 */
export const REBUILD_STRUCTS_PER_BLOCK = 2;

/** True when `tree`'s history outweighs its content (see {@link REBUILD_STRUCTS_PER_BLOCK}). */
function historyOutweighs(tree: BlockTree): boolean {
  return tree.structCount > REBUILD_STRUCTS_PER_BLOCK * Math.max(1, tree.size);
}

/** Schedules compactions under the document's lock and tracks them until they settle. */
export class Compactor {
  private readonly background = new Set<Promise<unknown>>();

  constructor(
    private readonly storage: Storage,
    private readonly cache: DocumentCache,
    private readonly locks: KeyedLock,
    private readonly policy: CompactionPolicy,
    private readonly history: FoldedHistory,
    private readonly reportError: ErrorReporter,
  ) {}

  /** True once the log outweighs the snapshot (and holds enough bytes), or holds enough updates. */
  due(l: Loaded): boolean {
    const { compactEvery, compactEveryBytes } = this.policy;
    return l.logCount >= compactEvery || (l.logBytes >= compactEveryBytes && l.logBytes >= l.snapshotBytes);
  }

  /** Compact `ref` after the mutations queued on its lock, if it is still due then. */
  later(ref: string): void {
    const task = this.locks.run(ref, () => this.compact(ref));
    this.background.add(task);
    void task
      .catch((error: unknown) => {
        // The document stays correct (its log is intact); drop the cached copy and say what failed.
        this.cache.drop(ref);
        this.reportError(error, `compaction of ${ref}`);
      })
      .finally(() => this.background.delete(task));
  }

  /**
   * One compaction, under the document's lock: the snapshot at the cached head (of a rebuilt tree
   * when the history outweighs the content, as generation + 1), the folded stretch of the log kept
   * in the same batch while a receipt of it may replay.
   * @remarks Skipped, dropping the cached copy (storage is the truth), when storage holds another
   * generation or nothing to fold; a batch that loses a race with another process's compaction or
   * append drops it too, and is not an error.
   */
  private async compact(ref: string): Promise<void> {
    const loaded = this.cache.peek(ref);
    if (!loaded || !this.due(loaded)) return;
    this.history.maybeSweep();
    const head = loaded.head;
    const version = head.version;
    // Taken before any await: a reader may catch the cached tree up meanwhile (the lock holds off
    // only this process's writes), and the snapshot must be of `version` exactly.
    const rebuild = historyOutweighs(loaded.tree);
    const tree = rebuild ? loaded.tree.rebuilt() : loaded.tree;
    const generation = head.generation + (rebuild ? 1 : 0);
    const snapshot = tree.snapshot();
    const ops: BatchOp[] = [];
    // The new snapshot serves the head's version; the versions before it need the stretch while the
    // newest of their receipts (that of the version before the head) replays.
    const foldedUntil = loaded.previousUpdatedAt;
    if (this.history.replayable(foldedUntil)) {
      const stored = await this.storage.loadDocument(ref);
      // Another process rebuilt or compacted it past this version: reload from storage next time.
      if (!stored || stored.head.generation !== head.generation || stored.head.snapshotVersion >= version) return this.cache.drop(ref);
      ops.push(await this.history.keepOp(stored, version, foldedUntil));
    }
    ops.push({ kind: 'document.compact', documentRef: ref, snapshotVersion: version, generation, snapshot });
    try {
      await this.storage.commit(ops);
    } catch (error) {
      if (!isStorageConflict(error)) throw error;
      return this.cache.drop(ref);
    }
    if (this.cache.peek(ref) !== loaded) return;
    loaded.logCount = loaded.logBytes = 0;
    loaded.snapshotBytes = snapshot.byteLength;
    // A reader may have caught the cached copy up meanwhile (same generation: a rebuild commits only
    // at the stored version, so then nothing was caught up); keep its head, with the new facts.
    loaded.head = { ...loaded.head, snapshotVersion: Math.max(loaded.head.snapshotVersion, version), generation };
    if (rebuild) loaded.tree = tree;
  }

  /** Settles when every compaction started so far has settled, and the sweep of folded history. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.background]);
    await this.history.flush();
  }
}
