/**
 * One listing of {@link Storage.listPage}: the (sortKey, key) positions of a partition's records,
 * kept sorted.
 * @module
 */
import { partitionPoint } from './binary-search.ts';

/** A record's place in a listing. Compared by `sortKey`, then `key` (JavaScript string order). */
export interface IndexPosition {
  readonly sortKey: string;
  readonly key: string;
}

/** Negative when `a` sorts before `b`, positive after, 0 for the same position. */
export function comparePositions(a: IndexPosition, b: IndexPosition): number {
  if (a.sortKey !== b.sortKey) return a.sortKey < b.sortKey ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Index of the first item of `items` that is >= `target` (items ascend). */
function lowerBound(items: readonly IndexPosition[], target: IndexPosition): number {
  return partitionPoint(items, (item) => comparePositions(item, target) >= 0);
}
const MAX_CHUNK = 512;

/**
 * Positions in ascending order, held as a list of sorted chunks of at most {@link MAX_CHUNK} items
 * (the layout of Python's `sortedcontainers`).
 * @remarks Insert and remove cost O(log n) comparisons plus a splice inside one chunk; a page costs
 * O(log n + limit). The common cases land at an end: a new record with the newest sortKey at the
 * end of the last chunk, one with the oldest (an expiry listing counts down) at the start of the first. Listings read it in descending order ({@link pageBefore}).
 */
export class SortedIndex {
  private chunks: IndexPosition[][] = [];
  private count = 0;

  /** Number of positions. */
  get size(): number {
    return this.count;
  }

  /** The chunk that holds, or would hold, `item`: the first whose last item is >= it, else the last. */
  private chunkFor(item: IndexPosition): number {
    const last = this.chunks.length - 1;
    return partitionPoint(this.chunks, (chunk) => comparePositions(chunk[chunk.length - 1], item) >= 0, 0, last);
  }

  /** Adds `item`; the caller makes sure the same position is not present twice. */
  insert(item: IndexPosition): void {
    this.count++;
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
      return;
    }
    let c: number;
    const first = this.chunks[0];
    if (comparePositions(item, first[0]) < 0) {
      c = 0;
      first.unshift(item);
    } else {
      c = this.chunkFor(item);
      const chunk = this.chunks[c];
      if (comparePositions(chunk[chunk.length - 1], item) < 0) chunk.push(item);
      else chunk.splice(lowerBound(chunk, item), 0, item);
    }
    const chunk = this.chunks[c];
    if (chunk.length > MAX_CHUNK) this.chunks.splice(c + 1, 0, chunk.splice(MAX_CHUNK >>> 1));
  }

  /** Removes the position equal to `item`; returns false when it was not there. */
  remove(item: IndexPosition): boolean {
    if (this.chunks.length === 0) return false;
    const c = this.chunkFor(item);
    const chunk = this.chunks[c];
    const at = lowerBound(chunk, item);
    if (at === chunk.length || comparePositions(chunk[at], item) !== 0) return false;
    chunk.splice(at, 1);
    if (chunk.length === 0) this.chunks.splice(c, 1);
    this.count--;
    return true;
  }

  /**
   * Up to `limit` positions in descending order, starting with the greatest one strictly below
   * `before` (from the greatest of all when `before` is null).
   */
  pageBefore(before: IndexPosition | null, limit: number): IndexPosition[] {
    const out: IndexPosition[] = [];
    const chunks = this.chunks;
    if (chunks.length === 0 || limit <= 0) return out;
    let c = chunks.length - 1;
    let i = chunks[c].length - 1;
    if (before !== null) {
      c = this.chunkFor(before);
      i = lowerBound(chunks[c], before) - 1;
    }
    while (out.length < limit) {
      if (i < 0) {
        if (--c < 0) break;
        i = chunks[c].length - 1;
        continue;
      }
      out.push(chunks[c][i--]);
    }
    return out;
  }

  /** Every position, ascending (for tests). */
  toArray(): IndexPosition[] {
    return this.chunks.flat();
  }
}
