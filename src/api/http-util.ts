/**
 * Small pure helpers of the HTTP edge: query values, entity tags, UTF-8 sizes.
 * @module
 */
import { invalid } from '../errors.ts';
import { utf8Length } from '../text.ts';

/**
 * The first value of a query parameter (`a=1&b=2`), percent-decoded with `+` as space; undefined when
 * absent. A value that does not decode is INVALID_REQUEST naming `query.<name>`.
 */
export function queryParam(query: string, name: string): string | undefined {
  if (query === '') return undefined;
  let start = 0;
  while (start <= query.length) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    const eq = query.indexOf('=', start);
    const keyEnd = eq === -1 || eq > end ? end : eq;
    const rawKey = query.slice(start, keyEnd);
    if (rawKey === name || (rawKey.includes('%') && safeDecode(rawKey) === name)) {
      const raw = keyEnd === end ? '' : query.slice(keyEnd + 1, end);
      const value = safeDecode(raw.includes('+') ? raw.replace(/\+/g, ' ') : raw);
      if (value === null) throw invalid(`The query parameter ${name} is not validly percent-encoded.`, [{ field: `query.${name}`, message: 'is not validly percent-encoded' }]);
      return value;
    }
    start = end + 1;
  }
  return undefined;
}

function safeDecode(text: string): string | null {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** The weak entity tag of one representation of one revision: `W/"<revision>-<format>"`. */
export function weakEtag(revision: string, format: string): string {
  return `W/"${revision}-${format}"`;
}

/** Weak comparison of an If-None-Match header value with an entity tag (`*` matches anything). */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const part of ifNoneMatch.split(',')) {
    const tag = part.trim();
    if (tag === '*') return true;
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === opaque) return true;
  }
  return false;
}

/** Byte length of a body: strings are measured as UTF-8. Short strings skip the exact count when they cannot exceed `limit`. */
export function exceedsBytes(body: string | Uint8Array, limit: number): boolean {
  if (typeof body !== 'string') return body.byteLength > limit;
  if (body.length * 3 <= limit) return false;
  if (body.length > limit) return true;
  return utf8Length(body) > limit;
}

/** The Retry-After header value (whole seconds, rounded up) for a delay in milliseconds. */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(0, Math.ceil(ms / 1000)));
}
