/**
 * When the client may send a request again, as the contract allows: 429 and 503 after Retry-After
 * (or error.retryAfterMs), 500 INTERNAL_ERROR once ("retry once with the same idempotency key"), a
 * network failure once. Never any other 4xx. Every retry reuses the call's idempotency key.
 * @module
 */

/** Retry limits of a client. */
export interface RetryPolicy {
  /** Requests per call, the first included; default 4. */
  maxAttempts: number;
  /** A Retry-After longer than this is not waited for: the error is thrown at once; default 30 s. */
  maxDelayMs: number;
  /** Wait before retrying a network failure or a 500; default 200 ms. */
  shortDelayMs: number;
}

/** The default {@link RetryPolicy}. */
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, maxDelayMs: 30_000, shortDelayMs: 200 };

/** What went wrong with one attempt. */
export type AttemptFailure =
  | { kind: 'network' }
  | { kind: 'status'; status: number; retryAfterMs?: number | undefined; retryAfterHeader?: string | null | undefined };

/** Counts of the attempts of one call so far (including the one that just failed). */
export interface AttemptCounts {
  total: number;
  network: number;
  internal: number;
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * The delay before the next attempt, or null when the failure must be reported.
 * @remarks 429/503 wait for error.retryAfterMs, else Retry-After, else 1 s; a wait above
 * `maxDelayMs` is not retried (an activation-blocked surface says 5 minutes).
 */
export function retryDelay(failure: AttemptFailure, counts: AttemptCounts, policy: RetryPolicy): number | null {
  if (counts.total >= policy.maxAttempts) return null;
  if (failure.kind === 'network') return counts.network <= 1 ? policy.shortDelayMs : null;
  const { status } = failure;
  if (status === 500) return counts.internal <= 1 ? policy.shortDelayMs : null;
  if (status !== 429 && status !== 503) return null;
  const delay = failure.retryAfterMs ?? parseRetryAfter(failure.retryAfterHeader) ?? 1000;
  return delay > policy.maxDelayMs ? null : delay;
}

/** Wait `ms`, or reject with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
