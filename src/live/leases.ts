/**
 * Who hosts a document's live-editing room when several processes share the storage: a lease record
 * `sync-owners`/{documentRef} = {@link Lease}, claimed with a compare-and-set put when absent or
 * expired, renewed while the room is open, deleted when it closes; and the storage's ephemeral
 * channel the processes forward editors' traffic over. The relay of transports/sync (its wire, its
 * timers) uses both through {@link LiveRelayPort}; this module holds the records.
 * @remarks Expiry is read by the wall clock of each process (not the engine's clock, which tests may
 * stop): the leases are compared across processes.
 * @module
 */
import { isStorageConflict, type Storage } from '../ports.ts';

/** The lease record's collection (key: the documentRef). */
export const LEASE_COLLECTION = 'sync-owners';

/** Who hosts a document's room, until when. */
export interface Lease {
  v: 1;
  /** The owner process's id. */
  owner: string;
  /** Its ephemeral channel. */
  channel: string;
  /** Epoch ms; past it (by the reader's clock) the lease may be taken over. */
  expiresAt: number;
}

/** A process asking for leases: its id and its channel. */
export interface LeaseHolder {
  owner: string;
  channel: string;
}

/** What a claim found: the lease is this process's now (at `revision`), or another process's live lease. */
export type LeaseClaim = { held: true; revision: number } | { held: false; lease: Lease };

/** The cross-process side of live editing: the ownership leases and the ephemeral channel. */
export interface LiveRelayPort {
  /** True when several processes share the storage (the relay is then on by default). */
  readonly sharedByProcesses: boolean;
  /** Hand `payload` to the listeners of `channel`, in any process; at most once, in order per channel. */
  publish(channel: string, payload: Uint8Array): Promise<void>;
  /** Listen on `channel`; `onLost` when payloads may have been lost. Returns stop listening. */
  subscribe(channel: string, listener: (payload: Uint8Array) => void, onLost?: () => void): () => void;
  /** The lease of `documentRef` now, or null (none, or the storage gave none). */
  readLease(documentRef: string): Promise<Lease | null>;
  /**
   * Take the lease of `documentRef` for `holder` (for `leaseMs`) when it is free, expired or already
   * the holder's; else answer the other process's live lease.
   * @throws when the storage is away, or the lease kept changing hands (8 tries).
   */
  claimLease(documentRef: string, holder: LeaseHolder, leaseMs: number): Promise<LeaseClaim>;
  /**
   * Extend a held lease (at `revision`) by `leaseMs`: its new revision, or null when another process
   * took it over meanwhile.
   * @throws when the storage is away (the lease is still held; renew again later).
   */
  renewLease(documentRef: string, holder: LeaseHolder, leaseMs: number, revision: number): Promise<number | null>;
  /** Let a held lease (at `revision`) go. Rejects when it is no longer at that revision or the storage is away. */
  releaseLease(documentRef: string, revision: number): Promise<void>;
}

/** The relay port over a storage that carries ephemeral messages; null for one that does not. */
export function storageRelayPort(storage: Storage): LiveRelayPort | null {
  const { publishEphemeral, subscribeEphemeral } = storage;
  if (typeof publishEphemeral !== 'function' || typeof subscribeEphemeral !== 'function') return null;
  const leaseOf = (holder: LeaseHolder, leaseMs: number): Lease => ({ v: 1, owner: holder.owner, channel: holder.channel, expiresAt: Date.now() + leaseMs });
  return {
    sharedByProcesses: storage.sharedByProcesses === true,
    publish: (channel, payload) => publishEphemeral.call(storage, channel, payload),
    subscribe: (channel, listener, onLost) => subscribeEphemeral.call(storage, channel, listener, onLost),
    async readLease(documentRef) {
      return (await storage.getRecord<Lease>(LEASE_COLLECTION, documentRef))?.value ?? null;
    },
    async claimLease(documentRef, holder, leaseMs) {
      for (let attempt = 0; attempt < 8; attempt++) {
        const record = await storage.getRecord<Lease>(LEASE_COLLECTION, documentRef);
        if (record !== null && record.value.owner !== holder.owner && record.value.expiresAt > Date.now()) return { held: false, lease: record.value };
        try {
          await storage.commit([{ kind: 'record.put', collection: LEASE_COLLECTION, key: documentRef, value: leaseOf(holder, leaseMs), expectedRevision: record === null ? null : record.revision }]);
          return { held: true, revision: record === null ? 1 : record.revision + 1 };
        } catch (error) {
          if (!isStorageConflict(error)) throw error;
        }
      }
      throw new Error(`the live-editing lease of ${documentRef} kept changing hands`);
    },
    async renewLease(documentRef, holder, leaseMs, revision) {
      try {
        await storage.commit([{ kind: 'record.put', collection: LEASE_COLLECTION, key: documentRef, value: leaseOf(holder, leaseMs), expectedRevision: revision }]);
        return revision + 1;
      } catch (error) {
        if (isStorageConflict(error)) return null;
        throw error;
      }
    },
    async releaseLease(documentRef, revision) {
      await storage.commit([{ kind: 'record.delete', collection: LEASE_COLLECTION, key: documentRef, expectedRevision: revision }]);
    },
  };
}
