/**
 * CRC-32 (IEEE 802.3, the zlib/PNG polynomial) for journal frame and header checksums.
 * @module
 */
import * as zlib from 'node:zlib';

let table: Int32Array | undefined;

function makeTable(): Int32Array {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
}

function crc32Js(bytes: Uint8Array): number {
  table ??= makeTable();
  let crc = -1;
  for (let i = 0; i < bytes.length; i++) crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

const native = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

/**
 * The CRC-32 of `bytes` as an unsigned 32-bit number.
 * @remarks Uses `zlib.crc32` where Node has it (20.15+, 22.2+), a table-driven fallback otherwise;
 * both give identical results, so journals move freely between Node versions.
 */
export const crc32: (bytes: Uint8Array) => number = native ?? crc32Js;

/** The portable implementation, exported so tests can check it against the native one. */
export const crc32Portable: (bytes: Uint8Array) => number = crc32Js;
