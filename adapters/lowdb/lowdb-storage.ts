/**
 * The embedded default storage: state in memory, every commit in an fdatasync'ed journal, the whole
 * state checkpointed through lowdb now and then.
 * @module
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Low } from 'lowdb';
import type { BatchOp, Storage } from '../../src/ports.ts';
import { ChangeNotifier } from '../core/change-notifier.ts';
import type { CheckpointState } from './checkpoint-codec.ts';
import { CHECKPOINT_FILE, DurableCheckpointFile } from './checkpoint-file.ts';
import { acquireDirLock } from './dir-lock.ts';
import { GroupCommitter } from './group-commit.ts';
import { JournalWriter } from './journal-file.ts';
import { emptyCheckpoint, recover, removeJournalsUpTo } from './recovery.ts';

/** Options of {@link lowdbStorage}. */
export interface LowdbStorageOptions {
  /** The storage folder; created if missing. */
  dir: string;
  /** Checkpoint once the current journal exceeds this many bytes. Default 16 MiB. */
  checkpointEveryBytes?: number;
  /**
   * fdatasync the journal before a commit resolves. Default true. `false` trades durability for
   * speed (a crash can lose acknowledged commits, never corrupt the folder); for tests and benches.
   */
  fsync?: boolean;
  /**
   * Run fdatasync on libuv's thread pool instead of the event loop. Default false. Off-thread, the
   * event loop keeps serving reads during each fdatasync, at the cost of a thread hop per group.
   */
  fsyncOffThread?: boolean;
}

/** Counters of a {@link LowdbStorage}, for tests, benchmarks and health pages. */
export interface LowdbStats {
  /** Batches made durable and applied. */
  commits: number;
  /** Journal fdatasyncs; with group commit, fewer than `commits` under concurrency. */
  fsyncs: number;
  /** Checkpoints written (including the one on close). */
  checkpoints: number;
  /** Bytes in the current journal. */
  journalBytes: number;
  /** Generation of the current journal. */
  journalGeneration: number;
  /** Batches replayed from journals when the folder was opened. */
  replayedOnOpen: number;
  /** Bytes of a torn last journal line discarded when the folder was opened. */
  tornBytesOnOpen: number;
  /** True while a checkpoint is being written. */
  checkpointRunning: boolean;
  /** Message of the last failed background checkpoint, if any (it is retried later). */
  lastCheckpointError: string | null;
}

/** The lowdb storage: a {@link Storage} plus counters and an explicit checkpoint. */
export type LowdbStorage = Storage & {
  /** The absolute storage folder. */
  readonly dir: string;
  /** A snapshot of the counters. */
  stats(): LowdbStats;
  /** Writes a checkpoint now (after any running one) and removes the journals it covers. */
  checkpoint(): Promise<void>;
};

const DEFAULT_CHECKPOINT_EVERY_BYTES = 16 * 1024 * 1024;

/**
 * Opens (or creates) a storage folder and returns the storage. The embedded default.
 * @remarks
 * Files in `dir`: `LOCK` (pid of the process that has it open), `journal-<generation>.log` (one
 * line per committed batch, `<crc32> <json>`, bytes in base64) and `checkpoint.json` (the whole
 * state as of a journal generation, written through lowdb with a durable adapter).
 * - Durability: `commit` resolves only after its batch's line is written and fdatasync'ed.
 *   Commits issued in the same event-loop turn (or while an off-thread fdatasync is in flight) are
 *   written together as one group and share one fdatasync (group commit), so throughput grows with
 *   concurrency. By default the write and fdatasync run on the event loop once per group, like
 *   Redis's `appendfsync always`: no thread hop per commit, but the loop waits for the disk for one
 *   fdatasync per group; set `fsyncOffThread` to keep the loop free instead.
 * - Atomicity: a batch is one line; recovery discards a torn last line and never applies half of one.
 *   A batch is applied in memory only after its line is durable; if a journal write fails, that
 *   group and all queued batches reject and the storage accepts no further commits.
 * - Racing commits resolve like the memory adapter's: validated in call order against the state
 *   plus the batches queued ahead, first wins.
 * - Checkpoints: when the journal passes `checkpointEveryBytes`, and on close, the journal is rotated
 *   first (commits continue into the new one) and the state as of the rotation is written in ~1 MiB
 *   pieces; then the journals it covers are removed.
 * - A second open of the folder, in this process or another, fails while the `LOCK` holder lives.
 * - Everything is held in memory; the folder is for durability, not for data larger than RAM.
 * @throws Error when the folder is locked, or its checkpoint or a journal is corrupt (other than a
 * torn last line): it is never opened with silently missing data.
 */
export async function lowdbStorage(options: LowdbStorageOptions): Promise<LowdbStorage> {
  const dir = resolve(options.dir);
  const checkpointEveryBytes = options.checkpointEveryBytes ?? DEFAULT_CHECKPOINT_EVERY_BYTES;
  const fsync = options.fsync ?? true;
  const fsyncOffThread = options.fsyncOffThread ?? false;
  await mkdir(dir, { recursive: true });
  const lock = await acquireDirLock(dir);
  const checkpoints = new Low<CheckpointState>(new DurableCheckpointFile(join(dir, CHECKPOINT_FILE)), emptyCheckpoint());
  let recovered;
  try {
    recovered = await recover(dir, checkpoints);
  } catch (error) {
    await lock.release();
    throw error;
  }
  const { core, replayed, tornBytes } = recovered;
  let journal: JournalWriter = recovered.journal;
  const notifier = new ChangeNotifier();
  let fsyncs = 0;
  let checkpointCount = 0;
  let lastCheckpointError: string | null = null;
  let running: Promise<void> | null = null;
  let closed = false;
  let closing: Promise<void> | null = null;

  const committer = new GroupCommitter(
    core,
    {
      async write(chunk) {
        journal.append(chunk);
        if (!fsync) return;
        if (fsyncOffThread) await journal.sync();
        else journal.syncNow();
        fsyncs++;
      },
    },
    recovered.lastSeq,
    () => {
      if (!closed && running === null && journal.size >= checkpointEveryBytes) startCheckpoint();
    },
    notifier,
  );

  async function writeCheckpoint(state: CheckpointState): Promise<void> {
    checkpoints.data = state;
    try {
      await checkpoints.write();
    } finally {
      checkpoints.data = emptyCheckpoint();
    }
    await removeJournalsUpTo(dir, state.generation);
    checkpointCount++;
  }

  /** Rotates the journal between groups, then writes the state as of the rotation. */
  async function rotateAndCheckpoint(): Promise<void> {
    const { state, previous } = await committer.exclusive(async () => {
      const next = await JournalWriter.open(dir, journal.generation + 1);
      const old = journal;
      journal = next;
      return { state: { generation: old.generation, lastSeq: committer.appliedSeq, view: core.view() }, previous: old };
    });
    await previous.close();
    await writeCheckpoint(state);
  }

  function startCheckpoint(): Promise<void> {
    const run = rotateAndCheckpoint().then(
      () => void (lastCheckpointError = null),
      (error: unknown) => {
        lastCheckpointError = error instanceof Error ? error.message : String(error);
        throw error;
      },
    );
    running = run.catch(() => {}).finally(() => (running = null));
    return run;
  }

  function guard<T>(read: () => T): Promise<T> {
    if (closed) return Promise.reject(new Error(`lowdb storage ${dir} is closed`));
    try {
      return Promise.resolve(read());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async function shutDown(): Promise<void> {
    try {
      await committer.drain();
      await running;
      // Nothing is queued or in flight: checkpoint the final state into the current generation.
      const covered = journal.generation;
      await journal.close();
      await writeCheckpoint({ generation: covered, lastSeq: committer.appliedSeq, view: core.view() });
    } finally {
      await lock.release();
    }
  }

  return {
    dir,
    getDocumentHead: (documentRef) => guard(() => core.getDocumentHead(documentRef)),
    loadDocument: (documentRef) => guard(() => core.loadDocument(documentRef)),
    loadUpdates: (documentRef, afterVersion) => guard(() => core.loadUpdates(documentRef, afterVersion)),
    listDocumentHeads: (accountId, limit, after) => guard(() => core.listDocumentHeads(accountId, limit, after)),
    getRecord: (collection, key) => guard(() => core.getRecord(collection, key)),
    listRecords: (collection, prefix) => guard(() => core.listRecords(collection, prefix)),
    listPage: (collection, partition, limit, after) => guard(() => core.listPage(collection, partition, limit, after)),
    readStream: (stream, afterSeq, limit) => guard(() => core.readStream(stream, afterSeq, limit)),
    streamHead: (stream) => guard(() => core.streamHead(stream)),
    subscribe(topic, listener) {
      if (closed) throw new Error(`lowdb storage ${dir} is closed`);
      return notifier.subscribe(topic, listener);
    },
    commit: (ops: BatchOp[]) => (closed ? guard(() => undefined) : committer.submit(ops)),
    async checkpoint() {
      if (closed) throw new Error(`lowdb storage ${dir} is closed`);
      await running;
      if (closed) throw new Error(`lowdb storage ${dir} is closed`);
      await startCheckpoint();
    },
    stats: () => ({
      commits: committer.commits,
      fsyncs,
      checkpoints: checkpointCount,
      journalBytes: journal.size,
      journalGeneration: journal.generation,
      replayedOnOpen: replayed,
      tornBytesOnOpen: tornBytes,
      checkpointRunning: running !== null,
      lastCheckpointError,
    }),
    close() {
      closed = true;
      notifier.clear();
      closing ??= shutDown();
      return closing;
    },
  };
}
