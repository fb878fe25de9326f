/**
 * Request budgets (docs/http-api.md): `requestBudget` requests per window; the window
 * starts at the credential's creation and repeats every `windowMs`.
 * @remarks Charging is synchronous and in memory: the hot path never writes storage. Dirty counters are
 * persisted in the background at most about once a second, and on {@link BudgetLedger.flush}, so a
 * restart keeps the count (losing at most the last second of charges on a crash).
 * With a storage shared by several processes (`storage.sharedByProcesses` and `takeCount`), each
 * charge is instead one atomic `takeCount` in the storage ({@link BudgetLedger.take}): never more
 * than `requestBudget` successes per window in total, whichever processes serve them.
 * @module
 */
import type { Clock } from '../clock.ts';
import { logErrorToConsole, type ErrorReporter } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import type { Storage } from '../ports.ts';

/** Storage collection of persisted counters, keyed by credentialRef. */
export const BUDGET_COLLECTION = 'credential-budgets';

/** The persisted counter of one credential. */
interface StoredCounter {
  v: 1;
  /** Start of the window the count belongs to (epoch ms). */
  windowStart: number;
  used: number;
}

interface Counter {
  windowStart: number;
  used: number;
}

/** What the ledger needs to know of a credential. */
export interface Budgeted {
  credentialRef: string;
  createdAt: number;
  requestBudget: number;
}

/** Where a credential stands in its current window. */
export interface BudgetStatus {
  limit: number;
  remaining: number;
  windowStart: number;
  windowEnd: number;
}

/** In-memory budget counters with background persistence. */
export interface BudgetLedger {
  /** Load the persisted counter of a credential once; charges before that start from zero. */
  load(credential: Budgeted): Promise<void>;
  /** Count one request. Throws RATE_LIMITED (retryAfterMs: time to the window end) when spent. */
  charge(credential: Budgeted): BudgetStatus;
  /** True when charges must go through the storage ({@link BudgetLedger.take}): several processes share it. */
  readonly shared: boolean;
  /**
   * Count one request atomically in the storage (exact across processes). Rejects with RATE_LIMITED
   * when spent. Only when {@link BudgetLedger.shared}.
   */
  take(credential: Budgeted): Promise<BudgetStatus>;
  /** The current standing, without charging. */
  status(credential: Budgeted): BudgetStatus;
  /** Persist every dirty counter now. */
  flush(): Promise<void>;
}

/** Create a {@link BudgetLedger}. */
export function createBudgetLedger(
  storage: Storage,
  clock: Clock,
  windowMs: number,
  persistEveryMs = 1000,
  reportError: ErrorReporter = logErrorToConsole,
): BudgetLedger {
  if (!(windowMs > 0)) throw new RangeError('budgetWindowMs must be positive');
  const takeCount = storage.sharedByProcesses === true ? storage.takeCount?.bind(storage) : undefined;
  const shared = takeCount !== undefined;
  const counters = new Map<string, Counter>();
  const loaded = new Set<string>();
  const dirty = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let writing: Promise<void> = Promise.resolve();

  function windowStartOf(c: Budgeted, now: number): number {
    const elapsed = now - c.createdAt;
    if (elapsed <= 0) return c.createdAt;
    return c.createdAt + Math.floor(elapsed / windowMs) * windowMs;
  }

  function current(c: Budgeted, now: number): Counter {
    const start = windowStartOf(c, now);
    let counter = counters.get(c.credentialRef);
    if (!counter) {
      counter = { windowStart: start, used: 0 };
      counters.set(c.credentialRef, counter);
    } else if (counter.windowStart !== start) {
      counter.windowStart = start;
      counter.used = 0;
    }
    return counter;
  }

  function spent(c: Budgeted, counter: Counter, now: number): ServiceError {
    const retryAfterMs = counter.windowStart + windowMs - now;
    return new ServiceError('RATE_LIMITED', `The request budget of this credential (${c.requestBudget} requests per window) is spent; retry after the window ends.`, {
      retryAfterMs,
    });
  }

  function statusOf(c: Budgeted, counter: Counter): BudgetStatus {
    return {
      limit: c.requestBudget,
      remaining: Math.max(0, c.requestBudget - counter.used),
      windowStart: counter.windowStart,
      windowEnd: counter.windowStart + windowMs,
    };
  }

  function schedule(): void {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      void persist();
    }, persistEveryMs);
    (timer as { unref?: () => void }).unref?.();
  }

  function persist(): Promise<void> {
    writing = writing.then(async () => {
      if (dirty.size === 0) return;
      const refs = [...dirty];
      dirty.clear();
      const ops = refs.map((ref) => {
        const c = counters.get(ref)!;
        const value: StoredCounter = { v: 1, windowStart: c.windowStart, used: c.used };
        return { kind: 'record.put' as const, collection: BUDGET_COLLECTION, key: ref, value };
      });
      try {
        await storage.commit(ops);
      } catch (error) {
        // Keep the counters dirty; the next charge (or flush) tries again.
        for (const ref of refs) dirty.add(ref);
        reportError(error, 'budgets');
      }
    });
    return writing;
  }

  return {
    async load(c) {
      if (loaded.has(c.credentialRef)) return;
      const stored = await storage.getRecord<StoredCounter>(BUDGET_COLLECTION, c.credentialRef);
      if (loaded.has(c.credentialRef)) return;
      loaded.add(c.credentialRef);
      const counter = current(c, clock.now());
      if (stored && stored.value.windowStart === counter.windowStart) {
        counter.used = Math.max(counter.used, stored.value.used);
      }
    },
    charge(c) {
      const now = clock.now();
      const counter = current(c, now);
      if (counter.used >= c.requestBudget) throw spent(c, counter, now);
      counter.used++;
      dirty.add(c.credentialRef);
      schedule();
      return statusOf(c, counter);
    },
    shared,
    async take(c) {
      if (!shared) throw new Error('take() needs a storage shared by processes; use charge()');
      const counter = current(c, clock.now());
      const windowStart = counter.windowStart;
      const { taken, used } = await takeCount!(BUDGET_COLLECTION, c.credentialRef, windowStart, c.requestBudget);
      // The local counter mirrors the storage's, for status() (a principal's remaining budget).
      const now = clock.now();
      const after = current(c, now);
      if (after.windowStart === windowStart) after.used = used;
      if (!taken) throw spent(c, after, now);
      return statusOf(c, after);
    },
    status(c) {
      return statusOf(c, current(c, clock.now()));
    },
    async flush() {
      if (timer) {
        clearTimeout(timer);
        timer = null;
      }
      await persist();
    },
  };
}
