/**
 * How jobs live in storage: one record per job (collection `research-jobs`, listed per owner,
 * newest `updatedAt` first) and one append-only event stream per job. Every change of a job is one
 * batch holding the record put (compare-and-set on its storage revision) and its event (compare-and-
 * set on the stream's seq), so no change exists without its event and no event without its change.
 * @module
 */
import { isoTimestamp } from '../clock.ts';
import type { EngineDeps } from '../deps.ts';
import type { Actor } from '../actor.ts';
import { notFound } from '../errors.ts';
import { isStorageConflict, sortKeyOfTime, type BatchOp, type StoredRecord } from '../ports.ts';
import type { JobEventKind } from './states.ts';
import type { ResearchJob, ResearchJobEvent } from './schemas.ts';

/** The storage collection of job records. */
export const JOBS_COLLECTION = 'research-jobs';

/** The event stream of one job. */
export function eventStreamOf(jobId: string): string {
  return `research-job-events:${jobId}`;
}

/**
 * Who may see a job: the credential that created it. A trusted in-process actor (no credential)
 * owns the jobs it started itself, per account.
 */
export function ownerOf(actor: Actor): string {
  return actor.credentialRef ?? `in-process:${actor.accountId}`;
}

/** The listing a job belongs to: its owner's, within its account. */
export function listPartition(accountId: string, owner: string): string {
  return `${accountId}\u0000${owner}`;
}

/** A job as stored: the wire job plus what the wire does not show. */
export interface StoredJob {
  job: ResearchJob;
  accountId: string;
  owner: string;
  /** Epoch ms of `job.updatedAt` (the listing sorts by it). */
  updatedMs: number;
  /** Seq of the job's last event: the revision is derived from it. */
  seq: number;
}

/** A change to apply: the new job (state, phase, progress, artifacts…) and the event kind it appends. */
export interface JobChange {
  job: ResearchJob;
  kind: JobEventKind;
}

/** Storage access for jobs over the engine's ports. */
export interface JobStore {
  /** The opaque revision of a stored job: it changes with every change (every event). */
  revisionOf(stored: StoredJob): string;
  get(jobId: string): Promise<StoredRecord<StoredJob> | null>;
  /** The job if `actor` may see it, else NOT_FOUND (absent and foreign look alike). */
  visible(actor: Actor, jobId: string): Promise<StoredJob>;
  /** The batch creating a job with its `job.created` event (seq 1). */
  createOps(actor: Actor, job: ResearchJob, nowMs: number): { ops: BatchOp[]; stored: StoredJob };
  /**
   * Apply `change` to the current job, retrying on a concurrent write (the change function sees the
   * fresh job each time and may throw to refuse). `extraOps` commit in the same batch.
   */
  update(jobId: string, change: (current: StoredJob) => JobChange, extraOps?: (next: StoredJob) => BatchOp[]): Promise<StoredJob>;
}

const MAX_ATTEMPTS = 16;

/** Build the {@link JobStore}. */
export function createJobStore(deps: EngineDeps): JobStore {
  const { storage } = deps;

  const eventOf = (job: ResearchJob, seq: number, kind: JobEventKind, nowMs: number): ResearchJobEvent => ({
    v: 1,
    eventId: String(seq),
    jobId: job.jobId,
    kind,
    state: job.state,
    phase: job.phase,
    progress: { ...job.progress },
    createdAt: isoTimestamp(nowMs),
  });

  const putOp = (stored: StoredJob, expectedRevision: number | null): BatchOp => ({
    kind: 'record.put',
    collection: JOBS_COLLECTION,
    key: stored.job.jobId,
    value: stored,
    expectedRevision,
    index: { partition: listPartition(stored.accountId, stored.owner), sortKey: sortKeyOfTime(stored.updatedMs) },
  });

  return {
    revisionOf(stored) {
      return `jrev_${deps.sha256(`${stored.job.jobId}\n${stored.seq}`).slice(0, 40)}`;
    },

    get(jobId) {
      return storage.getRecord<StoredJob>(JOBS_COLLECTION, jobId);
    },

    async visible(actor, jobId) {
      const record = typeof jobId === 'string' ? await storage.getRecord<StoredJob>(JOBS_COLLECTION, jobId) : null;
      if (!record || record.value.owner !== ownerOf(actor) || record.value.accountId !== actor.accountId) throw notFound('The research job');
      return record.value;
    },

    createOps(actor, job, nowMs) {
      const stored: StoredJob = { job, accountId: actor.accountId, owner: ownerOf(actor), updatedMs: nowMs, seq: 1 };
      const ops: BatchOp[] = [
        putOp(stored, null),
        { kind: 'stream.append', stream: eventStreamOf(job.jobId), seq: 1, value: eventOf(job, 1, 'job.created', nowMs) },
      ];
      return { ops, stored };
    },

    async update(jobId, change, extraOps) {
      for (let attempt = 1; ; attempt++) {
        const record = await storage.getRecord<StoredJob>(JOBS_COLLECTION, jobId);
        if (!record) throw notFound('The research job');
        const current = record.value;
        const { job, kind } = change(current);
        const nowMs = Math.max(deps.clock.now(), current.updatedMs);
        const seq = current.seq + 1;
        const next: StoredJob = { ...current, job: { ...job, updatedAt: isoTimestamp(nowMs) }, updatedMs: nowMs, seq };
        const ops: BatchOp[] = [
          putOp(next, record.revision),
          { kind: 'stream.append', stream: eventStreamOf(jobId), seq, value: eventOf(next.job, seq, kind, nowMs) },
          ...(extraOps ? extraOps(next) : []),
        ];
        try {
          await storage.commit(ops);
          return next;
        } catch (e) {
          // Another writer moved the job (or its stream) first: re-read and decide again.
          if (!isStorageConflict(e) || e.opIndex > 1 || attempt >= MAX_ATTEMPTS) throw e;
        }
      }
    },
  };
}
