/**
 * Idempotency keys: the first application of a write stores its result under the key; an exact
 * repeat inside the retention window replays it; the same key with another request is
 * IDEMPOTENCY_CONFLICT; after the window the key is free for a new intent.
 * @module
 */
import type { Clock } from '../clock.ts';
import type { ErrorReporter } from '../deps.ts';
import { ServiceError, isServiceError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import { isStorageConflict, type BatchOp, type StoredRecord, type Storage } from '../ports.ts';
import { ClaimFollower, isClaim, type ClaimRecord, type WriteMode } from './claims.ts';
import { InflightTable } from './inflight.ts';
import { ExpirySweeper, expiryIndex } from './sweep.ts';

export type { WriteMode } from './claims.ts';

/** The storage collection of idempotency records. */
export const IDEMPOTENCY_COLLECTION = 'idempotency';

/** How long a record answers replays by default: 24 hours. */
export const DEFAULT_RETENTION_MS = 24 * 3600_000;

/** What is stored under a key. `result` is operation-specific. */
export interface IdempotencyRecord<T = unknown> {
  /** SHA-256 over the operation, target, precondition and body. */
  fingerprint: string;
  receiptRef: string;
  /** Epoch ms of the first application; the record expires `retentionMs` later. */
  createdAt: number;
  result: T;
}

/** Tuning of {@link IdempotencyStore}. */
export interface IdempotencyOptions {
  /** How long a record replays (ms); default {@link DEFAULT_RETENTION_MS}. */
  retentionMs?: number | undefined;
  /** Where a failed background sweep is reported. */
  onError?: ErrorReporter | undefined;
  /** How long a claim holds before it counts as abandoned (ms); default 15 s. */
  claimTimeoutMs?: number | undefined;
}

/**
 * Check an idempotency key (16-128 letters, digits, underscores or hyphens): missing is
 * IDEMPOTENCY_REQUIRED, malformed INVALID_REQUEST. Messages and fieldErrors name the logical input
 * `idempotencyKey`; the edge names its wire form (the `Idempotency-Key` header).
 * @returns the key
 */
export function requireIdempotencyKey(key: string | undefined): string {
  if (key === undefined || key === '') {
    throw new ServiceError('IDEMPOTENCY_REQUIRED', 'This write needs an idempotencyKey (16-128 letters, digits, underscores or hyphens); repeat it unchanged to retry the same request.', {
      fieldErrors: [{ field: 'idempotencyKey', message: 'is required' }],
      requiredAction: 'choose-new-idempotency-key',
    });
  }
  if (!Patterns.idempotencyKey.test(key)) {
    throw new ServiceError('INVALID_REQUEST', 'idempotencyKey must be 16-128 characters of letters, digits, underscores or hyphens.', {
      fieldErrors: [{ field: 'idempotencyKey', message: 'must be 16-128 characters of letters, digits, underscores or hyphens' }],
    });
  }
  return key;
}

/**
 * The storage key of an idempotency key: the operation, the owner of the key (an account, a
 * credential, the operator) and the key itself.
 * @remarks Keys are scoped per owner and operation (decisions.md, "Writes and their idempotency"):
 * the same key used by two operations is two intents.
 */
export function writeScope(operation: string, owner: string, key: string): string {
  return `${operation}\u0000${owner}\u0000${key}`;
}

/** The owner of the operator's keys (decisions, credential creation): the operator acts for no account. */
export const OPERATOR_KEY_OWNER = 'operator';

/** The receipt of a write as answers carry it. */
export interface WriteReceipt {
  idempotency: 'created' | 'replayed';
  receiptRef: string;
  v: 1;
}

/** The receipt of a first application. */
export function createdReceipt(receiptRef: string): WriteReceipt {
  return { idempotency: 'created', receiptRef, v: 1 };
}

/** The receipt of a replay of `record`. */
export function replayedReceipt(record: { receiptRef: string }): WriteReceipt {
  return { idempotency: 'replayed', receiptRef: record.receiptRef, v: 1 };
}

/** A new receipt reference. */
export function newReceiptRef(ids: { hex(n: number): string }): string {
  return `rcpt_${ids.hex(32)}`;
}

function conflictError(): ServiceError {
  return new ServiceError(
    'IDEMPOTENCY_CONFLICT',
    'This idempotency key is already bound to a different request; use a new key for a new intent, or repeat the original request exactly (same body and revision).',
    { requiredAction: 'choose-new-idempotency-key' },
  );
}

/** What a lookup found under a key. */
type Found<T> =
  | { kind: 'applied'; record: IdempotencyRecord<T> }
  | { kind: 'claimed'; claim: ClaimRecord; revision: number }
  | { kind: 'free' };

/**
 * The write protocol over the storage port: one place for idempotency, replay and the waiting of
 * concurrent duplicates, called by every write (see docs/idempotency.md).
 * @remarks
 * - {@link IdempotencyStore.run} runs a write: an exact repeat replays the stored record, another
 *   request under the key is IDEMPOTENCY_CONFLICT, a fresh key is applied once. The application
 *   writes its record with {@link IdempotencyStore.recordOp} in the same batch as its change, so a
 *   write and its record are atomic.
 * - A duplicate arriving while the first is applied in this process waits for that application;
 *   one applied in another process is seen through its claim record in storage, which the waiter
 *   follows with `storage.subscribe` and a bounded poll.
 * - A claimed write ({@link WriteMode} `claim`) stores the claim before it applies. The document
 *   mutation path runs `optimistic`: a document append is a compare-and-set, so of two duplicates
 *   racing in two processes exactly one commits and the other, losing the race, finds the winner's
 *   record and replays it; no claim round-trip is needed there.
 * - Expired records are replaced in place by the next use of their key and removed in the
 *   background by a sweep.
 */
export class IdempotencyStore {
  private readonly inflight = new InflightTable();
  /** Revisions the next record of a scope must replace: an expired record, or this process's claim. */
  private readonly expected = new Map<string, number>();
  /** Claims this process took and could not release after a failure: the next use takes them over. */
  private readonly orphans = new Map<string, number>();
  private readonly sweeper: ExpirySweeper;
  private readonly claims: ClaimFollower;
  readonly retentionMs: number;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    options: IdempotencyOptions = {},
  ) {
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    if (!(this.retentionMs > 0)) throw new RangeError('idempotency retention must be a positive number of milliseconds');
    this.sweeper = new ExpirySweeper(storage, clock, IDEMPOTENCY_COLLECTION, this.retentionMs, undefined, options.onError);
    this.claims = new ClaimFollower(storage, clock, IDEMPOTENCY_COLLECTION, options.claimTimeoutMs);
  }

  /**
   * Run one write under the protocol.
   * @param scope the key's storage key ({@link writeScope})
   * @param fingerprint what makes two requests "the same" (operation, target, precondition, body)
   * @param apply the one application: commits its change together with {@link IdempotencyStore.recordOp}
   * @param replay the answer to an exact repeat: the stored results plus the resource as it is now
   * @param mode `claim` (default) stores a claim first; `optimistic` for writes whose commit is a
   *   compare-and-set that a concurrent duplicate must lose (see the class remarks)
   */
  run<R, A>(scope: string, fingerprint: string, apply: () => Promise<A>, replay: (record: IdempotencyRecord<R>) => Promise<A>, mode: WriteMode = 'claim'): Promise<A> {
    if (mode === 'claim') return this.runClaimed(scope, fingerprint, apply, replay);
    const pending = this.inflight.get(scope);
    // Nothing in flight (the usual case): apply at once, without reading the key first.
    return pending === undefined ? this.runOptimistic(scope, fingerprint, apply, replay) : this.runAfter(pending, scope, fingerprint, apply, replay, mode);
  }

  private async runAfter<R, A>(pending: Promise<unknown>, scope: string, fingerprint: string, apply: () => Promise<A>, replay: (record: IdempotencyRecord<R>) => Promise<A>, mode: WriteMode): Promise<A> {
    await pending.catch(() => undefined);
    return this.run(scope, fingerprint, apply, replay, mode);
  }

  /**
   * The optimistic path (document mutations): apply without looking the key up first (a round trip
   * less per write on a shared database). A used key cannot slip through: the application's record
   * is stored with `expectedRevision: null` in its commit, so a key taken by any request fails the
   * commit; and the replay of a write that committed fails earlier, on its revision, which that
   * write moved on. Either failure looks the key up ({@link IdempotencyStore.afterFailure}) and
   * replays, or answers IDEMPOTENCY_CONFLICT. A key whose record expired is found that way too,
   * and the write is applied once more, replacing it.
   */
  private async runOptimistic<R, A>(scope: string, fingerprint: string, apply: () => Promise<A>, replay: (record: IdempotencyRecord<R>) => Promise<A>): Promise<A> {
    for (let attempt = 1; ; attempt++) {
      const application = apply();
      this.track(scope, application);
      try {
        return await application;
      } catch (error) {
        const record = await this.lookupAfter<R>(scope, fingerprint);
        if (record) return replay(record);
        // The key's record had expired: the lookup noted its revision; apply again, replacing it.
        if (attempt === 1 && this.expected.has(scope)) {
          if (this.inflight.has(scope)) return this.run(scope, fingerprint, apply, replay, 'optimistic');
          continue;
        }
        return this.failed(error);
      }
    }
  }

  private async runClaimed<R, A>(scope: string, fingerprint: string, apply: () => Promise<A>, replay: (record: IdempotencyRecord<R>) => Promise<A>): Promise<A> {
    for (let p = this.inflight.get(scope); p; p = this.inflight.get(scope)) await p.catch(() => undefined);
    return this.track(scope, this.claimAndApply(scope, fingerprint, apply, replay));
  }

  /** The one in-process application of a claimed write: follow or take the claim, apply, record. */
  private async claimAndApply<R, A>(scope: string, fingerprint: string, apply: () => Promise<A>, replay: (record: IdempotencyRecord<R>) => Promise<A>): Promise<A> {
    for (;;) {
      const found = await this.read<R>(scope, fingerprint);
      if (found.kind === 'applied') return replay(found.record);
      let replaces = this.expected.get(scope) ?? null;
      if (found.kind === 'claimed') {
        if (found.claim.fingerprint !== fingerprint) throw conflictError();
        if (this.orphans.get(scope) === found.revision || this.claims.abandoned(found.claim)) replaces = found.revision;
        else {
          await this.claims.follow(scope, found.claim); // another process applies it: wait, then look again
          continue;
        }
      }
      let claimed: number;
      try {
        claimed = await this.claims.take(scope, fingerprint, replaces);
      } catch (error) {
        if (isStorageConflict(error)) continue; // another process claimed it first
        throw error;
      }
      this.orphans.delete(scope);
      this.expected.set(scope, claimed);
      try {
        return await this.applyOnce(scope, fingerprint, apply, replay);
      } catch (error) {
        if (!(await this.claims.release(scope, claimed))) this.orphans.set(scope, claimed);
        throw error;
      }
    }
  }

  /** Run a write's one application; when it fails, see {@link IdempotencyStore.afterFailure}. */
  private async applyOnce<R, A>(scope: string, fingerprint: string, apply: () => Promise<A>, replay: (record: IdempotencyRecord<R>) => Promise<A>): Promise<A> {
    try {
      return await apply();
    } catch (error) {
      return this.afterFailure(scope, fingerprint, error, replay);
    }
  }

  /**
   * After a failed application, look the key up again: if a duplicate of this very request committed
   * meanwhile (in another process: it won the document's compare-and-set, or moved the resource past
   * this request's precondition), its record is replayed; one of another request is
   * IDEMPOTENCY_CONFLICT; without a record the write fails as it did, a raw storage conflict as a
   * retryable CONFLICT.
   */
  private async afterFailure<R, A>(scope: string, fingerprint: string, error: unknown, replay: (record: IdempotencyRecord<R>) => Promise<A>): Promise<A> {
    const record = await this.lookupAfter<R>(scope, fingerprint);
    if (record) return replay(record);
    return this.failed(error);
  }

  /** The key's applied record after a failed application; null also when the store cannot answer. */
  private lookupAfter<R>(scope: string, fingerprint: string): Promise<IdempotencyRecord<R> | null> {
    return this.find<R>(scope, fingerprint).catch((lookupError: unknown) => {
      if (isServiceError(lookupError) && lookupError.code === 'IDEMPOTENCY_CONFLICT') throw lookupError;
      return null; // the store cannot answer: the application's own error says more
    });
  }

  /** A failed application's error, a raw storage conflict as a retryable CONFLICT. */
  private failed(error: unknown): never {
    if (!isStorageConflict(error)) throw error;
    // A raw conflict of the store (e.g. a concurrent create took the same key or ref): retryable, never a 500.
    throw new ServiceError('CONFLICT', 'A concurrent write changed what this request builds on; read the current state and retry.', {
      retryable: true,
      requiredAction: 'refresh-resource',
      cause: error,
    });
  }

  private async read<R>(scope: string, fingerprint: string): Promise<Found<R>> {
    const stored = await this.storage.getRecord<IdempotencyRecord<R> | ClaimRecord>(IDEMPOTENCY_COLLECTION, scope);
    if (stored !== null && isClaim(stored.value) && this.clock.now() - stored.value.createdAt < this.retentionMs) {
      return { kind: 'claimed', claim: stored.value, revision: stored.revision };
    }
    const record = this.appliedOf<R>(scope, fingerprint, stored);
    return record === null ? { kind: 'free' } : { kind: 'applied', record };
  }

  /**
   * The applied record of a key, without waiting: null when the key is unused, its record expired or
   * only claimed by this very request; IDEMPOTENCY_CONFLICT when it is bound to another request.
   */
  async find<T>(scope: string, fingerprint: string): Promise<IdempotencyRecord<T> | null> {
    return this.appliedOf<T>(scope, fingerprint, await this.storage.getRecord<IdempotencyRecord<T> | ClaimRecord>(IDEMPOTENCY_COLLECTION, scope));
  }

  private appliedOf<T>(scope: string, fingerprint: string, stored: StoredRecord<IdempotencyRecord<T> | ClaimRecord> | null): IdempotencyRecord<T> | null {
    if (stored === null) return null;
    const value = stored.value;
    if (this.clock.now() - value.createdAt >= this.retentionMs) {
      this.expected.set(scope, stored.revision);
      return null;
    }
    if (value.fingerprint !== fingerprint) throw conflictError();
    return isClaim(value) ? null : value;
  }

  /** Register `application` as the one in-flight application of `scope`. */
  private track<T>(scope: string, application: Promise<T>): Promise<T> {
    this.inflight.set(scope, application);
    const settled = () => {
      this.inflight.deleteIf(scope, application);
      this.expected.delete(scope); // used by the application's record, or not needed after a failure
      this.sweeper.maybeSweep();
    };
    void application.then(settled, settled);
    return application;
  }

  /**
   * The batch op that stores the record of an application; it fails the batch if the key was taken
   * meanwhile (or, for a key whose record expired or that this process claimed, if that record
   * changed meanwhile).
   */
  recordOp<T>(scope: string, record: IdempotencyRecord<T>): BatchOp {
    const replaces = this.expected.get(scope); // kept until the application settles: a retried batch asks again
    return { kind: 'record.put', collection: IDEMPOTENCY_COLLECTION, key: scope, value: record, expectedRevision: replaces ?? null, index: expiryIndex(record.createdAt) };
  }

  /** Settles when the background sweep (if any) has settled. */
  flush(): Promise<void> {
    return this.sweeper.flush();
  }
}
