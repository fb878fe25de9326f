/**
 * The binary journal format: every op kind round-trips exactly, frames carry their group mark, and
 * damage is reported as data, never thrown.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PreparedOp } from '../core/prepared-op.ts';
import {
  FILE_HEADER_BYTES,
  FRAME_HEADER_BYTES,
  decodeFileHeader,
  encodeBatchFrame,
  encodeFileHeader,
  encodeRotationFrame,
  isTextJournal,
  markGroupStart,
  readFrame,
} from './journal-codec.ts';
import { BinaryWriter } from './binary-fields.ts';
import { crc32 } from './crc32.ts';
import { head } from './lowdb-kit.ts';

const allBytes = Uint8Array.from({ length: 256 * 3 }, (_, i) => i % 256);
const ops: PreparedOp[] = [
  { kind: 'document.create', head: head('d-ü ✓', 1, { title: 'tïtle "q"\n', updatedAt: 1.5e12 + 0.25 }), snapshot: allBytes },
  { kind: 'document.append', head: head('d', 2, { generation: 4 }), update: new Uint8Array(0) },
  { kind: 'document.compact', documentRef: 'd', snapshotVersion: 2, generation: 3, snapshot: allBytes.subarray(3, 9).slice() },
  { kind: 'record.put', collection: 'c', key: 'k/ü', json: '{"a":[1,null,"✓"]}', index: null },
  { kind: 'record.put', collection: 'c', key: '', json: '0', index: { partition: 'p 😀', sortKey: '0000001' } },
  { kind: 'record.delete', collection: 'c', key: 'k' },
  { kind: 'stream.append', stream: 'events:j1', seq: 7, json: '{"type":"done"}' },
];

test('a batch frame decodes to exactly the ops that were encoded', () => {
  const frame = encodeBatchFrame(42, ops);
  const read = readFrame(frame, 0);
  assert.ok(read.ok);
  if (!read.ok) return;
  assert.equal(read.frame, { type: 'batch', seq: 42, ops });
  assert.is(read.end, frame.length);
  assert.is(read.groupStart, false);
  const decoded = read.frame.type === 'batch' ? read.frame.ops[0] : null;
  assert.ok(decoded?.kind === 'document.create' && decoded.snapshot.buffer !== frame.buffer, 'bytes are copied out of the file buffer');
});

test('markGroupStart sets the group bit and keeps the frame valid', () => {
  const frame = encodeBatchFrame(1, ops.slice(0, 2));
  markGroupStart(frame);
  const read = readFrame(frame, 0);
  assert.ok(read.ok && read.groupStart);
  const rotation = readFrame(encodeRotationFrame(5, 99), 0);
  assert.ok(rotation.ok && rotation.groupStart, 'a rotation frame is its own group');
  if (rotation.ok) assert.equal(rotation.frame, { type: 'rotation', nextGeneration: 5, lastSeq: 99 });
});

test('a cut, flipped or zeroed frame is reported with a reason and whether its header held', () => {
  const frame = encodeBatchFrame(3, ops);
  const cut = readFrame(frame.subarray(0, frame.length - 1), 0);
  assert.equal(cut.ok ? null : [cut.headerIntact, /incomplete frame/.test(cut.reason)], [true, true]);
  const short = readFrame(frame.subarray(0, FRAME_HEADER_BYTES - 1), 0);
  assert.equal(short.ok ? null : [short.headerIntact, short.reason], [false, 'an incomplete frame header']);
  const body = Buffer.from(frame);
  body[FRAME_HEADER_BYTES + 20] ^= 0x40;
  const flipped = readFrame(body, 0);
  assert.equal(flipped.ok ? null : [flipped.headerIntact, flipped.reason], [true, 'a frame body checksum mismatch']);
  const header = Buffer.from(frame);
  header[1] ^= 0x01;
  const badHeader = readFrame(header, 0);
  assert.equal(badHeader.ok ? null : [badHeader.headerIntact, badHeader.reason], [false, 'a frame header checksum mismatch']);
  assert.not.ok(readFrame(Buffer.alloc(64), 0).ok, 'zeros are not a frame');
});

test('ops written before heads had a generation (codes 1-3) read back as generation 0', () => {
  const h = head('d', 2);
  const w = new BinaryWriter(Buffer.alloc(512), FRAME_HEADER_BYTES);
  w.u8(1); // a batch
  w.f64(9);
  w.u32(3);
  for (const code of [1, 2]) {
    w.u8(code);
    for (const text of [h.documentRef, h.spaceRef, h.accountId, h.title, h.contentSha256]) w.str(text);
    for (const n of [h.version, h.snapshotVersion, h.blockCount, h.createdAt, h.updatedAt]) w.f64(n);
    w.bytes(allBytes.subarray(0, 5));
  }
  w.u8(3);
  w.str('d');
  w.f64(2);
  w.bytes(allBytes.subarray(5, 7));
  const frame = w.written();
  const body = frame.subarray(FRAME_HEADER_BYTES);
  frame.writeUInt32LE(body.length, 0);
  frame.writeUInt32LE(crc32(body), 4);
  frame.writeUInt32LE(crc32(frame.subarray(0, 8)), 8);
  const read = readFrame(frame, 0);
  assert.equal(read.ok && read.frame, {
    type: 'batch',
    seq: 9,
    ops: [
      { kind: 'document.create', head: { ...h, generation: 0 }, snapshot: allBytes.subarray(0, 5) },
      { kind: 'document.append', head: { ...h, generation: 0 }, update: allBytes.subarray(0, 5) },
      { kind: 'document.compact', documentRef: 'd', snapshotVersion: 2, generation: 0, snapshot: allBytes.subarray(5, 7) },
    ],
  });
});

test('the file header round-trips and refuses other files with a reason', () => {
  const header = encodeFileHeader({ generation: 12, baseSeq: 3456 });
  assert.is(header.length, FILE_HEADER_BYTES);
  assert.equal(decodeFileHeader(header), { generation: 12, baseSeq: 3456 });
  assert.throws(() => decodeFileHeader(header.subarray(0, 10)), /less than a journal header/);
  assert.throws(() => decodeFileHeader(Buffer.from('0a1b2c3d {"seq":1,"ops":[]}\n'.padEnd(40))), /does not start with a journal header/);
  const other = Buffer.from(header);
  other[4] = 3;
  assert.throws(() => decodeFileHeader(other), /format version 3 is not 2/);
  const damaged = Buffer.from(header);
  damaged[9] ^= 1;
  assert.throws(() => decodeFileHeader(damaged), /header checksum/);
  assert.ok(isTextJournal(Buffer.from('0a1b2c3d {"seq":1}\n')));
  assert.not.ok(isTextJournal(header));
});

test.run();
