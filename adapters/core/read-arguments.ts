/**
 * Checks of the arguments of the paged reads, shared by every adapter built on the core.
 * @module
 */

/** The largest `limit` of {@link Storage.listPage} and {@link Storage.readStream}. */
export const MAX_PAGE = 1000;

/**
 * Throws a RangeError unless `limit` is an integer in 1..{@link MAX_PAGE}.
 * @param method the port method, named in the message.
 */
export function checkLimit(method: string, limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new RangeError(`${method}: limit must be an integer from 1 to ${MAX_PAGE}, got ${String(limit)}`);
  }
}

/** Throws a RangeError unless `afterSeq` is a non-negative integer. */
export function checkAfterSeq(afterSeq: number): void {
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) {
    throw new RangeError(`readStream: afterSeq must be a non-negative integer, got ${String(afterSeq)}`);
  }
}
