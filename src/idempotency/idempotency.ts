/**
 * Idempotency keys: the first application of a write stores its result under the key; an exact
 * repeat replays it; the same key with another request is IDEMPOTENCY_CONFLICT.
 * @module
 */
import { ServiceError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import type { BatchOp, Storage } from '../ports.ts';

/** The storage collection of idempotency records. */
export const IDEMPOTENCY_COLLECTION = 'idempotency';

/** What is stored under a key. `result` is operation-specific. */
export interface IdempotencyRecord<T = unknown> {
  /** SHA-256 over the operation, target, precondition and body. */
  fingerprint: string;
  receiptRef: string;
  createdAt: number;
  result: T;
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
 * Idempotency over the storage port, with in-flight tracking.
 * @remarks A duplicate that arrives while the first is being applied waits for it and then sees its
 * stored record. Records are written by the caller in the same batch as the change they describe
 * ({@link IdempotencyStore.recordOp}), so a write and its record are atomic.
 */
export class IdempotencyStore {
  private readonly inflight = new Map<string, Promise<unknown>>();

  constructor(private readonly storage: Storage) {}

  /**
   * Look a key up. Returns the stored record when its fingerprint matches (a replay), null when the
   * key is unused, and throws IDEMPOTENCY_CONFLICT when it is bound to another request.
   */
  async lookup<T>(scope: string, fingerprint: string): Promise<IdempotencyRecord<T> | null> {
    for (let pending = this.inflight.get(scope); pending; pending = this.inflight.get(scope)) {
      await pending.catch(() => undefined);
    }
    const stored = await this.storage.getRecord<IdempotencyRecord<T>>(IDEMPOTENCY_COLLECTION, scope);
    if (!stored) return null;
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
      if (this.inflight.get(scope) === application) this.inflight.delete(scope);
    };
    void application.then(settled, settled);
    return application;
  }

  /** True while an application of `scope` is in flight. */
  busy(scope: string): boolean {
    return this.inflight.has(scope);
  }

  /** The batch op that stores a record; it fails the batch if the key was taken meanwhile. */
  recordOp<T>(scope: string, record: IdempotencyRecord<T>): BatchOp {
    return { kind: 'record.put', collection: IDEMPOTENCY_COLLECTION, key: scope, value: record, expectedRevision: null };
  }
}
