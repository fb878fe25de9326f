/**
 * Base64 for upload bytes kept in JSON records, with web-standard `btoa`/`atob` only.
 * @module
 */

/** Encode bytes as base64 (in 32 KiB slices, so large files do not overflow the argument list). */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Decode base64, or only its first `limit` bytes (content sniffing needs a few KiB, not the file).
 * @remarks Decodes a whole 4-character group prefix, then trims to `limit`.
 */
export function decodeBase64(base64: string, limit = Infinity): Uint8Array {
  const chars = Number.isFinite(limit) ? Math.min(base64.length, Math.ceil(limit / 3) * 4) : base64.length;
  const binary = atob(base64.slice(0, chars));
  const n = Math.min(binary.length, limit);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = binary.charCodeAt(i);
  return out;
}
