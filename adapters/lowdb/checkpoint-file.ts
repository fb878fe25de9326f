/**
 * The lowdb adapter that stores checkpoints durably: temp file, write, fsync, rename, fsync folder.
 * @module
 */
import { open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Adapter } from 'lowdb';
import { checkpointPieces, decodeCheckpoint, type CheckpointState } from './checkpoint-codec.ts';
import { fsyncDir, hasErrorCode, PRIVATE_FILE_MODE } from './durable-fs.ts';

const CHUNK_BYTES = 1 << 20;

/** The checkpoint's file name inside the storage folder. */
export const CHECKPOINT_FILE = 'checkpoint.json';

/**
 * A lowdb `Adapter` for the checkpoint file (use it as `new Low(new DurableCheckpointFile(path), empty)`).
 * @remarks
 * lowdb's stock `TextFile` renames a temp file without fsync, so after a crash the new name can
 * point at an empty or partial file. This adapter fsyncs the temp file before the rename and the
 * folder after it: the checkpoint at `path` is always either the previous one or the new one, whole.
 * It serialises in pieces of about 1 MiB and awaits each write, so a large state never becomes one
 * giant string and the event loop (and group commits) keep running while it is written.
 */
export class DurableCheckpointFile implements Adapter<CheckpointState> {
  /** Whether the last {@link read} found a checkpoint file. */
  found = false;
  /** Size in bytes of the checkpoint last read or written (0: none). */
  bytes = 0;

  constructor(readonly path: string) {}

  /** The stored checkpoint, or null when there is none yet. */
  async read(): Promise<CheckpointState | null> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if (hasErrorCode(error, 'ENOENT')) {
        this.found = false;
        return null;
      }
      throw error;
    }
    this.found = true;
    this.bytes = Buffer.byteLength(text, 'utf8');
    try {
      return decodeCheckpoint(text);
    } catch (error) {
      throw new Error(`lowdb storage: ${this.path}: ${(error as Error).message}; refusing to open`, { cause: error });
    }
  }

  /** Replaces the checkpoint atomically and durably. */
  async write(state: CheckpointState): Promise<void> {
    const temp = `${this.path}.tmp`;
    const handle = await open(temp, 'w', PRIVATE_FILE_MODE);
    let written = 0;
    try {
      let pieces: string[] = [];
      let length = 0;
      const flush = async () => {
        const chunk = Buffer.from(pieces.join(''), 'utf8');
        pieces = [];
        length = 0;
        written += chunk.length;
        for (let at = 0; at < chunk.length; ) at += (await handle.write(chunk, at, chunk.length - at)).bytesWritten;
      };
      for (const piece of checkpointPieces(state)) {
        pieces.push(piece);
        length += piece.length;
        if (length >= CHUNK_BYTES) await flush();
      }
      await flush();
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => {});
      await rm(temp, { force: true }).catch(() => {});
      throw error;
    }
    await handle.close();
    await rename(temp, this.path);
    await fsyncDir(dirname(this.path));
    this.bytes = written;
  }
}
