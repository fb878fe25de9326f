/**
 * Opaque cursors of the library listing, bound to the list and the credential that read it.
 * @module
 */
import { invalid } from '../errors.ts';

const LIST = 'library.items';

function toBase64Url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): string {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

/** Wrap a storage page position for `credential`. */
export function encodeListCursor(credential: string, next: string): string {
  return toBase64Url(JSON.stringify({ l: LIST, c: credential, n: next }));
}

/**
 * Unwrap a cursor sent back by a client.
 * @remarks A cursor of another list or credential, or anything malformed, is INVALID_REQUEST on `cursor`.
 */
export function decodeListCursor(credential: string, cursor: string): string {
  const bad = () =>
    invalid('The cursor is not a cursor of the library list for this credential; send back nextCursor unchanged.', [
      { field: 'cursor', message: 'is not a valid cursor of this list for this credential' },
    ]);
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(cursor)) throw bad();
  let body: { l?: unknown; c?: unknown; n?: unknown };
  try {
    body = JSON.parse(fromBase64Url(cursor)) as typeof body;
  } catch {
    throw bad();
  }
  if (body === null || body.l !== LIST || body.c !== credential || typeof body.n !== 'string') throw bad();
  return body.n;
}
