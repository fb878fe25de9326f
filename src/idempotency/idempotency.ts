/**
 * Idempotency keys: the first application of a write stores its result under the key; an exact
 * repeat inside the retention window replays it; the same key with another request is
 * IDEMPOTENCY_CONFLICT; after the window the key is free for a new intent.
 * @module
 */
import type { Clock } from '../clock.ts';
import type { ErrorReporter } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import type { BatchOp, Storage } from '../ports.ts';
import { InflightTable } from './inflight.ts';
import { ExpirySweeper, expiryIndex } from './sweep.ts';

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
}

/**
 * Check an Idempotency-Key value: missing is IDEMPOTENCY_REQUIRED, malformed INVALID_REQUEST.
 * @returns the key
 */
export function requireIdempotencyKey(key: string | undefined): string {
  if (key === undefined || key === '') {
    throw new ServiceError('IDEMPOTENCY_REQUIRED', 'This write needs an Idempotency-Key header (16-128 letters, digits, underscores or hyphens).', {
      fieldErrors: [{ field: 'idempotencyKey', message: 'is required' }],
      requiredAction: 'choose-new-idempotency-key',
    });
  }
  if (!Patterns.idempotencyKey.test(key)) {
    throw new ServiceError('INVALID_REQUEST', 'Idempotency-Key must be 16-128 characters of letters, digits, underscores or hyphens.', {
      fieldErrors: [{ field: 'idempotencyKey', message: 'must be 16-128 characters of letters, digits, underscores or hyphens' }],
    });
  }
  return key;
}

/** The storage key of `key` in an account's scope. */
export function scopedKey(accountId: string, key: string): string {
  return `${accountId}\u0000${key}`;
}

/**
 * Idempotency over the storage port, with in-flight tracking and expiry.
 * @remarks A duplicate that arrives while the first is being applied in this process waits for it and
 * then sees its stored record; one applied by another process meanwhile makes the final commit fail
 * with a storage conflict, after which the caller looks the key up again ({@link IdempotencyStore.find}).
 * Records are written by the caller in the same batch as the change they describe
 * ({@link IdempotencyStore.recordOp}), so a write and its record are atomic. Expired records are
 * replaced in place by the next use of their key and removed in the background by a sweep.
 */
export class IdempotencyStore {
  private readonly inflight = new InflightTable();
  /** Revisions of expired records seen by a lookup, so that the next record replaces them. */
  private readonly expired = new Map<string, number>();
  private readonly sweeper: ExpirySweeper;
  readonly retentionMs: number;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    options: IdempotencyOptions = {},
  ) {
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    if (!(this.retentionMs > 0)) throw new RangeError('idempotency retention must be a positive number of milliseconds');
    this.sweeper = new ExpirySweeper(storage, clock, IDEMPOTENCY_COLLECTION, this.retentionMs, undefined, options.onError);
  }

  /**
   * Look a key up after any application of it in flight here has settled. Returns the stored record
   * when its fingerprint matches (a replay), null when the key is unused or its record expired, and
   * throws IDEMPOTENCY_CONFLICT when it is bound to another request.
   */
  lookup<T>(scope: string, fingerprint: string): Promise<IdempotencyRecord<T> | null> {
    const pending = this.inflight.get(scope);
    // Nothing in flight (the usual case): the storage read itself, without an extra async frame.
    return pending === undefined ? this.find<T>(scope, fingerprint) : this.lookupAfter<T>(pending, scope, fingerprint);
  }

  private async lookupAfter<T>(pending: Promise<unknown>, scope: string, fingerprint: string): Promise<IdempotencyRecord<T> | null> {
    for (let p: Promise<unknown> | undefined = pending; p; p = this.inflight.get(scope)) await p.catch(() => undefined);
    return this.find<T>(scope, fingerprint);
  }

  /** {@link IdempotencyStore.lookup} without waiting for applications in flight. */
  async find<T>(scope: string, fingerprint: string): Promise<IdempotencyRecord<T> | null> {
    const stored = await this.storage.getRecord<IdempotencyRecord<T>>(IDEMPOTENCY_COLLECTION, scope);
    if (!stored) return null;
    if (this.clock.now() - stored.value.createdAt >= this.retentionMs) {
      this.expired.set(scope, stored.revision);
      return null;
    }
    if (stored.value.fingerprint !== fingerprint) {
      throw new ServiceError(
        'IDEMPOTENCY_CONFLICT',
        'This Idempotency-Key is already bound to a different request; use a new key for a new intent, or repeat the original request exactly (same body and revision).',
        { requiredAction: 'choose-new-idempotency-key' },
      );
    }
    return stored.value;
  }

  /** Register `application` (started by the caller) as the one in-flight application of `scope`. */
  track<T>(scope: string, application: Promise<T>): Promise<T> {
    this.inflight.set(scope, application);
    const settled = () => {
      this.inflight.deleteIf(scope, application);
      this.expired.delete(scope); // used by the application's record, or not needed after a failure
      this.sweeper.maybeSweep();
    };
    void application.then(settled, settled);
    return application;
  }

  /** True while an application of `scope` is in flight. */
  busy(scope: string): boolean {
    return this.inflight.has(scope);
  }

  /**
   * The batch op that stores a record; it fails the batch if the key was taken meanwhile (or, for a
   * key whose record expired, if that record changed meanwhile).
   */
  recordOp<T>(scope: string, record: IdempotencyRecord<T>): BatchOp {
    const replaces = this.expired.get(scope);
    if (replaces !== undefined) this.expired.delete(scope);
    return { kind: 'record.put', collection: IDEMPOTENCY_COLLECTION, key: scope, value: record, expectedRevision: replaces ?? null, index: expiryIndex(record.createdAt) };
  }

  /** Settles when the background sweep (if any) has settled. */
  flush(): Promise<void> {
    return this.sweeper.flush();
  }
}
