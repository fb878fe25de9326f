/**
 * Journal files: `journal-<generation>.log` in the storage folder, one line per committed batch.
 * Writing (append + fdatasync) and reading back (with torn-tail detection).
 * @module
 */
import { close, fdatasync, fdatasyncSync, fstat, ftruncate, ftruncateSync, open, writeSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeBatchLine, type JournalBatch } from './journal-codec.ts';
import { fsyncDir } from './durable-fs.ts';

const openAsync = promisify(open);
const fstatAsync = promisify(fstat);
const ftruncateAsync = promisify(ftruncate);
const fdatasyncAsync = promisify(fdatasync);
const closeAsync = promisify(close);

const JOURNAL_NAME = /^journal-(\d+)\.log$/;

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

/** What a journal file holds: its intact batches and where a torn tail starts, if any. */
export interface JournalContents {
  batches: JournalBatch[];
  /** Bytes up to the end of the last intact line. */
  validBytes: number;
  /** Bytes after `validBytes` (a torn tail); 0 when the file ends with an intact line. */
  tornBytes: number;
}

/** Thrown when a journal holds a damaged line followed by intact ones: not a torn write. */
export class JournalCorruptError extends Error {
  override readonly name = 'JournalCorruptError';
}

/**
 * Reads and decodes a whole journal file.
 * @remarks A crash can leave the last write incomplete: a line without its newline, or lines whose
 * bytes never reached the disk. Such a tail is reported in `tornBytes` and not returned. A damaged
 * line followed by any intact line cannot come from a crash during an append, so it throws
 * {@link JournalCorruptError} instead of silently dropping committed batches.
 */
export async function readJournal(path: string): Promise<JournalContents> {
  const data = await readFile(path);
  const batches: JournalBatch[] = [];
  let offset = 0;
  let line = 1;
  while (offset < data.length) {
    const end = data.indexOf(0x0a, offset);
    if (end === -1) break;
    try {
      batches.push(decodeBatchLine(data.subarray(offset, end)));
    } catch (error) {
      for (let at = end + 1, next = data.indexOf(0x0a, at); next !== -1; at = next + 1, next = data.indexOf(0x0a, at)) {
        let intact = false;
        try {
          decodeBatchLine(data.subarray(at, next));
          intact = true;
        } catch {
          // still part of the damaged tail
        }
        if (intact) {
          throw new JournalCorruptError(
            `journal ${path} is corrupt at line ${line} (byte ${offset}): ${(error as Error).message}; ` +
              'intact batches follow it, so this is damage, not a torn write. Refusing to open; restore the folder from a backup.',
          );
        }
      }
      break;
    }
    offset = end + 1;
    line++;
  }
  return { batches, validBytes: offset, tornBytes: data.length - offset };
}

/**
 * An open journal file that batches are appended to.
 * @remarks Appends are synchronous `write(2)`s to the page cache (cheap, and it keeps a group's
 * bytes contiguous); {@link sync} runs `fdatasync(2)` on the thread pool so other commits can queue
 * while it is in flight. Nothing is durable until `sync` resolves.
 */
export class JournalWriter {
  private constructor(
    readonly path: string,
    readonly generation: number,
    private readonly fd: number,
    private bytes: number,
  ) {}

  /**
   * Opens (creating if needed) journal `generation` in `dir` for appending.
   * @param truncateTo cut the file to this length first (to drop a torn tail found on recovery).
   */
  static async open(dir: string, generation: number, truncateTo?: number): Promise<JournalWriter> {
    const path = join(dir, journalName(generation));
    const fd = await openAsync(path, 'a');
    try {
      let size = (await fstatAsync(fd)).size;
      if (truncateTo !== undefined && truncateTo < size) {
        await ftruncateAsync(fd, truncateTo);
        await fdatasyncAsync(fd);
        size = truncateTo;
      }
      if (size === 0) await fsyncDir(dir);
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
   * Appends `chunk` (whole lines) to the file, not yet durable.
   * @remarks On a failed or short write the file is cut back to its previous length (best effort),
   * so a later append cannot follow half a line.
   */
  append(chunk: Uint8Array): void {
    const before = this.bytes;
    try {
      let written = 0;
      while (written < chunk.length) written += writeSync(this.fd, chunk, written, chunk.length - written);
      this.bytes += chunk.length;
    } catch (error) {
      try {
        ftruncateSync(this.fd, before);
      } catch {
        // the caller poisons the storage anyway
      }
      throw error;
    }
  }

  /** fdatasync on the thread pool: resolves once every appended byte is on stable storage. */
  sync(): Promise<void> {
    return fdatasyncAsync(this.fd);
  }

  /** fdatasync on the calling thread: returns once every appended byte is on stable storage. */
  syncNow(): void {
    fdatasyncSync(this.fd);
  }

  /** Closes the file descriptor. */
  close(): Promise<void> {
    return closeAsync(this.fd);
  }
}
