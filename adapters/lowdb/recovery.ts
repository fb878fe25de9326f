/**
 * Opening a storage folder: load the checkpoint, check that the journals after it are all there
 * and chain, replay them, cut a torn tail and say so.
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
import { fsyncDir } from './durable-fs.ts';
import { ACK_FILE, readAckRecord } from './ack-record.ts';
import { JournalCorruptError, JournalDataLossError, JournalWriter, journalName, listJournalGenerations, readJournal, type JournalContents } from './journal-file.ts';

/** The checkpoint of an empty folder: covers generation 0, names no journal yet. */
export function emptyCheckpoint(): CheckpointState {
  return { generation: 0, lastSeq: 0, nextJournal: null, view: EMPTY_VIEW };
}

/**
 * What recovery discarded when it opened a folder. Normally (`dataLoss: false`) the torn tail of
 * the newest journal, left by a crash during a write, beyond the last batch the acknowledgment
 * record ({@link ACK_FILE}) vouches for. With `acceptDataLoss`, also acknowledged batches that a
 * damaged or cut journal no longer holds (`dataLoss: true`).
 */
export interface RecoveryReport {
  /** The journal file that was cut. */
  journal: string;
  /** Where the discarded bytes started (the end of the last intact frame). */
  offset: number;
  /** How many bytes were discarded. */
  bytes: number;
  /**
   * How many frames the discarded bytes began (at least 1): unacknowledged batches, or the
   * rotation mark of a rotation that a crash interrupted.
   */
  batches: number;
  /** What was wrong at `offset`. */
  reason: string;
  /** The last batch kept. */
  recoveredSeq: number;
  /** The last batch the acknowledgment record vouches for; null when the folder has none (older versions, `fsync: false`). */
  acknowledgedSeq: number | null;
  /** True when acknowledged batches were lost and the folder was opened only because `acceptDataLoss` said so. */
  dataLoss: boolean;
}

/** How to open a folder. */
export interface RecoverOptions {
  /** Open even when acknowledged batches are lost, keeping what is intact (see {@link JournalDataLossError}). */
  acceptDataLoss?: boolean;
}

/** The state of a folder after {@link recover}. */
export interface Recovered {
  core: MemoryCore;
  /** Sequence number of the last batch in the state; new batches continue after it. */
  lastSeq: number;
  /** The journal to append to. */
  journal: JournalWriter;
  /** Batches replayed from journals. */
  replayed: number;
  /** The torn tail that was cut, or null. */
  report: RecoveryReport | null;
  /** True when no checkpoint names `journal` yet (a new or version-1 folder): write one before use. */
  needsCheckpoint: boolean;
}

/** Removes the journals a checkpoint at `generation` has folded in. */
export async function removeJournalsUpTo(dir: string, generation: number): Promise<void> {
  for (const g of await listJournalGenerations(dir)) {
    if (g <= generation) await rm(join(dir, journalName(g)), { force: true });
  }
}

function refuse(message: string): never {
  throw new JournalCorruptError(`lowdb storage: ${message}; refusing to open rather than lose acknowledged writes`);
}

/** The refusal for a journal in the version-1 text format, with what to do. */
function textJournal(path: string): string {
  return `${path} is a version-1 text journal; open and close the folder with the knowledge-workspace version that wrote it (closing folds the journal into the checkpoint), then open it here`;
}

/** What is lost and how to open anyway, for {@link JournalDataLossError}. */
function dataLossMessage(dir: string, contents: JournalContents | null, seq: number, ack: { seq: number; generation: number; bytes: number } | null): string {
  const what: string[] = [];
  if (ack !== null && ack.seq > seq) {
    what.push(`batches ${seq + 1} to ${ack.seq} were acknowledged (${join(dir, ACK_FILE)} records batch ${ack.seq} in journal generation ${ack.generation} at ${ack.bytes} bytes) but are not in the journal`);
  }
  if (contents?.damage) what.push(`${contents.damage}: the ${contents.tornFrames} frame(s) from there on held acknowledged batches`);
  const kept = contents
    ? `${contents.path} is intact up to byte ${contents.validBytes} of ${contents.validBytes + contents.tornBytes}${contents.tornReason ? ` (then: ${contents.tornReason})` : ''}, holding the batches up to ${seq}`
    : `the state recovered holds the batches up to ${seq}`;
  return (
    `lowdb storage: opening ${dir} would lose acknowledged writes: ${what.join('; ')}. ${kept}. ` +
    'Nothing was changed and the folder was not opened. Restore the folder from a backup; or, to start anyway with what is intact ' +
    '(the lost batches are then gone for good), open it with lowdbStorage({ dir, acceptDataLoss: true }) or kw serve --accept-data-loss.'
  );
}

/** Who vouches for journal `g`: the checkpoint, or the rotation frame of journal g - 1. */
function namer(g: number, checkpoint: CheckpointState, previous: JournalContents | undefined): string | null {
  if (checkpoint.nextJournal === g) return `${CHECKPOINT_FILE} (generation ${checkpoint.generation}, batch ${checkpoint.lastSeq})`;
  if (previous?.rotation?.nextGeneration === g) return `${journalName(g - 1)} (its rotation frame, after batch ${previous.rotation.lastSeq})`;
  return null;
}

/** The journals after the checkpoint, read, with an abandoned rotation target removed. */
async function readChain(dir: string, checkpoint: CheckpointState, checkpointFound: boolean): Promise<JournalContents[]> {
  const generations = (await listJournalGenerations(dir)).filter((g) => g > checkpoint.generation);
  const chain: JournalContents[] = [];
  for (let i = 0; i < generations.length; i++) {
    const expected = checkpoint.generation + 1 + i;
    if (generations[i] !== expected) refuse(`${join(dir, journalName(expected))} is missing but ${journalName(generations[i])} follows it`);
    chain.push(await readJournal(join(dir, journalName(generations[i]))));
  }
  if (checkpoint.nextJournal !== null && chain.length === 0) {
    refuse(`${join(dir, journalName(checkpoint.nextJournal))} is missing although ${namer(checkpoint.nextJournal, checkpoint, undefined)} says it follows and may hold acknowledged batches`);
  }
  // A journal nobody names was being created by a rotation that did not finish: it holds no batch.
  const last = chain[chain.length - 1];
  if (last !== undefined) {
    const g = checkpoint.generation + chain.length;
    if (namer(g, checkpoint, chain[chain.length - 2]) === null) {
      if (last.batches.length > 0 || last.rotation !== null) {
        refuse(
          checkpointFound
            ? `${last.path} holds batches but neither ${CHECKPOINT_FILE} nor the journal before it names it`
            : `${join(dir, CHECKPOINT_FILE)} is missing but ${last.path} holds batches`,
        );
      }
      if (last.textFormat) refuse(textJournal(last.path));
      await rm(last.path, { force: true });
      await fsyncDir(dir);
      chain.pop();
    }
  }
  return chain;
}

/**
 * Rebuilds the state of `dir` and opens its journal for appending.
 * @param checkpoints the lowdb database over the checkpoint file.
 * @param checkpointFound whether the checkpoint file existed.
 * @throws JournalCorruptError when a journal the checkpoint or a rotation frame names is missing,
 * emptied or not a journal; when a journal is damaged other than by a torn last write; when
 * generations, headers or batch seqs do not follow on; or when a batch does not apply.
 * @remarks Journals at or below the checkpoint's generation are leftovers of a crash between the
 * checkpoint's rename and their removal; they are removed. A torn tail of the newest journal is
 * discarded, cut off the file before anything new is appended, and reported.
 */
export async function recover(dir: string, checkpoints: Low<CheckpointState>, checkpointFound: () => boolean, options: RecoverOptions = {}): Promise<Recovered> {
  await rm(`${join(dir, CHECKPOINT_FILE)}.tmp`, { force: true });
  const ackRecord = await readAckRecord(dir);
  const ack = typeof ackRecord === 'object' ? ackRecord : null;
  await checkpoints.read();
  const checkpoint = checkpoints.data;
  checkpoints.data = emptyCheckpoint();
  const core = MemoryCore.fromView(checkpoint.view);
  await removeJournalsUpTo(dir, checkpoint.generation);
  const chain = await readChain(dir, checkpoint, checkpointFound());

  let seq = checkpoint.lastSeq;
  let replayed = 0;
  let report: RecoveryReport | null = null;
  for (let i = 0; i < chain.length; i++) {
    const contents = chain[i];
    const g = checkpoint.generation + 1 + i;
    const newest = i === chain.length - 1;
    const vouch = namer(g, checkpoint, chain[i - 1]);
    if (contents.header === null) {
      if (contents.textFormat) refuse(textJournal(contents.path));
      refuse(`${contents.path} is emptied or damaged (${contents.headerProblem}) although ${vouch ?? 'a newer journal'} says it holds the batches after ${seq}`);
    }
    if (contents.header.generation !== g || contents.header.baseSeq !== seq) {
      refuse(`${contents.path} says it is generation ${contents.header.generation} after batch ${contents.header.baseSeq}; expected generation ${g} after batch ${seq}`);
    }
    if (contents.tornBytes > 0 && !newest) refuse(`${contents.path} ends in a damaged frame although a newer journal follows`);
    for (const batch of contents.batches) {
      if (batch.seq !== seq + 1) refuse(`${contents.path}: batch ${batch.seq} follows batch ${seq}; batches are missing or repeated`);
      try {
        validateBatch(core, batch.ops);
      } catch (error) {
        throw new JournalCorruptError(`lowdb storage: ${contents.path}: batch ${batch.seq} does not apply (${(error as Error).message}); refusing to open`, { cause: error });
      }
      core.apply(batch.ops);
      seq = batch.seq;
      replayed++;
    }
    if (contents.rotation !== null) {
      if (contents.rotation.nextGeneration !== g + 1 || contents.rotation.lastSeq !== seq) {
        refuse(`${contents.path}: its rotation frame names generation ${contents.rotation.nextGeneration} after batch ${contents.rotation.lastSeq}; expected ${g + 1} after ${seq}`);
      }
      if (newest) refuse(`${join(dir, journalName(g + 1))} is missing although ${contents.path} (its rotation frame) says it holds the batches after ${seq}`);
    } else if (!newest) {
      refuse(`${contents.path} has no rotation frame although ${journalName(g + 1)} follows it`);
    }
    if (newest) {
      const lost = contents.damage !== null || (ack !== null && ack.seq > seq);
      if (lost && !options.acceptDataLoss) throw new JournalDataLossError(dataLossMessage(dir, contents, seq, ack));
      if (lost || contents.tornBytes > 0) {
        report = {
          journal: contents.path,
          offset: contents.validBytes,
          bytes: contents.tornBytes,
          batches: contents.tornBytes > 0 ? contents.tornFrames : 0,
          reason: contents.damage ?? contents.tornReason ?? (lost ? 'the journal ends before the acknowledged batches' : 'a torn frame'),
          recoveredSeq: seq,
          acknowledgedSeq: ack?.seq ?? null,
          dataLoss: lost,
        };
      }
    }
  }
  if (chain.length === 0 && ack !== null && ack.seq > seq) {
    if (!options.acceptDataLoss) throw new JournalDataLossError(dataLossMessage(dir, null, seq, ack));
    report = { journal: join(dir, journalName(checkpoint.generation + 1)), offset: 0, bytes: 0, batches: 0, reason: 'no journal holds the acknowledged batches', recoveredSeq: seq, acknowledgedSeq: ack.seq, dataLoss: true };
  }
  if (chain.length === 0) {
    const journal = await JournalWriter.create(dir, checkpoint.generation + 1, seq);
    return { core, lastSeq: seq, journal, replayed, report, needsCheckpoint: true };
  }
  const newest = chain[chain.length - 1];
  const journal = await JournalWriter.open(dir, checkpoint.generation + chain.length, report === null ? undefined : newest.validBytes);
  return { core, lastSeq: seq, journal, replayed, report, needsCheckpoint: false };
}
