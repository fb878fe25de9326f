/**
 * The acknowledgment record: `ACKED` in the storage folder says how far the journal was
 * acknowledged (the last batch whose commit resolved, with its journal and length), so that
 * recovery can tell a torn last write (normal after a crash) from lost acknowledged writes.
 *
 * ```
 * ACKED (36 bytes)  "KWAK" · u8 version (1) · 3 zero bytes · f64 seq · f64 generation · f64 bytes ·
 *                   u32 crc32(bytes 0..32)                                   (little-endian)
 * ```
 * @module
 */
import { close, fdatasync, open, write } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from './crc32.ts';
import { PRIVATE_FILE_MODE } from './durable-fs.ts';

const openAsync = promisify(open);
const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);
const closeAsync = promisify(close);

/** The record's file name in the storage folder. */
export const ACK_FILE = 'ACKED';
const RECORD_BYTES = 36;
const MAGIC = Buffer.from('KWAK', 'latin1');

/** How far the journal was acknowledged. */
export interface AckPoint {
  /** The last acknowledged batch. */
  seq: number;
  /** The journal generation it is in. */
  generation: number;
  /** That journal's length once it was durable. */
  bytes: number;
}

function encode(point: AckPoint): Buffer {
  const out = Buffer.alloc(RECORD_BYTES);
  MAGIC.copy(out, 0);
  out[4] = 1;
  out.writeDoubleLE(point.seq, 8);
  out.writeDoubleLE(point.generation, 16);
  out.writeDoubleLE(point.bytes, 24);
  out.writeUInt32LE(crc32(out.subarray(0, 32)), 32);
  return out;
}

/**
 * The record in `dir`: the point, null when there is none, or a string saying why it is unreadable
 * (then nothing can be concluded from it).
 */
export async function readAckRecord(dir: string): Promise<AckPoint | null | string> {
  let data: Buffer;
  try {
    data = await readFile(join(dir, ACK_FILE));
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return null;
    return `${ACK_FILE} cannot be read (${(error as Error).message})`;
  }
  if (data.length !== RECORD_BYTES || !data.subarray(0, 4).equals(MAGIC) || data[4] !== 1 || crc32(data.subarray(0, 32)) !== data.readUInt32LE(32)) {
    return `${ACK_FILE} is damaged`;
  }
  return { seq: data.readDoubleLE(8), generation: data.readDoubleLE(16), bytes: data.readDoubleLE(24) };
}

/**
 * Keeps `ACKED` up to date, off the commit path.
 * @remarks {@link note} is called after a group is durable and applied; the record is rewritten in
 * place by an asynchronous write on libuv's thread pool, at most one at a time, always with the
 * newest point (points noted meanwhile are coalesced). It is not fdatasync'ed: it is written only
 * after the journal bytes it vouches for are durable, so whatever version of it survives a crash
 * or power loss never claims more than the journal holds; at worst it lags a little, which only
 * narrows what recovery can prove lost. Failures to write it are ignored for the same reason.
 */
export class AckRecorder {
  private latest: AckPoint;
  private written: AckPoint;
  private pumping: Promise<void> | null = null;

  private constructor(
    private readonly fd: number,
    point: AckPoint,
  ) {
    this.latest = point;
    this.written = point;
  }

  /** Creates or replaces the record in `dir` with `point`, durably (at open). */
  static async open(dir: string, point: AckPoint): Promise<AckRecorder> {
    const fd = await openAsync(join(dir, ACK_FILE), 'w', PRIVATE_FILE_MODE);
    try {
      await writeAsync(fd, encode(point), 0, RECORD_BYTES, 0);
      await fdatasyncAsync(fd);
    } catch (error) {
      await closeAsync(fd).catch(() => {});
      throw error;
    }
    return new AckRecorder(fd, point);
  }

  /** The last point handed to {@link note}. */
  get point(): AckPoint {
    return this.latest;
  }

  /** Records that everything up to `point` is durable and acknowledged. */
  note(point: AckPoint): void {
    this.latest = point;
    this.pumping ??= this.pump().finally(() => (this.pumping = null));
  }

  /** Resolves once the newest point is written. */
  async flush(): Promise<void> {
    while (this.pumping !== null) await this.pumping;
  }

  /** Writes the newest point and closes the file. */
  async close(): Promise<void> {
    await this.flush();
    await closeAsync(this.fd).catch(() => {});
  }

  private async pump(): Promise<void> {
    while (this.written !== this.latest) {
      const point = this.latest;
      try {
        await writeAsync(this.fd, encode(point), 0, RECORD_BYTES, 0);
      } catch {
        // see the class remarks: a lagging record only weakens detection
      }
      this.written = point;
    }
  }
}
