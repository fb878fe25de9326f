/**
 * Journal rotation and checkpoints of a lowdb storage folder.
 * @module
 */
import { rm } from 'node:fs/promises';
import type { Low } from 'lowdb';
import type { MemoryCore } from '../core/memory-core.ts';
import type { CheckpointState } from './checkpoint-codec.ts';
import type { GroupCommitter } from './group-commit.ts';
import { encodeRotationFrame } from './journal-codec.ts';
import { isDiskFull } from './durable-fs.ts';
import { JournalWriter } from './journal-file.ts';
import { emptyCheckpoint, removeJournalsUpTo } from './recovery.ts';

/** The journal that commits go to; replaced by each rotation. */
export interface JournalSlot {
  current: JournalWriter;
}

/**
 * Rotates the journal and writes checkpoints, one at a time.
 * @remarks A rotation runs between groups ({@link GroupCommitter.exclusive}): it creates the next
 * journal (header durable), closes the current one with a rotation frame naming it, and switches.
 * The checkpoint then written names that next journal, so every journal is vouched for by the
 * checkpoint or by its predecessor's rotation frame (see recovery.ts).
 */
export class Checkpointer {
  /** Checkpoints written. */
  count = 0;
  /** Message of the last failed checkpoint, null after a success. */
  lastError: string | null = null;
  /** The checkpoint in progress, if any (never rejects). */
  running: Promise<void> | null = null;

  constructor(
    private readonly dir: string,
    private readonly checkpoints: Low<CheckpointState>,
    private readonly committer: GroupCommitter,
    private readonly core: MemoryCore,
    private readonly journal: JournalSlot,
    private readonly fsync: boolean,
  ) {}

  /** Writes `state` as the checkpoint (durably) and removes the journals it covers. */
  async write(state: CheckpointState): Promise<void> {
    this.checkpoints.data = state;
    try {
      await this.checkpoints.write();
    } finally {
      this.checkpoints.data = emptyCheckpoint();
    }
    await removeJournalsUpTo(this.dir, state.generation);
    this.count++;
  }

  /**
   * Rotates the journal between groups; returns the checkpoint state as of the switch.
   * @remarks If the rotation frame cannot be made durable, the committer takes no further commits
   * (the old journal's end is then uncertain), unless the disk was full and the old journal could
   * be cut back durably: then only this checkpoint fails (it is retried later).
   */
  rotate(): Promise<CheckpointState> {
    return this.committer.exclusive(async () => {
      const lastSeq = this.committer.appliedSeq;
      const old = this.journal.current;
      const next = await JournalWriter.create(this.dir, old.generation + 1, lastSeq);
      const before = old.size;
      try {
        old.append(encodeRotationFrame(next.generation, lastSeq));
        if (this.fsync) old.syncNow();
      } catch (error) {
        let undone = false;
        if (isDiskFull(error)) {
          try {
            old.truncateDurably(before);
            undone = true;
          } catch {
            // the old journal's end is uncertain: refuse commits below
          }
        }
        if (!undone) old.cutBackTo(before);
        await next.close().catch(() => {});
        await rm(next.path, { force: true }).catch(() => {});
        if (!undone) this.committer.fail(error);
        throw error;
      }
      this.journal.current = next;
      await old.close();
      return { generation: old.generation, lastSeq, nextJournal: next.generation, view: this.core.view() };
    });
  }

  /** Starts a rotation and checkpoint (call when none is {@link running}); resolves when written. */
  start(): Promise<void> {
    const run = this.rotate()
      .then((state) => this.write(state))
      .then(
        () => void (this.lastError = null),
        (error: unknown) => {
          this.lastError = error instanceof Error ? error.message : String(error);
          throw error;
        },
      );
    this.running = run.catch(() => {}).finally(() => (this.running = null));
    return run;
  }
}
