/**
 * Runs accepted jobs on the installed runner: one AbortController per run (aborted on cancellation,
 * also when the cancellation came from another process, and on shutdown), failing the job when the
 * runner throws or returns without finishing, and recovery of jobs a stopped process left behind.
 * A job belongs to the process whose lease (see lease.ts) it holds: the supervisor renews the leases
 * of its runs every `renewMs` and takes over only jobs whose lease expired or was released.
 * @module
 */
import { isServiceError } from '../errors.ts';
import { isStorageConflict, isStorageUnavailable, recordTopic, type BatchOp, type StoredRecord } from '../ports.ts';
import { DEFAULT_LEASE_MS, DEFAULT_RENEW_MS, LEASES_COLLECTION, leaseDeleteOp, leaseOp, type JobLease, type LeaseTiming } from './lease.ts';
import { createRunContext, applyEvent, failed, type RunContextDeps } from './run-context.ts';
import type { ResearchRunContext, ResearchRunner } from './runner.ts';
import { isTerminal } from './states.ts';
import { JOBS_COLLECTION, type StoredJob } from './store.ts';

/** Why a run's signal was aborted. */
export type AbortReason = 'cancelled' | 'shutdown' | 'lease-lost';

/** Options of {@link createSupervisor}. */
export interface SupervisorOptions {
  runner: ResearchRunner | null;
  onError: (error: unknown, jobId: string) => void;
  extendContext?: ((ctx: ResearchRunContext) => ResearchRunContext) | undefined;
  /** How long `close` waits for runs to honour their aborted signal; default 5000 ms. */
  closeGraceMs?: number;
  /** Lease length and renewal period. */
  lease?: LeaseTiming | undefined;
  /** This process's id in the leases it writes. */
  processId: string;
}

/** The runs of this process. */
export interface Supervisor {
  /** The batch op claiming a new job for this process (commit it with the job's creation). */
  claimOp(jobId: string): BatchOp;
  /** Run a job whose lease this process holds at `leaseRevision`. */
  launch(stored: StoredJob, leaseRevision: number): void;
  abort(jobId: string, reason: AbortReason): void;
  /**
   * Take over every unfinished job without a live lease of another process: hand it to the runner; without
   * one, fail queued and running jobs (waiting jobs wait for a person and stay).
   */
  recover(): Promise<void>;
  /** Renew this process's leases and take over jobs whose lease expired (what the renewal timer does). */
  sweep(): Promise<void>;
  /** Resolves when no run is in progress (tests, orderly shutdown). */
  idle(): Promise<void>;
  /** Abort every run with reason "shutdown" and wait for them (bounded); later launches are ignored. */
  close(): Promise<void>;
}

/** Build the supervisor. */
export function createSupervisor(ctxDeps: RunContextDeps, options: SupervisorOptions): Supervisor {
  const { store, deps } = ctxDeps;
  const runs = new Map<string, { controller: AbortController; done: Promise<void>; leaseRevision: number }>();
  let closing = false;
  const leaseMs = options.lease?.leaseMs ?? DEFAULT_LEASE_MS;
  const renewMs = options.lease?.renewMs ?? DEFAULT_RENEW_MS;
  const lease = (expiresAt: number): JobLease => ({ owner: options.processId, expiresAt });
  const report = (e: unknown, jobId: string) => {
    if (!closing) options.onError(e, jobId);
  };
  /** Commit a lease change; false when another process moved the lease first. */
  const leaseCommit = async (op: BatchOp): Promise<boolean> => {
    try {
      await deps.storage.commit([op]);
      return true;
    } catch (e) {
      if (isStorageConflict(e)) return false;
      throw e;
    }
  };

  /** Fail a job unless it is already terminal (then the run's outcome stands). */
  const failIfOpen = async (jobId: string, message: string, cause?: unknown) => {
    try {
      await store.update(jobId, (current) => applyEvent(current, { type: 'fail' }, (job) => failed(job, { message, cause })));
    } catch (e) {
      if (!(isServiceError(e) && e.code === 'CONFLICT')) throw e;
    }
  };

  const execute = async (stored: StoredJob, controller: AbortController) => {
    const { jobId } = stored.job;
    const runner = options.runner!;
    const unsubscribe = deps.storage.subscribe(recordTopic(JOBS_COLLECTION, jobId), () => {
      void store.get(jobId).then(
        (r) => {
          if (r && r.value.job.state === 'cancelled') controller.abort('cancelled');
        },
        () => undefined,
      );
    });
    try {
      await Promise.resolve(); // let the caller that launched us finish first
      let ctx = createRunContext(ctxDeps, stored, controller.signal);
      if (options.extendContext) ctx = options.extendContext(ctx);
      try {
        await runner.run(stored.job, ctx);
      } catch (e) {
        if (controller.signal.aborted) return;
        options.onError(e, jobId);
        const reason = e instanceof Error && e.message ? e.message : String(e);
        await failIfOpen(jobId, `The research runner stopped with an error: ${reason}`, e);
        return;
      }
      if (controller.signal.aborted) return;
      const after = await store.get(jobId);
      if (after && !isTerminal(after.value.job.state)) {
        await failIfOpen(jobId, 'The research runner returned without finishing the job (neither succeeded nor failed).');
      }
    } catch (e) {
      if (!controller.signal.aborted) options.onError(e, jobId);
    } finally {
      unsubscribe();
      await release(jobId, controller);
    }
  };

  /** After a run: drop the lease of a finished job, release (expiresAt 0) the lease of an unfinished one. */
  const release = async (jobId: string, controller: AbortController) => {
    const run = runs.get(jobId);
    if (!run || controller.signal.reason === 'lease-lost') return;
    try {
      const after = await store.get(jobId);
      const finished = !after || isTerminal(after.value.job.state);
      await leaseCommit(finished ? leaseDeleteOp(jobId, run.leaseRevision) : leaseOp(jobId, lease(0), run.leaseRevision));
    } catch (e) {
      report(e, jobId);
    }
  };

  /** Claim the job behind `current` (null: no lease record) and run it, or fail it without a runner. */
  const takeOver = async (jobId: string, current: StoredRecord<JobLease> | null) => {
    if (runs.has(jobId) || closing) return;
    const record = await store.get(jobId);
    if (!record || isTerminal(record.value.job.state)) {
      if (current) await leaseCommit(leaseDeleteOp(jobId, current.revision));
      return;
    }
    const { state } = record.value.job;
    // Waiting jobs wait for a person, not for this process: without a runner they stay cancellable as they are.
    if (!options.runner && state === 'waiting') return;
    const revision = current ? current.revision + 1 : 1;
    if (!(await leaseCommit(leaseOp(jobId, lease(deps.clock.now() + leaseMs), current ? current.revision : null)))) return;
    if (options.runner) {
      const fresh = await store.get(jobId);
      if (fresh && !isTerminal(fresh.value.job.state)) return supervisor.launch(fresh.value, revision);
    } else {
      await failIfOpen(jobId, `The service restarted while this job was ${state}, and no research runner is installed to resume it; the job cannot finish.`);
    }
    await leaseCommit(leaseDeleteOp(jobId, revision));
  };

  const renew = async () => {
    const expiresAt = deps.clock.now() + leaseMs;
    for (const [jobId, run] of runs) {
      try {
        if (await leaseCommit(leaseOp(jobId, lease(expiresAt), run.leaseRevision))) run.leaseRevision++;
        else run.controller.abort('lease-lost'); // expired and taken over meanwhile: the job is no longer ours
      } catch (e) {
        report(e, jobId);
      }
    }
  };

  const takeExpired = async () => {
    const now = deps.clock.now();
    for (const record of await deps.storage.listRecords<JobLease>(LEASES_COLLECTION)) {
      if (runs.has(record.key) || record.value.expiresAt > now) continue;
      try {
        await takeOver(record.key, record);
      } catch (e) {
        report(e, record.key);
      }
    }
  };

  let sweeping: Promise<void> = Promise.resolve();
  const sweep = (): Promise<void> => {
    sweeping = sweeping.then(async () => {
      if (closing) return;
      await renew();
      await takeExpired();
    });
    return sweeping;
  };
  const renewal = setInterval(() => {
    sweep().catch((e: unknown) => {
      if (isStorageUnavailable(e)) return; // a database outage: the next period tries again
      // A closed (or broken) storage: this engine is done with it. Stop here; it matters only while runs live.
      clearInterval(renewal);
      if (runs.size > 0) options.onError(e, 'leases');
    });
  }, renewMs);
  (renewal as { unref?: () => void }).unref?.(); // never keeps a process (or a test run) alive by itself

  const supervisor: Supervisor = {
    claimOp(jobId) {
      return leaseOp(jobId, lease(deps.clock.now() + leaseMs), null);
    },

    launch(stored, leaseRevision) {
      if (closing || !options.runner || runs.has(stored.job.jobId)) return;
      const controller = new AbortController();
      const run = { controller, done: Promise.resolve(), leaseRevision };
      runs.set(stored.job.jobId, run);
      run.done = execute(stored, controller).finally(() => runs.delete(stored.job.jobId));
    },

    sweep,

    abort(jobId, reason) {
      runs.get(jobId)?.controller.abort(reason);
    },

    async recover() {
      const records = await deps.storage.listRecords<StoredJob>(JOBS_COLLECTION);
      const now = deps.clock.now();
      for (const { value } of records) {
        const { state, jobId } = value.job;
        if (isTerminal(state)) continue;
        const current = await deps.storage.getRecord<JobLease>(LEASES_COLLECTION, jobId);
        if (current && current.value.expiresAt > now) continue; // alive in another process: its job
        await takeOver(jobId, current);
      }
    },

    async idle() {
      while (runs.size > 0) await Promise.all([...runs.values()].map((r) => r.done));
    },

    async close() {
      await sweeping.catch(() => undefined);
      closing = true;
      clearInterval(renewal);
      for (const run of runs.values()) run.controller.abort('shutdown');
      const grace = options.closeGraceMs ?? 5000;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        supervisor.idle(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, grace);
        }),
      ]);
      clearTimeout(timer);
    },
  };
  return supervisor;
}
