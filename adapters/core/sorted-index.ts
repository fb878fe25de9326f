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
/** Inserts buffered before they are merged into the chunks (a read or a remove merges them sooner). */
const PENDING_MAX = 1024;
/** Up to this many buffered inserts are merged one by one (a bulk merge walks the chunks they touch). */
const FEW = 8;

/**
 * Positions in ascending order, held as a list of sorted chunks of at most {@link MAX_CHUNK} items
 * (the layout of Python's `sortedcontainers`), plus inserts not merged yet.
 * @remarks Inserts are buffered and merged in bulk (sorted, then each touched chunk rebuilt once):
 * splicing one item into a long-lived array moves every item after it through the garbage
 * collector's write barrier, ~1 µs for a chunk of a few hundred, and an expiry listing (whose keys
 * count down) inserts at the front of its first chunk on every write. A remove or a page merges the
 * buffer first (a few items one by one, so that a put that replaces an indexed record, a remove and
 * an insert, stays O(log n) plus a splice), then costs O(log n) comparisons plus a splice inside one
 * chunk; a page costs O(log n + limit). Listings read it in descending order ({@link pageBefore}).
 */
export class SortedIndex {
  private chunks: IndexPosition[][] = [];
  private pending: IndexPosition[] = [];
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
    this.pending.push(item);
    if (this.pending.length >= PENDING_MAX) this.merge();
  }

  /**
   * Merges the buffered inserts into the chunks: a few one by one, more in bulk (sorted, then every
   * chunk that receives some rebuilt once; the chunks before the first and after the last are kept).
   */
  private merge(): void {
    const items = this.pending;
    if (items.length === 0) return;
    this.pending = [];
    if (items.length <= FEW || this.chunks.length === 0) {
      if (this.chunks.length === 0) items.sort(comparePositions);
      for (const item of items) this.insertOne(item);
      return;
    }
    items.sort(comparePositions);
    const chunks = this.chunks;
    let c = this.chunkFor(items[0]);
    const out = chunks.slice(0, c);
    let next = 0;
    for (; c < chunks.length && next < items.length; c++) {
      const chunk = chunks[c];
      // Items up to this chunk's last one belong here; the last chunk takes the rest.
      let end = next;
      if (c === chunks.length - 1) end = items.length;
      else while (end < items.length && comparePositions(items[end], chunk[chunk.length - 1]) <= 0) end++;
      if (end === next) out.push(chunk);
      else pushSplit(out, mergeSorted(chunk, items, next, end));
      next = end;
    }
    for (; c < chunks.length; c++) out.push(chunks[c]);
    this.chunks = out;
  }

  /** Puts one item in place: O(log n) comparisons and a splice inside one chunk. */
  private insertOne(item: IndexPosition): void {
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
      return;
    }
    const c = this.chunkFor(item);
    const chunk = this.chunks[c];
    if (comparePositions(chunk[chunk.length - 1], item) < 0) chunk.push(item);
    else chunk.splice(lowerBound(chunk, item), 0, item);
    if (chunk.length > MAX_CHUNK) this.chunks.splice(c + 1, 0, chunk.splice(MAX_CHUNK >>> 1));
  }

  /** Removes the position equal to `item`; returns false when it was not there. */
  remove(item: IndexPosition): boolean {
    this.merge();
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
    this.merge();
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
    this.merge();
    return this.chunks.flat();
  }
}

/** `chunk` and `items[from..to)` (both ascending) merged into a new ascending array. */
function mergeSorted(chunk: readonly IndexPosition[], items: readonly IndexPosition[], from: number, to: number): IndexPosition[] {
  const out: IndexPosition[] = new Array(chunk.length + to - from);
  let a = 0;
  let b = from;
  let k = 0;
  while (a < chunk.length && b < to) out[k++] = comparePositions(items[b], chunk[a]) < 0 ? items[b++] : chunk[a++];
  while (a < chunk.length) out[k++] = chunk[a++];
  while (b < to) out[k++] = items[b++];
  return out;
}

/** Append `items` (ascending) to `chunks` as chunks of at most {@link MAX_CHUNK}, half full when split. */
function pushSplit(chunks: IndexPosition[][], items: IndexPosition[]): void {
  if (items.length <= MAX_CHUNK) {
    chunks.push(items);
    return;
  }
  const fill = MAX_CHUNK >>> 1;
  for (let i = 0; i < items.length; i += fill) chunks.push(items.slice(i, i + fill));
}
