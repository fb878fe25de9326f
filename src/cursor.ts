/**
 * The one list-cursor codec and the one page-size rule of every list (documents, research jobs).
 * A cursor is opaque to clients: base64url JSON bound to one list and one credential, carrying the
 * position after which the next page starts.
 * @module
 */
import { ServiceError, invalid } from './errors.ts';
import { LIST_LIMIT } from './limits.ts';

/** Where the next page starts: after the item `after` (its id or storage position), and for lists ordered by time, at `updatedAt`. */
export interface ListPosition {
  after: string;
  updatedAt?: number;
}

interface CursorBody {
  /** list */
  l: string;
  /** credential */
  c: string;
  /** after */
  a: string;
  /** updatedAt */
  u?: number;
}

function toBase64Url(text: string): string {
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): string {
  return atob(text.replace(/-/g, '+').replace(/_/g, '/'));
}

/** Encode `position` in list `list` for credential `credential`. */
export function encodeCursor(list: string, credential: string, position: ListPosition): string {
  const body: CursorBody = { l: list, c: credential, a: position.after };
  if (position.updatedAt !== undefined) body.u = position.updatedAt;
  return toBase64Url(JSON.stringify(body));
}

/** The error of a cursor that is not one of this list for this credential. */
export function invalidCursor(cause?: unknown): ServiceError {
  return new ServiceError('INVALID_REQUEST', 'The cursor is not a cursor of this list for this credential; send back nextCursor unchanged.', {
    fieldErrors: [{ field: 'cursor', message: 'is not a valid cursor of this list for this credential' }],
    cause,
  });
}

/**
 * Decode a cursor sent back by a client.
 * @remarks A cursor of another list or credential, or anything malformed, is INVALID_REQUEST (400).
 */
export function decodeCursor(list: string, credential: string, cursor: string): ListPosition {
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(cursor)) throw invalidCursor();
  let body: Partial<CursorBody>;
  try {
    body = JSON.parse(fromBase64Url(cursor)) as Partial<CursorBody>;
  } catch {
    throw invalidCursor();
  }
  if (body === null || typeof body !== 'object' || body.l !== list || body.c !== credential || typeof body.a !== 'string') throw invalidCursor();
  if (body.u !== undefined && typeof body.u !== 'number') throw invalidCursor();
  return body.u === undefined ? { after: body.a } : { after: body.a, updatedAt: body.u };
}

/** The page size of a list: 1-50, 20 when none is named (the same rule the contract's `limit` publishes). */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return LIST_LIMIT.default;
  if (!Number.isInteger(limit) || limit < LIST_LIMIT.min || limit > LIST_LIMIT.max) {
    throw invalid(`limit must be an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}.`, [{ field: 'limit', message: `must be an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}` }]);
  }
  return limit;
}
