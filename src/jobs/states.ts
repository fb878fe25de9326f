/**
 * The research-job state machine as data: states, phases, triggers and the one transition table.
 * `transition` is pure and refuses every (state, trigger) pair the table does not list.
 * @module
 */
import { ServiceError } from '../errors.ts';

/** Job states of the contract. */
export const JobState = {
  queued: 'queued',
  running: 'running',
  waiting: 'waiting',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;
export type JobState = (typeof JobState)[keyof typeof JobState];
/** Every state, in the contract's order. */
export const JOB_STATES = Object.values(JobState) as readonly JobState[];

/** Job phases of the contract. */
export const JobPhase = {
  queued: 'queued',
  planning: 'planning',
  retrieving: 'retrieving',
  extracting: 'extracting',
  proposing: 'proposing',
  synthesizing: 'synthesizing',
  requestingReview: 'requesting-review',
  complete: 'complete',
  cancelled: 'cancelled',
} as const;
export type JobPhase = (typeof JobPhase)[keyof typeof JobPhase];
/** Every phase, in the contract's order. */
export const JOB_PHASES = Object.values(JobPhase) as readonly JobPhase[];

/** The phases a runner may move a job into (the others are set by the machine itself). */
export const WORK_PHASES = ['planning', 'retrieving', 'extracting', 'proposing', 'synthesizing', 'requesting-review'] as const;
export type WorkPhase = (typeof WORK_PHASES)[number];

/** Terminal states: nothing leaves them. */
export const TERMINAL_STATES: ReadonlySet<JobState> = new Set<JobState>(['succeeded', 'failed', 'cancelled']);

/** True for succeeded, failed and cancelled. */
export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.has(state);
}

/** Event kinds; the last three are terminal. */
import type { JobEventKind } from './event-kinds.ts';
export { JOB_EVENT_KINDS, TERMINAL_EVENT_KINDS, type JobEventKind } from './event-kinds.ts';

/** What can happen to a job after its creation. */
export const JOB_TRIGGERS = ['start', 'phase', 'progress', 'wait', 'artifact', 'succeed', 'fail', 'cancel'] as const;
export type JobTrigger = (typeof JOB_TRIGGERS)[number];

/** The event kind each trigger appends. */
export const EVENT_KIND_OF: Readonly<Record<JobTrigger, JobEventKind>> = {
  start: 'job.phase',
  phase: 'job.phase',
  progress: 'job.progress',
  wait: 'job.waiting',
  artifact: 'job.artifact',
  succeed: 'job.succeeded',
  fail: 'job.failed',
  cancel: 'job.cancelled',
};

/**
 * The transition table: for each state, the triggers it accepts and the state they lead to.
 * @remarks A waiting job resumes with `phase` (the runner moves on); progress and artifacts keep it
 * waiting. Terminal states accept nothing.
 */
export const TRANSITIONS: Readonly<Record<JobState, Readonly<Partial<Record<JobTrigger, JobState>>>>> = {
  queued: { start: 'running', fail: 'failed', cancel: 'cancelled' },
  running: {
    phase: 'running',
    progress: 'running',
    wait: 'waiting',
    artifact: 'running',
    succeed: 'succeeded',
    fail: 'failed',
    cancel: 'cancelled',
  },
  waiting: { phase: 'running', progress: 'waiting', wait: 'waiting', artifact: 'waiting', fail: 'failed', cancel: 'cancelled' },
  succeeded: {},
  failed: {},
  cancelled: {},
};

/** A trigger with its argument: `start` and `phase` name the work phase to enter. */
export type JobTransitionEvent = { type: 'start' | 'phase'; phase: WorkPhase } | { type: Exclude<JobTrigger, 'start' | 'phase'> };

/** Where a transition leads. */
export interface TransitionResult {
  state: JobState;
  phase: JobPhase;
  kind: JobEventKind;
}

/**
 * Apply `event` to a job at (`state`, `phase`).
 * @throws ServiceError CONFLICT when the table does not list the pair (a terminal job accepts
 * nothing), INVALID_REQUEST when `start`/`phase` names no work phase.
 */
export function transition(job: { state: JobState; phase: JobPhase }, event: JobTransitionEvent): TransitionResult {
  const next = TRANSITIONS[job.state][event.type];
  if (next === undefined) {
    throw new ServiceError('CONFLICT', `A ${job.state} research job cannot ${event.type}; read the job for its current state.`, {
      requiredAction: 'refresh-resource',
    });
  }
  let phase: JobPhase = job.phase;
  if (event.type === 'start' || event.type === 'phase') {
    if (!(WORK_PHASES as readonly string[]).includes(event.phase)) {
      throw new ServiceError('INVALID_REQUEST', `"${String(event.phase)}" is not a work phase (${WORK_PHASES.join(', ')}).`, {
        fieldErrors: [{ field: 'phase', message: `must be one of ${WORK_PHASES.join(', ')}` }],
      });
    }
    phase = event.phase;
  } else if (event.type === 'succeed') phase = 'complete';
  else if (event.type === 'cancel') phase = 'cancelled';
  return { state: next, phase, kind: EVENT_KIND_OF[event.type] };
}
