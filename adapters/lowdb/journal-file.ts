/**
 * Journal files: `journal-<generation>.log` in the storage folder, a file header and one frame per
 * committed batch (see journal-codec.ts). Writing (append + fdatasync) and reading back, with
 * torn-tail detection.
 * @module
 */
import { close, fdatasync, fdatasyncSync, fstat, ftruncate, ftruncateSync, open, writeSync } from 'node:fs';
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { PreparedOp } from '../core/prepared-op.ts';
import { fsyncDir, PRIVATE_FILE_MODE } from './durable-fs.ts';
import { FILE_HEADER_BYTES, FRAME_HEADER_BYTES, decodeFileHeader, encodeFileHeader, isTextJournal, readFrame, type JournalHeader } from './journal-codec.ts';

const openAsync = promisify(open);
const fstatAsync = promisify(fstat);
const ftruncateAsync = promisify(ftruncate);
const fdatasyncAsync = promisify(fdatasync);
const closeAsync = promisify(close);

const JOURNAL_NAME = /^journal-(\d+)\.log$/;

/**
 * The system calls journal writes (headers, appends, rotation frames) and syncs go through. A test
 * seam: tests replace members to inject failures (ENOSPC, short writes) and put them back; nothing
 * else should touch it. Every write names its position (`pwrite(2)`).
 */
export const journalSyscalls = {
  writeSync: writeSync as (fd: number, buffer: Uint8Array, offset: number, length: number, position: number) => number,
  fdatasyncSync,
  fdatasync: fdatasyncAsync,
};

/**
 * Writes all of `bytes` at `position` of `fd`, looping over short writes; throws what the first
 * failing write throws (the bytes before it may have reached the file).
 * @remarks Positional on purpose: the file offset of a descriptor is not moved back by ftruncate,
 * so after an append that failed half-way (ENOSPC) and was cut back, a write "at the current
 * offset" would land past a zero-filled hole and every later frame would follow damage. Journals
 * are opened without O_APPEND (which would make Linux ignore the position).
 */
function writeAllAt(fd: number, bytes: Uint8Array, position: number): void {
  for (let written = 0; written < bytes.length; ) {
    written += journalSyscalls.writeSync(fd, bytes, written, bytes.length - written, position + written);
  }
}

/** The file name of journal `generation`. */
export function journalName(generation: number): string {
  return `journal-${String(generation).padStart(6, '0')}.log`;
}

/** Generations of the journal files in `dir`, ascending. */
export async function listJournalGenerations(dir: string): Promise<number[]> {
  const generations: number[] = [];
  for (const name of await readdir(dir)) {
    const match = JOURNAL_NAME.exec(name);
    if (match) generations.push(Number(match[1]));
  }
  return generations.sort((a, b) => a - b);
}

/** A batch read back from a journal. */
export interface JournalBatch {
  seq: number;
  ops: PreparedOp[];
}

/** What a journal file holds. */
export interface JournalContents {
  path: string;
  /** The file header, or null when the file is too short for one or it does not check out. */
  header: JournalHeader | null;
  /** Why `header` is null. */
  headerProblem: string | null;
  /** The file is a version-1 text journal. */
  textFormat: boolean;
  /** Intact batches, in file order. */
  batches: JournalBatch[];
  /** The closing rotation frame, when the journal was succeeded. */
  rotation: { nextGeneration: number; lastSeq: number } | null;
  /** Bytes up to the end of the last intact frame (the header's end when there is none). */
  validBytes: number;
  /** Bytes after `validBytes` (a torn tail); 0 when the file ends with an intact frame. */
  tornBytes: number;
  /** Frames the torn tail starts (frames whose header is intact), at least 1 when `tornBytes` > 0. */
  tornFrames: number;
  /** What made the tail torn, when it is. */
  tornReason: string | null;
  /**
   * Damage a crash cannot explain, or null: the damaged frame at `validBytes` is followed by the
   * intact start of a later write group, which was written only after the damaged one was durable
   * (so acknowledged). The batches from `validBytes` on are not in `batches`.
   */
  damage: string | null;
}

/** Thrown when a journal is damaged in a way a crash cannot explain, or the journals do not chain. */
export class JournalCorruptError extends Error {
  override readonly name: string = 'JournalCorruptError';
}

/**
 * Thrown when opening would lose acknowledged writes: the journal is shorter than the
 * acknowledgment record says, or damaged before its last write. The message says what is lost and
 * how to open anyway (`acceptDataLoss`).
 */
export class JournalDataLossError extends JournalCorruptError {
  override readonly name = 'JournalDataLossError';
}

/** Frames from `offset` on whose header is intact (damaged or not), at least 1. */
function countTornFrames(data: Buffer, offset: number): number {
  let frames = 0;
  for (let at = offset; at < data.length; ) {
    const read = readFrame(data, at);
    if (!read.ok && !read.headerIntact) break;
    frames++;
    at = read.end;
  }
  return Math.max(1, frames);
}

/**
 * Reads and decodes a whole journal file.
 * @remarks A crash can leave the last write incomplete: a frame cut short, or bytes that never
 * reached the disk. Such a tail is reported in `tornBytes` and not returned. Damage followed by any
 * frame that starts a later write group cannot come from a crash during an append (that group was
 * written only after the damaged one was durable), so it is reported in `damage` for recovery to
 * refuse (or, when told to accept the loss, to cut); a frame after the rotation frame throws
 * {@link JournalCorruptError}.
 */
export async function readJournal(path: string): Promise<JournalContents> {
  const data = await readFile(path);
  const contents: JournalContents = {
    path, header: null, headerProblem: null, textFormat: false, batches: [], rotation: null,
    validBytes: 0, tornBytes: 0, tornFrames: 0, tornReason: null, damage: null,
  };
  try {
    contents.header = decodeFileHeader(data);
  } catch (error) {
    contents.headerProblem = (error as Error).message;
    contents.textFormat = isTextJournal(data);
    return contents;
  }
  let offset = FILE_HEADER_BYTES;
  while (offset < data.length) {
    const read = readFrame(data, offset);
    if (!read.ok) {
      for (let at = offset + 1; at + FRAME_HEADER_BYTES <= data.length; at++) {
        const later = readFrame(data, at);
        if (later.ok && later.groupStart) {
          contents.damage = `${path} is damaged at byte ${offset} (${read.reason}) and a later write group starts intact at byte ${at}, so this is damage, not a torn write`;
          break;
        }
      }
      contents.tornReason = read.reason;
      contents.tornFrames = countTornFrames(data, offset);
      break;
    }
    if (contents.rotation !== null) {
      throw new JournalCorruptError(`journal ${path} has a frame at byte ${offset} after its rotation frame; refusing to open`);
    }
    if (read.frame.type === 'batch') contents.batches.push({ seq: read.frame.seq, ops: read.frame.ops });
    else contents.rotation = { nextGeneration: read.frame.nextGeneration, lastSeq: read.frame.lastSeq };
    offset = read.end;
  }
  contents.validBytes = offset;
  contents.tornBytes = data.length - offset;
  return contents;
}

/**
 * An open journal file that frames are appended to.
 * @remarks Appends are synchronous `write(2)`s to the page cache (cheap, and it keeps a group's
 * bytes contiguous); nothing is durable until {@link sync} or {@link syncNow} returns.
 */
export class JournalWriter {
  private constructor(
    readonly path: string,
    readonly generation: number,
    private readonly fd: number,
    private bytes: number,
  ) {}

  /**
   * Creates journal `generation` in `dir` (replacing a file of that name) with its header, durably:
   * the header is fdatasync'ed and the folder fsync'ed before this resolves.
   * @param baseSeq the seq of the last batch before this journal's first.
   */
  static async create(dir: string, generation: number, baseSeq: number): Promise<JournalWriter> {
    const path = join(dir, journalName(generation));
    const fd = await openAsync(path, 'w', PRIVATE_FILE_MODE);
    try {
      const header = encodeFileHeader({ generation, baseSeq });
      writeAllAt(fd, header, 0);
      await journalSyscalls.fdatasync(fd);
      await fsyncDir(dir);
      return new JournalWriter(path, generation, fd, header.length);
    } catch (error) {
      await closeAsync(fd).catch(() => {});
      // No checkpoint or rotation frame names this journal yet: it holds nothing and goes (recovery
      // removes such a file too, should this fail as well).
      await rm(path, { force: true }).catch(() => {});
      throw error;
    }
  }

  /**
   * Opens existing journal `generation` in `dir` for appending.
   * @param truncateTo cut the file to this length first (to drop a torn tail found on recovery).
   */
  static async open(dir: string, generation: number, truncateTo?: number): Promise<JournalWriter> {
    const path = join(dir, journalName(generation));
    // 'r+', not 'a': with O_APPEND Linux ignores the position of every write (see writeAllAt).
    const fd = await openAsync(path, 'r+');
    try {
      let size = (await fstatAsync(fd)).size;
      if (truncateTo !== undefined && truncateTo < size) {
        await ftruncateAsync(fd, truncateTo);
        await fdatasyncAsync(fd);
        size = truncateTo;
      }
      return new JournalWriter(path, generation, fd, size);
    } catch (error) {
      await closeAsync(fd).catch(() => {});
      throw error;
    }
  }

  /** Bytes in the file. */
  get size(): number {
    return this.bytes;
  }

  /**
   * Appends `chunk` (whole frames) to the file at exactly {@link size} bytes, not yet durable.
   * @remarks On a failed or short write the file is cut back to its previous length (best effort),
   * so a later append cannot follow half a frame; and since every write names its position, the
   * next append starts at that length whatever the failed one left behind.
   */
  append(chunk: Uint8Array): void {
    const before = this.bytes;
    try {
      writeAllAt(this.fd, chunk, before);
      this.bytes = before + chunk.length;
    } catch (error) {
      this.cutBackTo(before);
      throw error;
    }
  }

  /** Cuts the file back to `length` bytes (best effort; used to undo an append that failed). */
  cutBackTo(length: number): void {
    try {
      ftruncateSync(this.fd, length);
      this.bytes = length;
    } catch {
      // the caller poisons the storage anyway
    }
  }

  /** fdatasync on the thread pool: resolves once every appended byte is on stable storage. */
  sync(): Promise<void> {
    return journalSyscalls.fdatasync(this.fd);
  }

  /** fdatasync on the calling thread: returns once every appended byte is on stable storage. */
  syncNow(): void {
    journalSyscalls.fdatasyncSync(this.fd);
  }

  /**
   * Cuts the file back to `length` bytes and makes that durable, or throws.
   * @remarks Used after an append or its fdatasync failed: whatever the failed write left in the
   * page cache past `length` is dropped, and the bytes before it were durable already, so the file
   * is again exactly what was acknowledged and appends can go on.
   */
  truncateDurably(length: number): void {
    ftruncateSync(this.fd, length);
    this.bytes = length;
    journalSyscalls.fdatasyncSync(this.fd);
  }

  /** Closes the file descriptor. */
  close(): Promise<void> {
    return closeAsync(this.fd);
  }
}
