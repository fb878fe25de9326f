/**
 * Bearer token format (docs/http-api.md): `svc_agent_v1_scred_<24 hex>_<secret>`, where the
 * 24 hex are those of the credentialRef and the secret is 43 random base64url characters (32 bytes).
 * @remarks Only the SHA-256 of a token is stored. Verification finds the credential by the embedded
 * credentialRef and compares hashes in constant time.
 * @module
 */

/** Prefix of every bearer token and display prefix. */
export const TOKEN_PREFIX = 'svc_agent_v1_scred_';

const TOKEN_PATTERN = /^svc_agent_v1_scred_([a-f0-9]{24})_([A-Za-z0-9_-]{32,256})$/;
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** 32 cryptographically random bytes as 43 base64url characters (no padding). */
export function randomSecret(): string {
  const bytes = new Uint8Array(33); // 33 bytes = 44 chars; 32 bytes of entropy are kept (43 chars)
  crypto.getRandomValues(bytes);
  let out = '';
  for (let i = 0; i < 33; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64URL[(n >> 18) & 63]! + B64URL[(n >> 12) & 63]! + B64URL[(n >> 6) & 63]! + B64URL[n & 63]!;
  }
  return out.slice(0, 43);
}

/** A new token for a credentialRef (`scred_<24 hex>`). */
export function mintToken(credentialRef: string): string {
  return `${TOKEN_PREFIX}${credentialRef.slice(6)}_${randomSecret()}`;
}

/** The credentialRef embedded in a well-formed token, or null for anything else. */
export function credentialRefOfToken(token: string): string | null {
  const m = TOKEN_PATTERN.exec(token);
  return m ? `scred_${m[1]!}` : null;
}

/** `svc_agent_v1_scred_` + the first 8 hex of the credentialRef + U+2026: exactly 28 characters. */
export function displayPrefix(credentialRef: string): string {
  return `${TOKEN_PREFIX}${credentialRef.slice(6, 14)}\u2026`;
}

/** Equality of two strings whose running time does not depend on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}
