/**
 * The one binary search of the in-memory core.
 * @module
 */

/**
 * The index of the first item of `items` for which `isPast` holds, or `items.length` when none does.
 * @remarks `items` must be partitioned: `isPast` false for a prefix and true for the rest (as for
 * "item >= target" over an ascending array). O(log n) calls of `isPast`.
 */
export function partitionPoint<T>(items: readonly T[], isPast: (item: T) => boolean, from = 0, to = items.length): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (isPast(items[mid])) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
