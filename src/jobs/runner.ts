/**
 * The research runner port: whatever does the research (an agent loop, a fixture, a remote worker)
 * implements {@link ResearchRunner}; the jobs service hands it each accepted job with a
 * {@link ResearchRunContext} through which every change of the job goes (state machine, events,
 * artifacts). Without a runner, fresh starts answer FEATURE_RETIRED.
 * @module
 */
import type { Actor } from '../actor.ts';
import type { BlockInput } from '../blocks/model.ts';
import type { RequiredAction } from '../errors.ts';
import type { WorkPhase } from './states.ts';
import type { JobArtifacts, PublicArtifactRef, ResearchAuditDiagnostic, ResearchJob, ResearchReportSpec } from './schemas.ts';

/** The report a runner stages: a title and the contract's blocks (headings, paragraphs with https links, tables, lists…). */
export interface ReportInput {
  /** Document title, 1-240 characters; default: from the spec (new-document title or the question). */
  title?: string;
  /** Top-level blocks, nested with `children`; any number (they are written in chunks of 50). */
  blocks: BlockInput[];
}

/** `artifacts.report` once staged. */
export type ReportArtifact = NonNullable<JobArtifacts['report']>;

/**
 * An artifact to record (`job.artifact` event). `publicArtifact` appends to `artifacts.publicArtifacts`
 * (max 256); the others set their field.
 */
export type ArtifactInput =
  | { kind: 'document'; documentRef: string }
  | { kind: 'inquiry'; inquiryId: string }
  | { kind: 'proposal'; proposalRef: string }
  | { kind: 'review'; reviewRef: string; browserHref: string }
  | { kind: 'publicArtifact'; ref: PublicArtifactRef };

/** What `waiting` records: why the job waits and what would let it go on. */
export interface WaitingInput {
  summary: string;
  requiredAction?: RequiredAction | null;
  /** At most 64 strings of at most 4096 characters. */
  missingEvidence?: string[];
}

/** The terminal error a runner reports; it is stored with code JOB_FAILED. */
export interface FailureInput {
  message: string;
  /** Whether starting a new job for the same request may succeed; default false. */
  retryable?: boolean;
  requiredAction?: RequiredAction;
  /** The research audit diagnostic of the last attempt, if any. */
  diagnostic?: ResearchAuditDiagnostic;
  cause?: unknown;
}

/** What `succeed` records. */
export interface SuccessInput {
  summary?: string;
  /** The research audit diagnostic (v1 or v2), if any. */
  diagnostic?: ResearchAuditDiagnostic;
}

/**
 * What a runner may do with its job. Each call is one transition of the state machine and appends
 * its event in the same storage batch; a call the machine refuses (e.g. after cancellation) rejects
 * with CONFLICT and changes nothing.
 * @remarks Other domains extend this object (e.g. the knowledge domain adds `submitProposal`) through
 * the service option `extendContext`; the base methods stay as they are.
 */
export interface ResearchRunContext {
  readonly jobId: string;
  readonly spec: ResearchReportSpec;
  /** Aborted when the job is cancelled (reason: "cancelled") or the engine shuts down (reason: "shutdown"). */
  readonly signal: AbortSignal;
  /** The job as stored now. */
  job(): Promise<ResearchJob>;
  /** Enter a work phase (queued → running, waiting → running, or a phase change while running). */
  setPhase(phase: WorkPhase, summary?: string): Promise<void>;
  /** Report progress: percent an integer 0-100, summary at most 1024 characters. */
  progress(percent: number, summary: string): Promise<void>;
  /** Wait for something outside the run (a person, missing evidence); `setPhase` resumes. */
  waiting(input: WaitingInput): Promise<void>;
  /** Create the report document (a real engine document) and set `artifacts.report`. */
  stageReport(report: ReportInput): Promise<ReportArtifact>;
  /** Record an artifact other than the report. */
  recordArtifact(artifact: ArtifactInput): Promise<void>;
  /** Finish successfully (phase complete, progress 100). Needs a staged report. */
  succeed(input?: SuccessInput): Promise<void>;
  /** Finish with a JOB_FAILED terminal error. */
  fail(error: FailureInput): Promise<void>;
  /**
   * Submit a knowledge proposal (ProposalRequest v2) for this job, in the space of the job's document
   * (its report or target document): it carries no authority until a person reviews it. Records
   * `artifacts.proposal` and `artifacts.review`. Idempotent per job and key. TEMPORARILY_UNAVAILABLE
   * when the engine has no knowledge service; CONFLICT before the job has a document.
   */
  submitProposal(request: unknown, options: { idempotencyKey: string }): Promise<SubmittedProposal>;
}

/** What a proposal submission answers (the contract's ProposalSubmissionResult). */
export interface SubmittedProposal {
  proposalRef: string;
  reviewRef: string;
  state: string;
  browserHref: string;
  conflicts: string[];
}

/** Where runs submit proposals: the knowledge service, as the engine wires it (a port, so jobs does not import knowledge). */
export interface ProposalSink {
  submitProposal(run: { actor: Actor; jobId: string; spaceRef: string }, request: unknown, options: { idempotencyKey: string }): Promise<SubmittedProposal>;
}

/**
 * The runner port.
 * @remarks `run` may return before the job is terminal only if it was aborted; a run that returns
 * otherwise without finishing fails the job, and a run that throws fails it with the error's message.
 * A job left queued, running or waiting by a stopped process is handed to `run` again on the next
 * start, so `run` must cope with a job that already has progress (read `ctx.job()`).
 */
export interface ResearchRunner {
  run(job: ResearchJob, ctx: ResearchRunContext): Promise<void>;
  /** Research runs the account may still start, when the runner knows (X-Service-Research-Runs-Remaining). */
  remainingRuns?(accountId: string): number | null;
  /**
   * The account's research-run budget, limit and remaining, when the runner knows it (GET /auth's
   * `budgets.researchRuns`); takes precedence over {@link remainingRuns}.
   */
  runBudget?(accountId: string): { limit: number; remaining: number } | null;
}
