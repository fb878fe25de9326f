/**
 * Background compaction: a document's update log is folded into a new snapshot once it outweighs it.
 * @module
 */
import type { ErrorReporter } from '../deps.ts';
import type { Storage } from '../ports.ts';
import type { DocumentCache, Loaded } from './cache.ts';
import type { KeyedLock } from './keyed-lock.ts';

/** When to compact (see `DocumentsOptions`). */
export interface CompactionPolicy {
  compactEvery: number;
  compactEveryBytes: number;
}

/** Schedules compactions under the document's lock and tracks them until they settle. */
export class Compactor {
  private readonly background = new Set<Promise<unknown>>();

  constructor(
    private readonly storage: Storage,
    private readonly cache: DocumentCache,
    private readonly locks: KeyedLock,
    private readonly policy: CompactionPolicy,
    private readonly reportError: ErrorReporter,
  ) {}

  /** True once the log outweighs the snapshot (and holds enough bytes), or holds enough updates. */
  due(l: Loaded): boolean {
    const { compactEvery, compactEveryBytes } = this.policy;
    return l.logCount >= compactEvery || (l.logBytes >= compactEveryBytes && l.logBytes >= l.snapshotBytes);
  }

  /** Compact `ref` after the mutations queued on its lock, if it is still due then. */
  later(ref: string): void {
    const task = this.locks.run(ref, async () => {
      const loaded = this.cache.peek(ref);
      if (!loaded || !this.due(loaded)) return;
      const version = loaded.head.version;
      const snapshot = loaded.tree.snapshot();
      await this.storage.commit([{ kind: 'document.compact', documentRef: ref, snapshotVersion: version, generation: loaded.head.generation, snapshot }]);
      if (this.cache.peek(ref) === loaded) {
        loaded.logCount = loaded.logBytes = 0;
        loaded.snapshotBytes = snapshot.byteLength;
      }
    });
    this.background.add(task);
    void task
      .catch((error: unknown) => {
        // The document stays correct (its log is intact); drop the cached copy and say what failed.
        this.cache.drop(ref);
        this.reportError(error, `compaction of ${ref}`);
      })
      .finally(() => this.background.delete(task));
  }

  /** Settles when every compaction started so far has settled. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.background]);
  }
}
