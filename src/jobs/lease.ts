/**
 * Who runs a job: a lease record per job (collection `research-job-leases`, key = jobId) naming the
 * process that runs it and until when. The runner's process renews it while the run lasts; another
 * process takes the job over only once the lease expired (the owner died) or was released (orderly
 * shutdown). Every claim, renewal and release is a compare-and-set on the lease record's revision, so
 * of two processes reaching for one job exactly one gets it.
 * @module
 */
import type { BatchOp } from '../ports.ts';

/** The storage collection of job leases. */
export const LEASES_COLLECTION = 'research-job-leases';

/** Default lease length (ms): three renewal periods. */
export const DEFAULT_LEASE_MS = 15_000;
/** Default renewal (and expired-lease check) period (ms). */
export const DEFAULT_RENEW_MS = 5_000;

/** A lease as stored. `expiresAt` 0 means released: anyone may take the job over at once. */
export interface JobLease {
  /** The id of the process (service instance) that runs the job. */
  owner: string;
  /** Epoch ms (the engine's clock) after which the lease is void. */
  expiresAt: number;
}

/** Lease timing of a jobs service. */
export interface LeaseTiming {
  /** How long a claim or renewal holds (ms); default {@link DEFAULT_LEASE_MS}. */
  leaseMs?: number | undefined;
  /** How often leases are renewed and other processes' expired leases looked for (ms); default {@link DEFAULT_RENEW_MS}. */
  renewMs?: number | undefined;
}

/** The put of a lease: `expectedRevision` null claims a job without a lease record. */
export function leaseOp(jobId: string, lease: JobLease, expectedRevision: number | null): BatchOp {
  return { kind: 'record.put', collection: LEASES_COLLECTION, key: jobId, value: lease, expectedRevision };
}

/** The delete of a lease held at `revision` (the job ended). */
export function leaseDeleteOp(jobId: string, revision: number): BatchOp {
  return { kind: 'record.delete', collection: LEASES_COLLECTION, key: jobId, expectedRevision: revision };
}
