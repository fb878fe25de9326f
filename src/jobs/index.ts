/**
 * Research jobs: the service, the runner port, the state machine and the schemas.
 * @module
 */
export { createJobsService } from './service.ts';
export type { JobRead, JobWriteResult, JobsService, JobsServiceOptions } from './types.ts';
export type { ArtifactInput, FailureInput, ReportArtifact, ReportInput, ResearchRunContext, ResearchRunner, SuccessInput, WaitingInput } from './runner.ts';
export { JOB_EVENT_KINDS, JOB_PHASES, JOB_STATES, JOB_TRIGGERS, TERMINAL_EVENT_KINDS, TRANSITIONS, WORK_PHASES, isTerminal, transition } from './states.ts';
export type { JobTransitionEvent, JobEventKind, JobPhase, JobState, JobTrigger, TransitionResult, WorkPhase } from './states.ts';
export * from './schemas.ts';
export { EVENT_PAGE_MAX, parseEventCursor } from './events.ts';
export type { EventFeed, EventSink } from './event-hub.ts';
export { ReportLimits, type ReportFormat } from './report.ts';
export { fixtureRunner, fixtureProposal, fixtureReport, FIXTURE_FAIL_WORD, type FixtureRunnerOptions, type ReviewOutcomes } from './fixture-runner.ts';
