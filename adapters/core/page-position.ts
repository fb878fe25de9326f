/**
 * The opaque `next` position of {@link Storage.listPage}: base64url of the JSON pair
 * `[sortKey, key]` of the last record of a page.
 * @module
 */
import type { IndexPosition } from './sorted-index.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Encodes a listing position as an opaque, URL-safe string. */
export function encodePagePosition(position: IndexPosition): string {
  const bytes = encoder.encode(JSON.stringify([position.sortKey, position.key]));
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Decodes a position made by {@link encodePagePosition}.
 * @throws TypeError when `text` is not such a position (the caller passed something else).
 */
export function decodePagePosition(text: string): IndexPosition {
  const invalid = (cause?: unknown) => new TypeError(`listPage: ${JSON.stringify(text)} is not a page position returned by listPage`, { cause });
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalid();
  let pair: unknown;
  try {
    const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
    pair = JSON.parse(decoder.decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0))));
  } catch (error) {
    throw invalid(error);
  }
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') throw invalid();
  return { sortKey: pair[0], key: pair[1] };
}
