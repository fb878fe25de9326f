/**
 * The scripted research runner of `kw serve --research-runner fixture`, for building agents against
 * the research-job API without a real research backend. Every job walks the real state machine:
 * `queued` → `running` through planning, retrieving, extracting, proposing (a proposal made from the
 * question), synthesizing (a report document), then `waiting` in `requesting-review` with
 * `requiredAction: "review-in-browser"` until a person decides the review: acceptance ends the job
 * `succeeded` (phase `complete`), rejection or withdrawal `failed` with JOB_FAILED. A question with
 * the word "fail" fails in phase retrieving with a retryable JOB_FAILED.
 * @remarks The proposal needs a document to belong to (the space of the job's document). A job
 * started on an existing document (`spaceRef.kind: "document"`) submits it in phase proposing; a
 * `new-document` job has no document until its report is staged, so it submits the proposal right
 * after staging the report, in phase synthesizing.
 * @example
 * let engine: Engine;
 * const runner = fixtureRunner({ reviews: () => engine.operator });
 * engine = createEngine({ storage, runner });
 * @module
 */
import type { BlockInput } from '../blocks/model.ts';
import type { ResearchRunContext, ResearchRunner } from './runner.ts';
import type { ResearchJob } from './schemas.ts';

/** Where the runner reads a review's outcome: the engine's operator API (`engine.operator`) fits. */
export interface ReviewOutcomes {
  proposalOfReview(reviewRef: string): Promise<{ state: string; accepted: { inquiryIds: Record<string, string> } | null }>;
}

/** Options of {@link fixtureRunner}. */
export interface FixtureRunnerOptions {
  /** The review outcomes, or a function giving them (so the runner can be made before the engine). */
  reviews: ReviewOutcomes | (() => ReviewOutcomes);
  /** How long each phase takes, in ms; default 200. */
  phaseMs?: number;
  /** How often a waiting job looks at its review, in ms; default `phaseMs` (at least 10). */
  pollMs?: number;
}

/** The word that makes the fixture runner fail a job (in phase retrieving, retryable). */
export const FIXTURE_FAIL_WORD = /\bfail\b/i;
/** The person's role in the waiting summary. */
const WAITING_SUMMARY = 'Waiting for a person to review the proposal (POST /operator/v1/reviews/{reviewRef}/decisions, or the review page)';

/** The proposal a fixture job submits: one inquiry, the job's question. */
export function fixtureProposal(job: Pick<ResearchJob, 'spec'>) {
  const { question, deliverable } = job.spec;
  return {
    v: 2,
    entities: [],
    facts: [],
    evidence: [],
    inquiries: [{ key: 'question', question, answerForm: deliverable.form, language: deliverable.language, parentKeys: [] }],
  };
}

/** Markdown special characters escaped, so the question reads as plain text in a block. */
const plain = (text: string) => text.replace(/[\\`*_[\]<>#|~]/g, (c) => `\\${c}`).replace(/\s+/g, ' ').trim();

/** The report a fixture job stages: the question and a note that a fixture wrote it. */
export function fixtureReport(job: Pick<ResearchJob, 'spec'>): { blocks: BlockInput[] } {
  return {
    blocks: [
      { type: 'heading', level: 1, markdown: plain(job.spec.question).slice(0, 2000) || 'Report' },
      { type: 'paragraph', markdown: 'This report was written by the fixture research runner of the dev server (`kw serve --research-runner fixture`): it walks the real job state machine with scripted content, for building agents against the API.' },
      { type: 'heading', level: 2, markdown: 'Findings' },
      { type: 'bulletListItem', markdown: 'The job planned, retrieved, extracted, proposed and synthesized in about a second.' },
      { type: 'bulletListItem', markdown: 'Its proposal names the question as an inquiry; a person reviews it before the job ends.' },
    ] as BlockInput[],
  };
}

/**
 * A scripted research runner (see the module documentation).
 * @remarks Restart-safe: a job handed back after a restart resumes where it stands (a staged report
 * is not staged again, the proposal submission replays under its fixed key, a job waiting for its
 * review goes on waiting). A waiting job the runner did not bring there (a demo job) stays waiting.
 */
export function fixtureRunner(options: FixtureRunnerOptions): ResearchRunner {
  const phaseMs = options.phaseMs ?? 200;
  const pollMs = Math.max(10, options.pollMs ?? phaseMs);
  const reviews = () => (typeof options.reviews === 'function' ? options.reviews() : options.reviews);

  /** Resolves after `ms`, or at once when the run is aborted; true when still running. */
  const pause = (ctx: ResearchRunContext, ms: number) =>
    new Promise<boolean>((resolve) => {
      if (ctx.signal.aborted) return resolve(false);
      const done = () => {
        clearTimeout(timer);
        ctx.signal.removeEventListener('abort', done);
        resolve(!ctx.signal.aborted);
      };
      const timer = setTimeout(done, ms);
      ctx.signal.addEventListener('abort', done, { once: true });
    });

  async function submit(ctx: ResearchRunContext, job: ResearchJob): Promise<void> {
    await ctx.submitProposal(fixtureProposal(job), { idempotencyKey: `fixture-proposal-${job.jobId}` } /* proposal keys belong to the account: one per job */);
  }

  async function work(job: ResearchJob, ctx: ResearchRunContext): Promise<boolean> {
    const steps: [phase: 'planning' | 'retrieving' | 'extracting', summary: string, percent: number, done: string][] = [
      ['planning', 'Planning the research', 10, 'Planned 3 coverage requirements'],
      ['retrieving', 'Retrieving sources', 25, 'Read 4 sources'],
      ['extracting', 'Extracting claims', 40, 'Extracted 9 claims'],
    ];
    for (const [phase, summary, percent, done] of steps) {
      await ctx.setPhase(phase, summary);
      if (!(await pause(ctx, phaseMs))) return false;
      if (phase === 'retrieving' && FIXTURE_FAIL_WORD.test(job.spec.question)) {
        await ctx.fail({ message: 'The fixture runner fails every question containing the word "fail" (in phase retrieving); start a job without it to see one succeed.', retryable: true });
        return false;
      }
      await ctx.progress(percent, done);
    }
    await ctx.setPhase('proposing', 'Proposing what the research found');
    const hasDocument = (await ctx.job()).artifacts.document !== null || job.spec.spaceRef.kind === 'document';
    if (hasDocument) await submit(ctx, job);
    if (!(await pause(ctx, phaseMs))) return false;
    await ctx.progress(60, hasDocument ? 'Submitted a proposal for review' : 'Drafted a proposal; it is submitted with the report');
    await ctx.setPhase('synthesizing', 'Writing the report');
    if (!(await pause(ctx, phaseMs))) return false;
    if (!(await ctx.job()).artifacts.report) await ctx.stageReport(fixtureReport(job));
    if (!hasDocument) await submit(ctx, job);
    await ctx.progress(80, 'The report is staged');
    return true;
  }

  return {
    async run(job, ctx) {
      const now = await ctx.job();
      const resumeReview = now.phase === 'requesting-review' && now.artifacts.review !== null && now.artifacts.report !== null;
      if (!resumeReview && now.state === 'waiting') {
        // A job waiting for something this runner does not provide (e.g. a demo job handed back after
        // a restart): it stays waiting, and cancellable, until the run is aborted.
        while (await pause(ctx, 60_000));
        return;
      }
      if (!resumeReview) {
        if (!(await work(now, ctx))) return;
        await ctx.setPhase('requesting-review', 'Requesting a review of the proposal');
        await ctx.waiting({ summary: WAITING_SUMMARY, requiredAction: 'review-in-browser' });
      } else if (now.state === 'running') {
        await ctx.waiting({ summary: WAITING_SUMMARY, requiredAction: 'review-in-browser' });
      }
      const reviewRef = (await ctx.job()).artifacts.review!.reviewRef;
      for (;;) {
        if (!(await pause(ctx, pollMs))) return;
        const proposal = await reviews().proposalOfReview(reviewRef);
        if (proposal.state === 'accepted') {
          await ctx.setPhase('requesting-review', 'The review accepted the proposal');
          const inquiryId = proposal.accepted ? Object.values(proposal.accepted.inquiryIds)[0] : undefined;
          if (inquiryId !== undefined) await ctx.recordArtifact({ kind: 'inquiry', inquiryId });
          await ctx.succeed({ summary: 'The review accepted the proposal; the report is ready.' });
          return;
        }
        if (proposal.state === 'rejected' || proposal.state === 'withdrawn') {
          await ctx.fail({ message: `The review ${proposal.state === 'rejected' ? 'rejected' : 'withdrew'} the proposal, so the job ends without a result; start a new job to try again.`, retryable: false });
          return;
        }
      }
    },
  };
}
