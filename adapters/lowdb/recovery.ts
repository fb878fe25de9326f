/**
 * Opening a storage folder: load the checkpoint, replay the journals after it, cut a torn tail.
 * @module
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Low } from 'lowdb';
import { validateBatch } from '../core/batch-validator.ts';
import { EMPTY_VIEW } from '../core/core-view.ts';
import { MemoryCore } from '../core/memory-core.ts';
import type { CheckpointState } from './checkpoint-codec.ts';
import { CHECKPOINT_FILE } from './checkpoint-file.ts';
import { JournalCorruptError, JournalWriter, journalName, listJournalGenerations, readJournal } from './journal-file.ts';

/** The checkpoint of an empty folder: covers generation 0, so the first journal is generation 1. */
export function emptyCheckpoint(): CheckpointState {
  return { generation: 0, lastSeq: 0, view: EMPTY_VIEW };
}

/** The state of a folder after {@link recover}. */
export interface Recovered {
  core: MemoryCore;
  /** Sequence number of the last batch in the state; new batches continue after it. */
  lastSeq: number;
  /** The journal to append to (the newest one, or a fresh one after the checkpoint's generation). */
  journal: JournalWriter;
  /** Batches replayed from journals. */
  replayed: number;
  /** Bytes of a torn last line that were discarded and cut off. */
  tornBytes: number;
}

/** Removes the journals a checkpoint at `generation` has folded in. */
export async function removeJournalsUpTo(dir: string, generation: number): Promise<void> {
  for (const g of await listJournalGenerations(dir)) {
    if (g <= generation) await rm(join(dir, journalName(g)), { force: true });
  }
}

/**
 * Rebuilds the state of `dir` and opens its journal for appending.
 * @param checkpoints the lowdb database over the checkpoint file.
 * @throws JournalCorruptError when a journal is damaged other than by a torn last write, when batch
 * sequence numbers do not follow on, or when a batch does not apply (a version gap): the folder is
 * refused rather than opened with silently missing data.
 * @remarks Journals at or below the checkpoint's generation are leftovers of a crash between the
 * checkpoint's rename and their removal; they are removed. A torn tail of the newest journal is
 * discarded and cut off the file before anything new is appended, so it can never end up in the
 * middle of a journal.
 */
export async function recover(dir: string, checkpoints: Low<CheckpointState>): Promise<Recovered> {
  await rm(`${join(dir, CHECKPOINT_FILE)}.tmp`, { force: true });
  await checkpoints.read();
  const { generation, lastSeq, view } = checkpoints.data;
  checkpoints.data = emptyCheckpoint();
  const core = MemoryCore.fromView(view);
  await removeJournalsUpTo(dir, generation);

  const live = (await listJournalGenerations(dir)).filter((g) => g > generation);
  let seq = lastSeq;
  let replayed = 0;
  let tornBytes = 0;
  let truncateTo: number | undefined;
  for (let i = 0; i < live.length; i++) {
    const path = join(dir, journalName(live[i]));
    const contents = await readJournal(path);
    const newest = i === live.length - 1;
    if (contents.tornBytes > 0 && !newest) {
      throw new JournalCorruptError(`journal ${path} ends in a damaged line although a newer journal follows; refusing to open`);
    }
    for (const batch of contents.batches) {
      if (batch.seq !== seq + 1) {
        throw new JournalCorruptError(`journal ${path}: batch ${batch.seq} follows batch ${seq}; batches are missing or repeated, refusing to open`);
      }
      try {
        validateBatch(core, batch.ops);
      } catch (error) {
        throw new JournalCorruptError(`journal ${path}: batch ${batch.seq} does not apply (${(error as Error).message}); refusing to open`, {
          cause: error,
        });
      }
      core.apply(batch.ops);
      seq = batch.seq;
      replayed++;
    }
    if (newest && contents.tornBytes > 0) {
      tornBytes = contents.tornBytes;
      truncateTo = contents.validBytes;
    }
  }
  const current = live.length > 0 ? live[live.length - 1] : generation + 1;
  const journal = await JournalWriter.open(dir, current, truncateTo);
  return { core, lastSeq: seq, journal, replayed, tornBytes };
}
