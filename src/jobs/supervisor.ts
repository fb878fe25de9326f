/**
 * Runs accepted jobs on the installed runner: one AbortController per run (aborted on cancellation,
 * also when the cancellation came from another process, and on shutdown), failing the job when the
 * runner throws or returns without finishing, and recovery of jobs a stopped process left behind.
 * @module
 */
import { isServiceError } from '../errors.ts';
import { recordTopic } from '../ports.ts';
import { createRunContext, applyEvent, failed, type RunContextDeps } from './run-context.ts';
import type { ResearchRunContext, ResearchRunner } from './runner.ts';
import { isTerminal } from './states.ts';
import { JOBS_COLLECTION, type StoredJob } from './store.ts';

/** Why a run's signal was aborted. */
export type AbortReason = 'cancelled' | 'shutdown';

/** Options of {@link createSupervisor}. */
export interface SupervisorOptions {
  runner: ResearchRunner | null;
  onError: (error: unknown, jobId: string) => void;
  extendContext?: ((ctx: ResearchRunContext) => ResearchRunContext) | undefined;
  /** How long `close` waits for runs to honour their aborted signal; default 5000 ms. */
  closeGraceMs?: number;
}

/** The runs of this process. */
export interface Supervisor {
  launch(stored: StoredJob): void;
  abort(jobId: string, reason: AbortReason): void;
  /** Hand every queued, running or waiting job back to the runner; without one, fail queued and running jobs. */
  recover(): Promise<void>;
  /** Resolves when no run is in progress (tests, orderly shutdown). */
  idle(): Promise<void>;
  /** Abort every run with reason "shutdown" and wait for them (bounded); later launches are ignored. */
  close(): Promise<void>;
}

/** Build the supervisor. */
export function createSupervisor(ctxDeps: RunContextDeps, options: SupervisorOptions): Supervisor {
  const { store, deps } = ctxDeps;
  const runs = new Map<string, { controller: AbortController; done: Promise<void> }>();
  let closing = false;

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
    }
  };

  const supervisor: Supervisor = {
    launch(stored) {
      if (closing || !options.runner || runs.has(stored.job.jobId)) return;
      const controller = new AbortController();
      const done = execute(stored, controller).finally(() => runs.delete(stored.job.jobId));
      runs.set(stored.job.jobId, { controller, done });
    },

    abort(jobId, reason) {
      runs.get(jobId)?.controller.abort(reason);
    },

    async recover() {
      const records = await deps.storage.listRecords<StoredJob>(JOBS_COLLECTION);
      for (const { value } of records) {
        const { state, jobId } = value.job;
        if (isTerminal(state)) continue;
        if (options.runner) supervisor.launch(value);
        else if (state !== 'waiting') {
          // Waiting jobs wait for a person, not for this process: they stay cancellable as they are.
          await failIfOpen(jobId, `The service restarted while this job was ${state}, and no research runner is installed to resume it; the job cannot finish.`);
        }
      }
    },

    async idle() {
      while (runs.size > 0) await Promise.all([...runs.values()].map((r) => r.done));
    },

    async close() {
      closing = true;
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
