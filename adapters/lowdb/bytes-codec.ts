/**
 * Bytes as base64 text, for the JSON checkpoint.
 * @module
 */

/** Standard base64 (with padding) of `bytes`, without copying them. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes standard base64 into a fresh, unshared Uint8Array (not a pooled Buffer view).
 * @throws TypeError when `text` is not a string of base64 characters.
 */
export function fromBase64(text: unknown): Uint8Array {
  if (typeof text !== 'string' || text.length % 4 !== 0 || !BASE64.test(text)) throw new TypeError('invalid base64 bytes');
  return new Uint8Array(Buffer.from(text, 'base64'));
}
