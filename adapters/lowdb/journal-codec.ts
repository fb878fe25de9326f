/**
 * The binary journal format (version 2): a file header, then one frame per committed batch, and a
 * closing rotation frame once the journal has been succeeded by the next one.
 *
 * ```
 * file header (28 bytes)  "KWJL" · u8 format (2) · 3 zero bytes · f64 generation · f64 baseSeq · u32 crc32(bytes 0..24)
 * frame                   u32 body length (bit 31: first frame of a group) · u32 crc32(body) ·
 *                         u32 crc32(the 8 bytes before) · body
 * batch body              u8 1 · f64 seq · u32 op count · ops
 * rotation body           u8 2 · f64 next generation · f64 last seq
 * op                      u8 code, then: 7 create: head, bytes snapshot · 8 append: head, bytes update ·
 *                         9 compact: str ref, f64 snapshotVersion, f64 generation, bytes snapshot ·
 *                         4 put: str collection, str key, str json, u8 indexed [str partition, str sortKey] ·
 *                         5 delete: str collection, str key · 6 stream: str stream, f64 seq, str json ·
 *                         read only (written before heads had a generation; it reads as 0):
 *                         1 create, 2 append (head without generation), 3 compact (without it)
 * head                    str documentRef, spaceRef, accountId, title, contentSha256 ·
 *                         f64 version, snapshotVersion, blockCount, createdAt, updatedAt, generation
 * str / bytes             u32 byte length · UTF-8 / raw bytes        (all integers little-endian)
 * ```
 * Yjs updates and snapshots are stored as raw bytes, record values as their JSON text. The frame
 * header has its own checksum, so a reader can find intact frames after damage without trusting a
 * damaged length. The group bit marks the first frame of each write+fdatasync: a group is written
 * only after the one before it is durable, so damage followed by the start of a later group is
 * corruption, while damage followed only by frames of its own group is a torn write.
 * @module
 */
import type { DocumentHead } from '../../src/ports.ts';
import { putJson, type PreparedOp } from '../core/prepared-op.ts';
import { BinaryReader, BinaryWriter, maxUtf8Bytes } from './binary-fields.ts';
import { crc32 } from './crc32.ts';

/** The journal's format version, in its file header. */
export const JOURNAL_FORMAT = 2;
/** Bytes of the file header. */
export const FILE_HEADER_BYTES = 28;
/** Bytes of a frame header. */
export const FRAME_HEADER_BYTES = 12;
const MAGIC = Buffer.from('KWJL', 'latin1');

/** What a journal's file header says: its generation and the seq of the batch before its first. */
export interface JournalHeader {
  generation: number;
  baseSeq: number;
}

/** A decoded frame: a committed batch, or the mark that the next generation took over. */
export type JournalFrame = { type: 'batch'; seq: number; ops: PreparedOp[] } | { type: 'rotation'; nextGeneration: number; lastSeq: number };

/** Encodes a journal's file header. */
export function encodeFileHeader(header: JournalHeader): Buffer {
  const out = Buffer.alloc(FILE_HEADER_BYTES);
  MAGIC.copy(out, 0);
  out[4] = JOURNAL_FORMAT;
  out.writeDoubleLE(header.generation, 8);
  out.writeDoubleLE(header.baseSeq, 16);
  out.writeUInt32LE(crc32(out.subarray(0, 24)), 24);
  return out;
}

/** True when `data` starts like a version-1 journal (`<8 hex digits> {json}` text lines). */
export function isTextJournal(data: Uint8Array): boolean {
  return data.length >= 10 && /^[0-9a-f]{8} \{$/.test(Buffer.from(data.buffer, data.byteOffset, 10).toString('latin1'));
}

/**
 * Decodes a file header.
 * @throws Error saying what is wrong (too short, not a journal, other format version, checksum).
 */
export function decodeFileHeader(data: Buffer): JournalHeader {
  if (data.length < FILE_HEADER_BYTES) throw new Error(`it holds ${data.length} bytes, less than a journal header`);
  if (!data.subarray(0, 4).equals(MAGIC)) throw new Error('it does not start with a journal header');
  if (data[4] !== JOURNAL_FORMAT) throw new Error(`its format version ${data[4]} is not ${JOURNAL_FORMAT}`);
  if (crc32(data.subarray(0, 24)) !== data.readUInt32LE(24)) throw new Error('its header checksum does not match');
  return { generation: data.readDoubleLE(8), baseSeq: data.readDoubleLE(16) };
}

function headBound(h: DocumentHead): number {
  return 5 * 4 + maxUtf8Bytes(h.documentRef) + maxUtf8Bytes(h.spaceRef) + maxUtf8Bytes(h.accountId) + maxUtf8Bytes(h.title) + maxUtf8Bytes(h.contentSha256) + 6 * 8;
}

function opBound(op: PreparedOp): number {
  switch (op.kind) {
    case 'document.create':
    case 'document.append':
      return 1 + headBound(op.head) + 4 + (op.kind === 'document.create' ? op.snapshot : op.update).length;
    case 'document.compact':
      return 1 + 4 + maxUtf8Bytes(op.documentRef) + 2 * 8 + 4 + op.snapshot.length;
    case 'record.put': {
      const index = op.index === null ? 0 : 8 + maxUtf8Bytes(op.index.partition) + maxUtf8Bytes(op.index.sortKey);
      return 1 + 12 + maxUtf8Bytes(op.collection) + maxUtf8Bytes(op.key) + maxUtf8Bytes(putJson(op)) + 1 + index;
    }
    case 'record.delete':
      return 1 + 8 + maxUtf8Bytes(op.collection) + maxUtf8Bytes(op.key);
    case 'stream.append':
      return 1 + 8 + maxUtf8Bytes(op.stream) + 8 + maxUtf8Bytes(op.json);
  }
}

function writeHead(w: BinaryWriter, h: DocumentHead): void {
  w.str(h.documentRef);
  w.str(h.spaceRef);
  w.str(h.accountId);
  w.str(h.title);
  w.str(h.contentSha256);
  w.f64(h.version);
  w.f64(h.snapshotVersion);
  w.f64(h.blockCount);
  w.f64(h.createdAt);
  w.f64(h.updatedAt);
  w.f64(h.generation);
}

function writeOp(w: BinaryWriter, op: PreparedOp): void {
  switch (op.kind) {
    case 'document.create':
    case 'document.append':
      w.u8(op.kind === 'document.create' ? 7 : 8);
      writeHead(w, op.head);
      w.bytes(op.kind === 'document.create' ? op.snapshot : op.update);
      return;
    case 'document.compact':
      w.u8(9);
      w.str(op.documentRef);
      w.f64(op.snapshotVersion);
      w.f64(op.generation);
      w.bytes(op.snapshot);
      return;
    case 'record.put':
      w.u8(4);
      w.str(op.collection);
      w.str(op.key);
      w.str(putJson(op));
      w.u8(op.index === null ? 0 : 1);
      if (op.index !== null) {
        w.str(op.index.partition);
        w.str(op.index.sortKey);
      }
      return;
    case 'record.delete':
      w.u8(5);
      w.str(op.collection);
      w.str(op.key);
      return;
    case 'stream.append':
      w.u8(6);
      w.str(op.stream);
      w.f64(op.seq);
      w.str(op.json);
      return;
  }
}

const GROUP_BIT = 0x80000000;

/** Fills in the frame header in front of a body written at FRAME_HEADER_BYTES. */
function seal(frame: Buffer, groupStart: boolean): Buffer {
  const body = frame.subarray(FRAME_HEADER_BYTES);
  if (body.length >= GROUP_BIT) throw new RangeError(`a journal frame holds at most 2 GiB, this batch needs ${body.length} bytes`);
  frame.writeUInt32LE((body.length | (groupStart ? GROUP_BIT : 0)) >>> 0, 0);
  frame.writeUInt32LE(crc32(body), 4);
  frame.writeUInt32LE(crc32(frame.subarray(0, 8)), 8);
  return frame;
}

/** Marks an encoded frame as the first of its write group (in place; re-checksums its header). */
export function markGroupStart(frame: Buffer): void {
  frame.writeUInt32LE((frame.readUInt32LE(0) | GROUP_BIT) >>> 0, 0);
  frame.writeUInt32LE(crc32(frame.subarray(0, 8)), 8);
}

/**
 * Encodes a validated batch as one frame.
 * @remarks Preconditions (`expectedRevision`) are not journaled: only batches that passed validation
 * are written, and replay re-validates versions and seqs to catch a damaged journal.
 */
export function encodeBatchFrame(seq: number, ops: readonly PreparedOp[]): Buffer {
  let bound = FRAME_HEADER_BYTES + 1 + 8 + 4;
  for (const op of ops) bound += opBound(op);
  const w = new BinaryWriter(Buffer.allocUnsafe(bound), FRAME_HEADER_BYTES);
  w.u8(1);
  w.f64(seq);
  w.u32(ops.length);
  for (const op of ops) writeOp(w, op);
  return seal(w.written(), false);
}

/** Encodes the frame that closes a journal: the next generation holds the batches after `lastSeq`. */
export function encodeRotationFrame(nextGeneration: number, lastSeq: number): Buffer {
  const w = new BinaryWriter(Buffer.alloc(FRAME_HEADER_BYTES + 17), FRAME_HEADER_BYTES);
  w.u8(2);
  w.f64(nextGeneration);
  w.f64(lastSeq);
  return seal(w.written(), true);
}

/** A head; `withGeneration` false for the op codes written before heads had one (generation 0). */
function readHead(r: BinaryReader, withGeneration: boolean): DocumentHead {
  return {
    documentRef: r.str('head.documentRef'),
    spaceRef: r.str('head.spaceRef'),
    accountId: r.str('head.accountId'),
    title: r.str('head.title'),
    contentSha256: r.str('head.contentSha256'),
    version: r.f64('head.version'),
    snapshotVersion: r.f64('head.snapshotVersion'),
    blockCount: r.f64('head.blockCount'),
    createdAt: r.f64('head.createdAt'),
    updatedAt: r.f64('head.updatedAt'),
    generation: withGeneration ? r.f64('head.generation') : 0,
  };
}

function readOp(r: BinaryReader): PreparedOp {
  const code = r.u8('op code');
  switch (code) {
    case 1:
    case 7:
      return { kind: 'document.create', head: readHead(r, code === 7), snapshot: r.bytes('snapshot') };
    case 2:
    case 8:
      return { kind: 'document.append', head: readHead(r, code === 8), update: r.bytes('update') };
    case 3:
    case 9: {
      const documentRef = r.str('compact.documentRef');
      const snapshotVersion = r.f64('compact.snapshotVersion');
      const generation = code === 9 ? r.f64('compact.generation') : 0;
      return { kind: 'document.compact', documentRef, snapshotVersion, generation, snapshot: r.bytes('snapshot') };
    }
    case 4: {
      const collection = r.str('put.collection');
      const key = r.str('put.key');
      const json = r.str('put.json');
      const index = r.u8('put.indexed') === 1 ? { partition: r.str('put.partition'), sortKey: r.str('put.sortKey') } : null;
      return { kind: 'record.put', collection, key, json, index };
    }
    case 5:
      return { kind: 'record.delete', collection: r.str('delete.collection'), key: r.str('delete.key') };
    case 6:
      return { kind: 'stream.append', stream: r.str('stream'), seq: r.f64('stream.seq'), json: r.str('stream.json') };
    default:
      throw new Error(`unknown op code ${code}`);
  }
}

/** Where a frame starts and what is there. */
export type FrameRead =
  | { ok: true; frame: JournalFrame; end: number; groupStart: boolean }
  /** `headerIntact`: the frame header checked out (its length is trustworthy; `end` is where it would end). */
  | { ok: false; reason: string; headerIntact: boolean; end: number };

/** Reads the frame at `offset` of `data` (a whole journal file). Never throws. */
export function readFrame(data: Buffer, offset: number): FrameRead {
  if (data.length - offset < FRAME_HEADER_BYTES) return { ok: false, reason: 'an incomplete frame header', headerIntact: false, end: data.length };
  if (crc32(data.subarray(offset, offset + 8)) !== data.readUInt32LE(offset + 8)) {
    return { ok: false, reason: 'a frame header checksum mismatch', headerIntact: false, end: data.length };
  }
  const word = data.readUInt32LE(offset);
  const length = word & ~GROUP_BIT;
  const end = offset + FRAME_HEADER_BYTES + length;
  if (end > data.length) return { ok: false, reason: `an incomplete frame (${data.length - offset} of ${end - offset} bytes)`, headerIntact: true, end };
  const body = data.subarray(offset + FRAME_HEADER_BYTES, end);
  if (crc32(body) !== data.readUInt32LE(offset + 4)) return { ok: false, reason: 'a frame body checksum mismatch', headerIntact: true, end };
  try {
    const r = new BinaryReader(body);
    const type = r.u8('frame type');
    let frame: JournalFrame;
    if (type === 1) {
      const seq = r.f64('seq');
      const count = r.u32('op count');
      if (count > body.length) throw new Error(`op count ${count} exceeds the frame`);
      const ops: PreparedOp[] = new Array(count);
      for (let i = 0; i < ops.length; i++) ops[i] = readOp(r);
      frame = { type: 'batch', seq, ops };
    } else if (type === 2) {
      frame = { type: 'rotation', nextGeneration: r.f64('next generation'), lastSeq: r.f64('last seq') };
    } else throw new Error(`unknown frame type ${type}`);
    if (!r.done) throw new Error('bytes left over after the last field');
    return { ok: true, frame, end, groupStart: word >= GROUP_BIT };
  } catch (error) {
    return { ok: false, reason: `a malformed frame body (${(error as Error).message})`, headerIntact: true, end };
  }
}
