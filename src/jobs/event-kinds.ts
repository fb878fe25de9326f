/**
 * The kinds of a research job's events, and those that end its history: one definition for the
 * domain (src/jobs/states.ts), the API and the client (src/client), which imports nothing else of
 * the jobs domain.
 * @module
 */

/** Every kind of job event, in the order of a job's life. */
export const JOB_EVENT_KINDS = [
  'job.created',
  'job.progress',
  'job.phase',
  'job.waiting',
  'job.artifact',
  'job.succeeded',
  'job.failed',
  'job.cancelled',
] as const;
export type JobEventKind = (typeof JOB_EVENT_KINDS)[number];
/** The kinds that end a job's event history: nothing follows them. */
export const TERMINAL_EVENT_KINDS: ReadonlySet<JobEventKind> = new Set<JobEventKind>(['job.succeeded', 'job.failed', 'job.cancelled']);
