/**
 * Opaque list cursors bound to one list and one credential.
 * @module
 */
import { invalid } from '../errors.ts';
import type { HeadCursor } from '../ports.ts';

interface CursorBody {
  l: string;
  c: string;
  u: number;
  d: string;
}

function toBase64Url(text: string): string {
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): string {
  return atob(text.replace(/-/g, '+').replace(/_/g, '/'));
}

/** Encode the position after `head` in list `list` for credential `credential`. */
export function encodeCursor(list: string, credential: string, pos: HeadCursor): string {
  const body: CursorBody = { l: list, c: credential, u: pos.updatedAt, d: pos.documentRef };
  return toBase64Url(JSON.stringify(body));
}

/**
 * Decode a cursor sent back by a client.
 * @remarks A cursor of another list or credential, or anything malformed, is INVALID_REQUEST (400).
 */
export function decodeCursor(list: string, credential: string, cursor: string): HeadCursor {
  const bad = () => invalid('The cursor is not a cursor of this list for this credential; send back nextCursor unchanged.', [
    { field: 'cursor', message: 'is not a valid cursor of this list for this credential' },
  ]);
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(cursor)) throw bad();
  let body: Partial<CursorBody>;
  try {
    body = JSON.parse(fromBase64Url(cursor)) as Partial<CursorBody>;
  } catch {
    throw bad();
  }
  if (body.l !== list || body.c !== credential || typeof body.u !== 'number' || typeof body.d !== 'string') throw bad();
  return { updatedAt: body.u, documentRef: body.d };
}

/** Parse the `limit` query value: 1-50, default 20. */
export function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return 20;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 50) {
    throw invalid('limit must be an integer from 1 to 50.', [{ field: 'limit', message: 'must be an integer from 1 to 50' }]);
  }
  return Number(raw);
}
