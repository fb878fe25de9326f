/**
 * The research-jobs service interface and its options.
 * @module
 */
import type { Actor } from '../actor.ts';
import type { IdempotencyStore } from '../idempotency/idempotency.ts';
import type { DocumentRead, DocumentsService, IdempotencyReceipt } from '../documents/types.ts';
import type { EventFeed, EventSink } from './event-hub.ts';
import type { LeaseTiming } from './lease.ts';
import type { ProposalSink, ResearchRunContext, ResearchRunner } from './runner.ts';
import type { ResearchJob, ResearchJobEvent, ResearchJobEventPage, ResearchJobPage } from './schemas.ts';

/** A job and its opaque revision (Service-Revision). */
export interface JobRead {
  job: ResearchJob;
  revision: string;
}

/** The result of a start or a cancellation: the job, its revision and the idempotency receipt. */
export interface JobWriteResult extends JobRead {
  receipt: IdempotencyReceipt;
}

/** Options of `createJobsService`. */
export interface JobsServiceOptions {
  /** The research runner; without one, fresh starts answer FEATURE_RETIRED. */
  runner?: ResearchRunner | null | undefined;
  /** The documents service (report documents, boundary checks). */
  documents: DocumentsService;
  /** Called with failures that have no caller to go to (a runner that throws, a failed recovery). */
  onError?: ((error: unknown, jobId: string | null) => void) | undefined;
  /**
   * Recover jobs an earlier process left queued, running or waiting (default true). Only the one
   * service that owns the storage should: a second service over the same storage (e.g. a seeding
   * tool) passes false, or it would take over runs that are alive elsewhere.
   */
  recover?: boolean | undefined;
  /** Lets other domains add methods to each run's context. */
  extendContext?: ((ctx: ResearchRunContext) => ResearchRunContext) | undefined;
  /** Where runs submit knowledge proposals (the engine passes its knowledge service). */
  proposals?: ProposalSink | null | undefined;
  /** The engine's one idempotency store; default: a store of its own. */
  idempotency?: IdempotencyStore | undefined;
  /** Lease length and renewal period of the jobs this process runs (see lease.ts); default 15 s and 5 s. */
  lease?: LeaseTiming | undefined;
}

/** The research-jobs service. */
export interface JobsService {
  /** Start a job (202). Without a runner: FEATURE_RETIRED, except an exact replay of an accepted start. */
  start(actor: Actor, input: { idempotencyKey: string | undefined; body: unknown }): Promise<JobWriteResult>;
  /** The actor's jobs, newest `updatedAt` first; `limit` 1-50 (default 20), `cursor` a nextCursor of this list. */
  list(actor: Actor, input?: { limit?: number | undefined; cursor?: string | undefined }): Promise<ResearchJobPage>;
  /** One job; NOT_FOUND unless the actor's credential created it. */
  read(actor: Actor, jobId: string): Promise<JobRead>;
  /**
   * The jobs of an account as its person sees them (a trusted caller: the browser app's console):
   * those its credentials `credentialRefs` started and the in-process ones, newest `updatedAt` first,
   * at most `limit` (default 20).
   */
  listOfAccount(accountId: string, credentialRefs: readonly string[], limit?: number): Promise<ResearchJob[]>;
  /** A job of the account, whichever of its credentials started it (a trusted caller), or null. */
  readOfAccount(accountId: string, jobId: string): Promise<ResearchJob | null>;
  /**
   * Follow a job: `onChange` is called after each committed change of it, in this process and in
   * others sharing the storage, without payload (read the job to see what changed).
   * @returns a function that stops following. It checks nothing about who asks.
   */
  watch(jobId: string, onChange: () => void): () => void;
  /** A page of events after `after` (decimal eventId, default "0"), at most `limit` (1-256, default 256). */
  events(actor: Actor, jobId: string, input?: { after?: string | undefined; limit?: number | undefined }): Promise<ResearchJobEventPage>;
  /**
   * Follow events after `after` live. Checks visibility and the cursor first (so the caller can still
   * answer 404/400), then returns an iterator that ends after the terminal event or when `signal` aborts.
   */
  follow(actor: Actor, jobId: string, input?: { after?: string | undefined; signal?: AbortSignal | undefined }): Promise<AsyncIterableIterator<ResearchJobEvent>>;
  /**
   * Follow events after `after` through the process's shared event hub (one storage subscription per
   * job, each event read and frozen once): checks visibility and the cursor first (404/400 while the
   * caller can still answer them), then feeds `sink` with batches of events, strictly increasing and
   * without gaps, until the terminal event (then the feed closes itself) or {@link EventFeed.close}.
   * The sink may be called as soon as the hub has the feed, possibly before the promise's continuation runs.
   */
  feed(actor: Actor, jobId: string, input: { after?: string | undefined }, sink: EventSink): Promise<EventFeed>;
  /** Jobs this process holds a live event subscription for (one however many followers a job has). */
  readonly followedJobs: number;
  /** Cancel a non-terminal job; the body is exactly `{"v":1}`. */
  cancel(actor: Actor, jobId: string, input: { idempotencyKey: string | undefined; ifRevision: string | undefined; body: unknown }): Promise<JobWriteResult>;
  /** Export the staged report (rich-json or markdown); REPORT_NOT_READY until it exists. */
  report(actor: Actor, jobId: string, format: string | undefined): Promise<DocumentRead>;
  /** Research runs the actor's account may still start: 0 without a runner, null when unknown. */
  runsRemaining(actor: Actor): number | null;
  /** The account's research-run budget: `{ limit: 0, remaining: 0 }` without a runner, null when the runner does not know it. */
  researchRuns(actor: Actor): { limit: number; remaining: number } | null;
  /** Settles when recovery of jobs left by an earlier process is done. */
  readonly recovered: Promise<void>;
  /**
   * Renew the leases of this process's runs and take over jobs whose lease expired (their process
   * died) or was released; a timer does this every `lease.renewMs`.
   */
  sweep(): Promise<void>;
  /** Resolves when no run of this process is in progress. */
  idle(): Promise<void>;
  /** Abort runs (reason "shutdown") and release their leases, leaving their jobs to another process or the next start. */
  close(): Promise<void>;
}
