/**
 * One committed batch as one journal line: `<crc32 as 8 hex digits> <json>\n`, where the JSON is
 * `{"seq":n,"ops":[...]}` with bytes in base64.
 * @module
 */
import type { DocumentHead } from '../../src/ports.ts';
import { putJson, type PreparedOp } from '../core/prepared-op.ts';
import { fromBase64, toBase64 } from './bytes-codec.ts';
import { crc32 } from './crc32.ts';

/** A batch read back from the journal: its sequence number and its ops. */
export interface JournalBatch {
  seq: number;
  ops: PreparedOp[];
}

const NEWLINE = 0x0a;
const SPACE = 0x20;
const HEX8 = /^[0-9a-f]{8}$/;

function encodeOp(op: PreparedOp): string {
  switch (op.kind) {
    case 'document.create':
      return `{"k":"create","head":${JSON.stringify(op.head)},"snapshot":"${toBase64(op.snapshot)}"}`;
    case 'document.append':
      return `{"k":"append","head":${JSON.stringify(op.head)},"update":"${toBase64(op.update)}"}`;
    case 'document.compact':
      return `{"k":"compact","ref":${JSON.stringify(op.documentRef)},"sv":${op.snapshotVersion},"snapshot":"${toBase64(op.snapshot)}"}`;
    case 'record.put':
      return `{"k":"put","c":${JSON.stringify(op.collection)},"key":${JSON.stringify(op.key)},"value":${putJson(op)}${op.index === null ? '' : `,"ix":${JSON.stringify([op.index.partition, op.index.sortKey])}`}}`;
    case 'record.delete':
      return `{"k":"delete","c":${JSON.stringify(op.collection)},"key":${JSON.stringify(op.key)}}`;
    case 'stream.append':
      return `{"k":"stream","s":${JSON.stringify(op.stream)},"seq":${op.seq},"value":${op.json}}`;
  }
}

/**
 * Encodes a validated batch as one complete journal line (newline included).
 * @remarks Preconditions (`expectedRevision`) are not journaled: only batches that passed validation
 * are written, and replay re-validates versions to catch a damaged journal.
 */
export function encodeBatchLine(seq: number, ops: readonly PreparedOp[]): Buffer {
  const json = `{"seq":${seq},"ops":[${ops.map(encodeOp).join(',')}]}`;
  const length = Buffer.byteLength(json);
  const line = Buffer.allocUnsafe(length + 10);
  line.write(json, 9, length, 'utf8');
  const body = line.subarray(9, 9 + length);
  line.write(crc32(body).toString(16).padStart(8, '0'), 0, 8, 'latin1');
  line[8] = SPACE;
  line[length + 9] = NEWLINE;
  return line;
}

const HEAD_STRINGS = ['documentRef', 'spaceRef', 'accountId', 'title', 'contentSha256'] as const;
const HEAD_NUMBERS = ['version', 'snapshotVersion', 'blockCount', 'createdAt', 'updatedAt'] as const;

function asHead(value: unknown): DocumentHead {
  const h = value as Record<string, unknown> | null;
  if (typeof h !== 'object' || h === null) throw new TypeError('head is not an object');
  for (const f of HEAD_STRINGS) if (typeof h[f] !== 'string') throw new TypeError(`head.${f} is not a string`);
  for (const f of HEAD_NUMBERS) if (typeof h[f] !== 'number') throw new TypeError(`head.${f} is not a number`);
  return h as unknown as DocumentHead;
}

function asString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`${what} is not a string`);
  return value;
}

function decodeOp(raw: unknown): PreparedOp {
  const o = raw as Record<string, unknown>;
  switch (o?.k) {
    case 'create':
      return { kind: 'document.create', head: asHead(o.head), snapshot: fromBase64(o.snapshot) };
    case 'append':
      return { kind: 'document.append', head: asHead(o.head), update: fromBase64(o.update) };
    case 'compact':
      if (typeof o.sv !== 'number') throw new TypeError('compact.sv is not a number');
      return { kind: 'document.compact', documentRef: asString(o.ref, 'compact.ref'), snapshotVersion: o.sv, snapshot: fromBase64(o.snapshot) };
    case 'put':
      if (!('value' in o)) throw new TypeError('put has no value');
      return {
        kind: 'record.put',
        collection: asString(o.c, 'put.c'),
        key: asString(o.key, 'put.key'),
        json: JSON.stringify(o.value),
        index: Array.isArray(o.ix) ? { partition: asString(o.ix[0], 'put.ix'), sortKey: asString(o.ix[1], 'put.ix') } : null,
      };
    case 'stream':
      if (typeof o.seq !== 'number' || !('value' in o)) throw new TypeError('stream entry without seq or value');
      return { kind: 'stream.append', stream: asString(o.s, 'stream.s'), seq: o.seq, json: JSON.stringify(o.value) };
    case 'delete':
      return { kind: 'record.delete', collection: asString(o.c, 'delete.c'), key: asString(o.key, 'delete.key') };
    default:
      throw new TypeError(`unknown op ${JSON.stringify(o?.k)}`);
  }
}

/**
 * Decodes one journal line (without its newline).
 * @throws Error describing what is wrong (checksum, JSON, shape): the line is damaged or torn.
 */
export function decodeBatchLine(line: Uint8Array): JournalBatch {
  const bytes = Buffer.from(line.buffer, line.byteOffset, line.byteLength);
  if (bytes.length < 10 || bytes[8] !== SPACE) throw new Error('not a journal line');
  const hex = bytes.toString('latin1', 0, 8);
  if (!HEX8.test(hex)) throw new Error('no checksum');
  const body = bytes.subarray(9);
  if (crc32(body) !== parseInt(hex, 16)) throw new Error('checksum mismatch');
  const parsed = JSON.parse(body.toString('utf8')) as { seq?: unknown; ops?: unknown };
  if (typeof parsed?.seq !== 'number' || !Array.isArray(parsed.ops)) throw new Error('not a batch');
  return { seq: parsed.seq, ops: parsed.ops.map(decodeOp) };
}
