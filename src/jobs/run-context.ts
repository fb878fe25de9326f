/**
 * The context handed to a runner: every method is one checked transition of the job.
 * @module
 */
import type { Links } from '../contract/links.ts';
import type { EngineDeps } from '../deps.ts';
import { ServiceError, conflict, invalid } from '../errors.ts';
import type { DocumentsService } from '../documents/types.ts';
import { Patterns } from '../ids.ts';
import { logicalJob, writeReportDocument } from './report.ts';
import type { Actor } from '../actor.ts';
import type { ArtifactInput, FailureInput, ProposalSink, ReportArtifact, ResearchRunContext, WaitingInput } from './runner.ts';
import type { JobStore, StoredJob } from './store.ts';
import { transition, type JobTransitionEvent } from './states.ts';
import type { ResearchJob } from './schemas.ts';

const SUMMARY_MAX = 1024;
/** Cut `text` to at most `max` UTF-16 units (what response schemas count), never inside a surrogate pair. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

/** Apply a transition (and an optional edit of the other fields) to a stored job. */
export function applyEvent(current: StoredJob, event: JobTransitionEvent, edit?: (job: ResearchJob) => ResearchJob) {
  const t = transition(current.job, event);
  const job: ResearchJob = { ...current.job, state: t.state, phase: t.phase };
  return { job: edit ? edit(job) : job, kind: t.kind };
}

function checkArtifact(a: ArtifactInput): void {
  const ok =
    (a.kind === 'document' && Patterns.documentRef.test(a.documentRef)) ||
    (a.kind === 'inquiry' && Patterns.inquiryId.test(a.inquiryId)) ||
    (a.kind === 'proposal' && Patterns.proposalRef.test(a.proposalRef)) ||
    (a.kind === 'review' && Patterns.reviewRef.test(a.reviewRef) && a.browserHref.length >= 1 && a.browserHref.length <= 2048) ||
    (a.kind === 'publicArtifact' && typeof a.ref === 'object' && a.ref !== null);
  if (!ok) throw invalid(`The ${String(a.kind)} artifact is malformed.`, [{ field: String(a.kind), message: 'is not a valid artifact reference' }]);
}

function withArtifact(job: ResearchJob, a: ArtifactInput, links: Links): ResearchJob {
  const artifacts = { ...job.artifacts };
  if (a.kind === 'document') artifacts.document = { documentRef: a.documentRef, href: links.documentPage(a.documentRef) };
  else if (a.kind === 'inquiry') artifacts.inquiry = { inquiryId: a.inquiryId };
  else if (a.kind === 'proposal') artifacts.proposal = { proposalRef: a.proposalRef };
  else if (a.kind === 'review') artifacts.review = { reviewRef: a.reviewRef, browserHref: a.browserHref };
  else {
    if (artifacts.publicArtifacts.length >= 256) throw conflict('A job lists at most 256 public artifacts.', 'publicArtifacts');
    artifacts.publicArtifacts = [...artifacts.publicArtifacts, a.ref];
  }
  return { ...job, artifacts };
}

/** What a context needs. */
export interface RunContextDeps {
  deps: EngineDeps;
  store: JobStore;
  documents: DocumentsService;
  /** Where `submitProposal` goes; null without a knowledge service. */
  proposals?: ProposalSink | null;
}

/** The actor a job runs for: its owner (the credential that started it) in its account. */
function ownerActor(stored: StoredJob): Actor {
  return { accountId: stored.accountId, credentialRef: stored.owner.startsWith('scred_') ? stored.owner : null, documentRef: null };
}

/** Build the base context of one run of `stored`. */
export function createRunContext({ deps, store, documents, proposals }: RunContextDeps, stored: StoredJob, signal: AbortSignal): ResearchRunContext {
  const { jobId } = stored.job;
  const update = async (event: JobTransitionEvent | ((current: StoredJob) => JobTransitionEvent), edit?: (job: ResearchJob) => ResearchJob) => {
    await store.update(jobId, (current) => applyEvent(current, typeof event === 'function' ? event(current) : event, edit));
  };
  const summaryOf = (summary: string) => {
    if (typeof summary !== 'string') throw invalid('A progress summary is a string.', [{ field: 'summary', message: 'must be a string' }]);
    return clip(summary, SUMMARY_MAX);
  };
  const current = async () => {
    const record = await store.get(jobId);
    if (!record) throw new ServiceError('INTERNAL_ERROR', `Research job ${jobId} vanished from storage.`);
    return record.value;
  };
  return {
    jobId,
    spec: stored.job.spec,
    signal,
    async job() {
      return logicalJob((await current()).job);
    },
    async setPhase(phase, summary) {
      const event = (current: StoredJob): JobTransitionEvent => (current.job.state === 'queued' ? { type: 'start', phase } : { type: 'phase', phase });
      return update(event, (job) => ({
        ...job,
        requiredAction: null,
        progress: summary === undefined ? job.progress : { ...job.progress, summary: summaryOf(summary) },
      }));
    },
    async progress(percent, summary) {
      if (!Number.isInteger(percent) || percent < 0 || percent > 100) {
        throw invalid('Progress is an integer percent from 0 to 100.', [{ field: 'percent', message: 'must be an integer from 0 to 100' }]);
      }
      const text = summaryOf(summary);
      return update({ type: 'progress' }, (job) => ({ ...job, progress: { percent, summary: text } }));
    },
    async waiting(input: WaitingInput) {
      const missing = input.missingEvidence ?? [];
      if (missing.length > 64 || missing.some((m) => typeof m !== 'string' || m.length > 4096)) {
        throw invalid('missingEvidence holds at most 64 strings of at most 4096 characters.', [{ field: 'missingEvidence', message: 'must be at most 64 strings of at most 4096 characters' }]);
      }
      const text = summaryOf(input.summary);
      return update({ type: 'wait' }, (job) => ({
        ...job,
        progress: { ...job.progress, summary: text },
        requiredAction: input.requiredAction ?? null,
        missingEvidence: [...missing],
      }));
    },
    async stageReport(report) {
      const now = await current();
      transition(now.job, { type: 'artifact' }); // refuse before writing a document for a finished job
      if (now.job.artifacts.report) throw conflict('This job already has a staged report.', 'artifacts.report');
      const documentRef = await writeReportDocument(deps, documents, now.accountId, now.job.spec, report);
      const artifact: ReportArtifact = { documentRef };
      await update({ type: 'artifact' }, (job) => {
        if (job.artifacts.report) throw conflict('This job already has a staged report.', 'artifacts.report');
        const artifacts = { ...job.artifacts, report: artifact };
        if (artifacts.document === null && job.spec.spaceRef.kind === 'new-document') {
          artifacts.document = { documentRef, href: deps.links.documentPage(documentRef) };
        }
        return { ...job, artifacts };
      });
      return artifact;
    },
    async recordArtifact(artifact) {
      checkArtifact(artifact);
      return update({ type: 'artifact' }, (job) => withArtifact(job, artifact, deps.links));
    },
    async submitProposal(request, options) {
      if (!proposals) throw new ServiceError('TEMPORARILY_UNAVAILABLE', 'This engine has no knowledge service to submit proposals to.');
      const job = (await current()).job;
      const documentRef = job.artifacts.report?.documentRef ?? job.artifacts.document?.documentRef ?? (job.spec.spaceRef.kind === 'document' ? job.spec.spaceRef.documentRef : null);
      const head = documentRef === null ? null : await deps.storage.getDocumentHead(documentRef);
      if (!head) throw conflict('A proposal belongs to the space of the job\'s document: stage the report (or start the job on a document) first.', 'artifacts.report');
      const result = await proposals.submitProposal({ actor: ownerActor(stored), jobId, spaceRef: head.spaceRef }, request, options);
      const after = (await current()).job.artifacts;
      if (after.proposal?.proposalRef !== result.proposalRef) await this.recordArtifact({ kind: 'proposal', proposalRef: result.proposalRef });
      if (after.review?.reviewRef !== result.reviewRef) await this.recordArtifact({ kind: 'review', reviewRef: result.reviewRef, browserHref: result.browserHref });
      return result;
    },
    async succeed(input = {}) {
      const text = summaryOf(input.summary ?? 'The report is ready.');
      return update({ type: 'succeed' }, (job) => {
        if (!job.artifacts.report) throw conflict('A research job succeeds only with a staged report; call stageReport first.', 'artifacts.report');
        const out: ResearchJob = { ...job, progress: { percent: 100, summary: text }, requiredAction: null, error: null };
        if (input.diagnostic) out.researchAuditDiagnostic = input.diagnostic;
        return out;
      });
    },
    async fail(input: FailureInput) {
      return update({ type: 'fail' }, (job) => failed(job, input));
    },
  };
}

/** The job after a failure: a JOB_FAILED terminal error, its recovery hint, the summary. */
export function failed(job: ResearchJob, input: FailureInput): ResearchJob {
  const message = clip(typeof input.message === 'string' && input.message ? input.message : 'The research job failed.', 2048);
  const retryable = input.retryable ?? false;
  const requiredAction = input.requiredAction ?? (retryable ? 'retry-job' : null);
  const error: NonNullable<ResearchJob['error']> = { code: 'JOB_FAILED', message, retryable };
  if (requiredAction) error.requiredAction = requiredAction;
  const out: ResearchJob = { ...job, error, requiredAction, progress: { ...job.progress, summary: clip(message, SUMMARY_MAX) } };
  if (input.diagnostic) out.researchAuditDiagnostic = input.diagnostic;
  return out;
}
