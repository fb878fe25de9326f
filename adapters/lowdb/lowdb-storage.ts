/**
 * The embedded default storage: state in memory, every commit in an fdatasync'ed journal, the whole
 * state checkpointed through lowdb now and then.
 * @module
 */
import { join, resolve } from 'node:path';
import { Low } from 'lowdb';
import { StorageUnavailableError } from '../../src/errors.ts';
import type { BatchOp, Storage } from '../../src/ports.ts';
import { AckRecorder } from './ack-record.ts';
import { ChangeNotifier } from '../core/change-notifier.ts';
import { EphemeralHub, ephemeralMembers } from '../core/ephemeral-hub.ts';
import { takeCountByRevision } from '../core/take-count.ts';
import type { CheckpointState } from './checkpoint-codec.ts';
import { CHECKPOINT_FILE, DurableCheckpointFile } from './checkpoint-file.ts';
import { Checkpointer, type JournalSlot } from './checkpointer.ts';
import { acquireDirLock } from './dir-lock.ts';
import { isDiskFull, makePrivateDir } from './durable-fs.ts';
import { GroupCommitter } from './group-commit.ts';
import { emptyCheckpoint, recover, type RecoveryReport } from './recovery.ts';

/** Options of {@link lowdbStorage}. */
export interface LowdbStorageOptions {
  /** The storage folder; created if missing. */
  dir: string;
  /**
   * Checkpoint at the latest once the current journal exceeds this many bytes. Default 16 MiB.
   * A checkpoint comes sooner when the journal has grown past half the size of the last checkpoint
   * (and past {@link MIN_JOURNAL_BYTES}), so that the folder stays within about 1.5 times its live
   * state (plus that minimum).
   */
  checkpointEveryBytes?: number;
  /**
   * fdatasync the journal before a commit resolves. Default true. `false` trades durability for
   * speed (a crash can lose acknowledged commits, never corrupt the folder); for tests and benches.
   */
  fsync?: boolean;
  /**
   * Run fdatasync on libuv's thread pool instead of the event loop. Default true: the event loop
   * keeps serving reads during each fdatasync, at the cost of a thread hop per group (figures in
   * docs/guarantees.md, "The event loop and the disk"). `false` syncs on the event loop, like Redis's
   * `appendfsync always`: a little faster for a lone writer on an idle disk, but every request waits
   * for every sync.
   */
  fsyncOffThread?: boolean;
  /**
   * Open the folder even when acknowledged writes are lost (the journal is shorter than the
   * acknowledgment record says, or damaged before its last write), keeping what is intact; the
   * loss is reported through {@link onRecovery} with `dataLoss: true`. Default false: such a folder
   * is refused with a {@link JournalDataLossError} that says what is lost.
   */
  acceptDataLoss?: boolean;
  /**
   * Called once while opening, before `lowdbStorage` resolves, when recovery discarded anything:
   * normally the torn tail of the newest journal (a write a crash interrupted before it was
   * acknowledged); with {@link acceptDataLoss}, also lost acknowledged batches (`dataLoss: true`).
   * The same report is in {@link LowdbStats.recovery}.
   */
  onRecovery?: (report: RecoveryReport) => void;
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
  /** Bytes of a torn journal tail discarded when the folder was opened. */
  tornBytesOnOpen: number;
  /** What opening the folder discarded (see {@link LowdbStorageOptions.onRecovery}), or null. */
  recovery: RecoveryReport | null;
  /** True while a checkpoint is being written. */
  checkpointRunning: boolean;
  /** Message of the last failed background checkpoint, if any (it is retried later). */
  lastCheckpointError: string | null;
  /** Groups refused because the disk was full (each answered StorageUnavailableError, nothing kept). */
  diskFullRefusals: number;
  /** The last batch handed to the acknowledgment record (`ACKED`). */
  acknowledgedSeq: number;
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
 * A journal shorter than this is never checkpointed early (see
 * {@link LowdbStorageOptions.checkpointEveryBytes}): a small state is not rewritten every few writes.
 * @remarks The policy is that of Redis's AOF rewrite (`auto-aof-rewrite-percentage` with
 * `auto-aof-rewrite-min-size`), at 50%: rewriting the state when the journal has grown to half its
 * size costs at most two bytes of checkpoint written per byte of journal, and bounds the folder by
 * 1.5 times the state (plus this minimum) instead of by the state plus a fixed 16 MiB.
 */
export const MIN_JOURNAL_BYTES = 1024 * 1024;

/**
 * Opens (or creates) a storage folder and returns the storage. The embedded default.
 * @remarks
 * Files in `dir` (the folder is made 0700, every file 0600): `LOCK` (pid, start time and boot id
 * of the process that has it open), `ACKED` (the last acknowledged batch; see ack-record.ts),
 * `journal-<generation>.log` (a header naming its generation and the batch it follows, then one
 * binary frame per committed batch with Yjs bytes stored raw; see journal-codec.ts) and
 * `checkpoint.json` (the whole state as of a journal generation plus the journal that follows it,
 * written through lowdb with a durable adapter).
 * - Durability: `commit` resolves only after its batch's frame is written and fdatasync'ed.
 *   Commits issued in the same event-loop turn (or while an off-thread fdatasync is in flight) are
 *   written together as one group and share one fdatasync (group commit), so throughput grows with
 *   concurrency. By default the fdatasync runs on libuv's thread pool, so the event loop keeps
 *   serving reads while the disk syncs (`fsyncOffThread: false` syncs on the loop instead).
 * - Atomicity: a batch is one frame; recovery discards a torn tail (reported through `onRecovery`
 *   and `stats().recovery`) and never applies half of a batch. A journal that lost acknowledged
 *   batches (shorter than `ACKED` says, or damaged before its last write group) is refused with a
 *   `JournalDataLossError` unless `acceptDataLoss` is set (docs/guarantees.md).
 * - A full disk (ENOSPC/EDQUOT) refuses the group with a `StorageUnavailableError` after cutting
 *   the journal back durably; later commits are taken again once the disk has room.
 *   A batch is applied in memory only after its frame is durable; if a journal write fails for
 *   another reason than a full disk, that group and all queued batches reject and the storage
 *   accepts no further commits.
 * - Racing commits resolve like the memory adapter's: validated in call order against the state
 *   plus the batches queued ahead, first wins.
 * - Checkpoints: when the journal passes half the last checkpoint's size (and 1 MiB) or
 *   `checkpointEveryBytes`, and on close, the journal is rotated
 *   first (the next journal is created with its header, the old one closed with a rotation frame
 *   naming it; commits continue into the new one) and the state as of the rotation is written in
 *   ~1 MiB pieces; then the journals it covers are removed. Every journal is thus named by the
 *   checkpoint or by its predecessor, so a journal deleted or emptied after acknowledged writes is
 *   refused on open instead of silently losing them.
 * - Notifications (`subscribe`): listeners run after their batch's group is fdatasync'ed and
 *   applied, in commit order, before `commit` resolves; in this process only.
 * - A second open of the folder, in this process or another, fails while the `LOCK` holder runs
 *   (a reused pid with another start time or boot does not count).
 * - Everything is held in memory; the folder is for durability, not for data larger than RAM.
 * @throws Error when the folder is locked, its checkpoint is corrupt, or a journal is corrupt (other
 * than a torn tail), missing, emptied or in the version-1 text format: it is never opened with
 * silently missing data.
 */
export async function lowdbStorage(options: LowdbStorageOptions): Promise<LowdbStorage> {
  const dir = resolve(options.dir);
  const checkpointEveryBytes = options.checkpointEveryBytes ?? DEFAULT_CHECKPOINT_EVERY_BYTES;
  const fsync = options.fsync ?? true;
  const fsyncOffThread = options.fsyncOffThread ?? true;
  await makePrivateDir(dir);
  const lock = await acquireDirLock(dir);
  const checkpointFile = new DurableCheckpointFile(join(dir, CHECKPOINT_FILE));
  const checkpoints = new Low<CheckpointState>(checkpointFile, emptyCheckpoint());
  let recovered;
  try {
    recovered = await recover(dir, checkpoints, () => checkpointFile.found, { acceptDataLoss: options.acceptDataLoss ?? false });
    if (recovered.needsCheckpoint) {
      // A new (or version-1) folder: name the journal just created, so that losing it is detected.
      const journal = recovered.journal;
      checkpoints.data = { generation: journal.generation - 1, lastSeq: recovered.lastSeq, nextJournal: journal.generation, view: recovered.core.view() };
      await checkpoints.write().finally(() => (checkpoints.data = emptyCheckpoint()));
    }
  } catch (error) {
    await recovered?.journal.close().catch(() => {});
    await lock.release();
    throw error;
  }
  const { core, replayed, report } = recovered;
  const journal: JournalSlot = { current: recovered.journal };
  const ackPoint = () => ({ seq: committer.appliedSeq, generation: journal.current.generation, bytes: journal.current.size });
  let acks: AckRecorder;
  try {
    acks = await AckRecorder.open(dir, { seq: recovered.lastSeq, generation: recovered.journal.generation, bytes: recovered.journal.size });
  } catch (error) {
    await recovered.journal.close().catch(() => {});
    await lock.release();
    throw error;
  }
  if (report !== null) options.onRecovery?.(report);
  const notifier = new ChangeNotifier();
  let fsyncs = 0;
  let diskFullRefusals = 0;
  let closed = false;
  const ephemeral = new EphemeralHub();
  let closing: Promise<void> | null = null;

  const committer = new GroupCommitter(
    core,
    {
      async write(chunk) {
        const file = journal.current;
        const before = file.size;
        try {
          file.append(chunk);
          if (!fsync) return;
          if (fsyncOffThread) await file.sync();
          else file.syncNow();
          fsyncs++;
        } catch (error) {
          if (!isDiskFull(error)) throw error;
          try {
            file.truncateDurably(before);
          } catch {
            throw error; // the journal's end is uncertain: the committer refuses further commits
          }
          diskFullRefusals++;
          throw new StorageUnavailableError(`the disk holding ${dir} is full (${(error as { code?: string }).code}); the write was not stored`, { retryAfterMs: 5000, cause: error });
        }
      },
    },
    recovered.lastSeq,
    () => {
      // Only durable groups get here (fsync on): the record never claims more than the journal holds.
      if (fsync) acks.note(ackPoint());
      if (closed || checkpointer.running !== null) return;
      const size = journal.current.size;
      if (size >= checkpointEveryBytes || (size >= MIN_JOURNAL_BYTES && 2 * size >= checkpointFile.bytes)) void checkpointer.start().catch(() => {});
    },
    notifier,
  );
  const checkpointer = new Checkpointer(dir, checkpoints, committer, core, journal, fsync);

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
      await checkpointer.running;
      // Nothing is queued or in flight: rotate to an empty journal and checkpoint the final state,
      // so the next open replays nothing and still finds the journal the checkpoint names.
      try {
        await checkpointer.write(await checkpointer.rotate());
      } catch (error) {
        if (!isDiskFull(error)) throw error;
        // A full disk: every acknowledged batch is durable in the journal already (a commit
        // resolves only then), and a rotation refused half-way was cut back; only this final
        // checkpoint is skipped, and the next open replays the journal instead.
        checkpointer.lastError = (error as Error).message;
      }
    } finally {
      await acks.close();
      await journal.current.close().catch(() => {});
      await lock.release();
    }
  }

  const storage: LowdbStorage = {
    dir,
    getDocumentHead: (documentRef) => guard(() => core.getDocumentHead(documentRef)),
    loadDocument: (documentRef) => guard(() => core.loadDocument(documentRef)),
    loadUpdates: (documentRef, afterVersion) => guard(() => core.loadUpdates(documentRef, afterVersion)),
    loadHeadAndUpdates: (documentRef, afterVersion) => guard(() => core.loadHeadAndUpdates(documentRef, afterVersion)),
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
    takeCount: (collection, key, windowStart, limit) => takeCountByRevision(storage, collection, key, windowStart, limit),
    ...ephemeralMembers(ephemeral, () => closed),
    async checkpoint() {
      if (closed) throw new Error(`lowdb storage ${dir} is closed`);
      await checkpointer.running;
      if (closed) throw new Error(`lowdb storage ${dir} is closed`);
      await checkpointer.start();
    },
    stats: () => ({
      commits: committer.commits,
      fsyncs,
      checkpoints: checkpointer.count,
      journalBytes: journal.current.size,
      journalGeneration: journal.current.generation,
      replayedOnOpen: replayed,
      tornBytesOnOpen: report?.bytes ?? 0,
      recovery: report,
      checkpointRunning: checkpointer.running !== null,
      lastCheckpointError: checkpointer.lastError,
      diskFullRefusals,
      acknowledgedSeq: acks.point.seq,
    }),
    close() {
      closed = true;
      notifier.clear();
      ephemeral.clear();
      closing ??= shutDown();
      return closing;
    },
  };
  return storage;
}
