/**
 * Claims: the storage record that says "this key is being applied", so that a duplicate arriving in
 * another process sharing the store waits for the first application instead of applying again.
 * @module
 */
import type { Clock } from '../clock.ts';
import { recordTopic, type Storage } from '../ports.ts';
import { expiryIndex } from './sweep.ts';

/** How a write takes its key: see {@link IdempotencyStore.run}. */
export type WriteMode = 'claim' | 'optimistic';

/** A claim as stored under a key until the application's record replaces it. */
export interface ClaimRecord {
  claim: true;
  fingerprint: string;
  /** Epoch ms the claim was taken (also what the retention sweep reads). */
  createdAt: number;
}

/** True for a stored {@link ClaimRecord} (an applied record has no `claim`). */
export function isClaim(value: unknown): value is ClaimRecord {
  return (value as { claim?: unknown }).claim === true;
}

/** How long a claim holds by default before it counts as abandoned (its process died): 15 s. */
export const DEFAULT_CLAIM_TIMEOUT_MS = 15_000;
/** Longest wait between two looks at a followed claim when no change notification arrives. */
const POLL_MS = 100;

/** Takes, releases and follows claims of one collection. */
export class ClaimFollower {
  readonly timeoutMs: number;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly collection: string,
    timeoutMs?: number,
  ) {
    this.timeoutMs = timeoutMs ?? DEFAULT_CLAIM_TIMEOUT_MS;
  }

  /** True when `claim` is older than the claim timeout: its application is taken to have died. */
  abandoned(claim: ClaimRecord): boolean {
    return this.clock.now() - claim.createdAt >= this.timeoutMs;
  }

  /**
   * Store a claim of `key` (new, or replacing the record at revision `replaces`).
   * @returns the claim's revision; rejects with a storage conflict when another claim or record won.
   */
  async take(key: string, fingerprint: string, replaces: number | null): Promise<number> {
    const createdAt = this.clock.now();
    const value: ClaimRecord = { claim: true, fingerprint, createdAt };
    await this.storage.commit([{ kind: 'record.put', collection: this.collection, key, value, expectedRevision: replaces, index: expiryIndex(createdAt) }]);
    return (replaces ?? 0) + 1;
  }

  /** Remove this process's claim after a failed application. False when storage refused. */
  async release(key: string, revision: number): Promise<boolean> {
    try {
      await this.storage.commit([{ kind: 'record.delete', collection: this.collection, key, expectedRevision: revision }]);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Settle at the next change of `key` (a change notification), after a short poll interval at the
   * latest (a notification may be lost, e.g. while a database connection reconnects), or when the
   * claim times out.
   */
  follow(key: string, claim: ClaimRecord): Promise<void> {
    const left = Math.max(0, claim.createdAt + this.timeoutMs - this.clock.now());
    return new Promise<void>((resolve) => {
      let unsubscribe: () => void = () => undefined;
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      };
      const timer = setTimeout(done, Math.min(POLL_MS, left));
      try {
        unsubscribe = this.storage.subscribe(recordTopic(this.collection, key), done);
      } catch {
        // a closed store: the poll (and then the next read) answers
      }
    });
  }
}
