/**
 * The research-jobs service: start, list, read, events (page and live), cancel and report export.
 * Methods take an {@link Actor} and logical inputs (never HTTP names) and throw `ServiceError`s with
 * the contract's codes.
 * @module
 */
import * as v from 'valibot';
import { isoTimestamp } from '../clock.ts';
import type { EngineDeps } from '../deps.ts';
import { accountActor, type Actor } from '../actor.ts';
import { recordTopic } from '../ports.ts';
import { ServiceError, invalid } from '../errors.ts';
import { decodeCursor, encodeCursor, invalidCursor, pageLimit } from '../cursor.ts';
import { IdempotencyStore, createdReceipt, newReceiptRef, replayedReceipt, requireIdempotencyKey, writeScope, type IdempotencyRecord } from '../idempotency/idempotency.ts';
import { createEventHub } from './event-hub.ts';
import { withPublishedArtifacts } from './public-artifacts.ts';
import { eventPage, followEvents, parseEventCursor, parseEventLimit } from './events.ts';
import { exportReport, logicalJob, type ReportFormat, REPORT_FORMATS } from './report.ts';
import { applyEvent } from './run-context.ts';
import { canonicalJson } from '../canonical-json.ts';
import { CancellationRequestSchema, parseSpec, type ResearchJob } from './schemas.ts';
import { isTerminal } from './states.ts';
import { JOBS_COLLECTION, createJobStore, listPartition, ownerOf, type StoredJob } from './store.ts';
import { createSupervisor } from './supervisor.ts';
import type { JobRead, JobWriteResult, JobsService, JobsServiceOptions } from './types.ts';

export type { JobRead, JobWriteResult, JobsService, JobsServiceOptions } from './types.ts';

const LIST = 'research-jobs';

/** What a start's or cancellation's idempotency record keeps: the job it made or cancelled. */
interface StoredResult {
  jobId: string;
}

/** Build the service over the engine's ports. */
export function createJobsService(deps: EngineDeps, options: JobsServiceOptions): JobsService {
  const { documents } = options;
  const runner = options.runner ?? null;
  const onError = options.onError ?? (() => undefined);
  const store = createJobStore(deps);
  const hub = createEventHub(deps.storage);
  const idem = options.idempotency ?? new IdempotencyStore(deps.storage, deps.clock, { onError: deps.reportError });
  const supervisor = createSupervisor({ deps, store, documents, proposals: options.proposals ?? null }, {
    runner,
    onError,
    extendContext: options.extendContext,
    lease: options.lease,
    processId: `proc_${crypto.randomUUID()}`, // not from deps.ids: seeded id sequences stay as they were
  });
  const recovered = options.recover === false ? Promise.resolve() : supervisor.recover().catch((e: unknown) => onError(e, null));
  const read = (stored: StoredJob): JobRead => ({ job: logicalJob(stored.job), revision: store.revisionOf(stored) });

  /** An exact repeat: the first application's receipt with the job as it is now. */
  const replay = async (actor: Actor, record: IdempotencyRecord<StoredResult>): Promise<JobWriteResult> => ({
    ...read(await store.visible(actor, record.result.jobId)),
    receipt: replayedReceipt(record),
  });

  async function create(actor: Actor, spec: ResearchJob['spec'], scope: string, fingerprint: string): Promise<JobWriteResult> {
    const nowMs = deps.clock.now();
    const now = isoTimestamp(nowMs);
    const target = spec.spaceRef.kind === 'document' ? spec.spaceRef.documentRef : null;
    const job: ResearchJob = {
      v: 1,
      jobId: deps.refs.jobId(),
      state: 'queued',
      phase: 'queued',
      progress: { percent: 0, summary: 'Queued.' },
      createdAt: now,
      updatedAt: now,
      error: null,
      requiredAction: null,
      missingEvidence: [],
      artifacts: {
        document: target ? { documentRef: target, href: deps.links.documentPage(target) } : null,
        inquiry: null,
        proposal: null,
        review: null,
        report: null,
        publicArtifacts: [],
      },
      spec,
    };
    const { ops, stored } = store.createOps(actor, job, nowMs);
    const revision = store.revisionOf(stored);
    const receiptRef = newReceiptRef(deps.ids);
    await deps.storage.commit([
      ...ops,
      supervisor.claimOp(job.jobId), // the job is this process's from its first moment
      idem.recordOp<StoredResult>(scope, { fingerprint, receiptRef, createdAt: nowMs, result: { jobId: job.jobId } }),
    ]);
    supervisor.launch(stored, 1);
    return { job, revision, receipt: createdReceipt(receiptRef) };
  }

  const service: JobsService = {
    recovered,

    async start(actor, input) {
      const key = requireIdempotencyKey(input.idempotencyKey);
      const spec = parseSpec(input.body);
      if (spec.spaceRef.kind === 'document') await documents.head(actor, spec.spaceRef.documentRef); // NOT_FOUND outside the boundary
      else if (actor.documentRef !== null) {
        throw new ServiceError('FORBIDDEN', 'A document-bound credential cannot start research in a new document; name its bound document in spaceRef.');
      }
      // A job is visible only to the credential that created it, so its keys belong to the credential.
      const scope = writeScope('research-job.start', ownerOf(actor), key);
      const fingerprint = deps.sha256(`research-job.start\n${canonicalJson(spec)}`);
      const refusal = () => {
        if (!runner) {
          return new ServiceError(
            'FEATURE_RETIRED',
            'Fresh hosted research is retired: this server has no research runner. Use your own agent with the document tools; reports of earlier jobs stay readable.',
            { retryable: false },
          );
        }
        if (runner.remainingRuns?.(actor.accountId) === 0) {
          return new ServiceError('RATE_LIMITED', 'The research-run budget of this account is spent; no further research job can start now.');
        }
        return null;
      };
      const replayStart = (r: IdempotencyRecord<StoredResult>) => replay(actor, r);
      const refused = refusal();
      if (refused) {
        // A start that cannot run writes nothing, not even a claim; an accepted one still replays.
        const prior = await idem.find<StoredResult>(scope, fingerprint);
        if (prior) return replayStart(prior);
        throw refused;
      }
      const apply = () => {
        const late = refusal(); // the budget may have run out while this start waited for its key
        return late ? Promise.reject(late) : create(actor, spec, scope, fingerprint);
      };
      return idem.run(scope, fingerprint, apply, replayStart);
    },

    async list(actor, input = {}) {
      const limit = pageLimit(input.limit);
      const owner = ownerOf(actor);
      // The storage position is opaque; the shared cursor scheme binds it to this list and credential.
      const after = input.cursor === undefined ? null : decodeCursor(LIST, owner, input.cursor).after;
      let page;
      try {
        page = await deps.storage.listPage<StoredJob>(JOBS_COLLECTION, listPartition(actor.accountId, owner), limit, after);
      } catch (e) {
        if (after === null) throw e;
        throw invalidCursor(e);
      }
      const items = page.records.map(({ value: { job } }) => ({
        v: 1 as const,
        jobId: job.jobId,
        state: job.state,
        phase: job.phase,
        progress: job.progress,
        createdAt: job.createdAt,
        updatedAt: job.updatedAt,
      }));
      return { items, nextCursor: page.next === null ? null : encodeCursor(LIST, owner, { after: page.next }) };
    },

    async read(actor, jobId) {
      const stored = await store.visible(actor, jobId);
      // Public artifacts published from the review after the job ended (src/jobs/public-artifacts.ts).
      const logical = logicalJob(stored.job);
      const job = isTerminal(logical.state) ? await withPublishedArtifacts(deps, logical) : logical;
      return { job, revision: store.revisionOf(stored) };
    },

    async listOfAccount(accountId, credentialRefs, limit = 20) {
      const owners = [...credentialRefs, ownerOf(accountActor(accountId))];
      const pages = await Promise.all(owners.map((o) => deps.storage.listPage<StoredJob>(JOBS_COLLECTION, listPartition(accountId, o), limit)));
      return pages
        .flatMap((p) => p.records.map((r) => r.value))
        .sort((a, b) => b.updatedMs - a.updatedMs)
        .slice(0, limit)
        .map((stored) => logicalJob(stored.job));
    },

    async readOfAccount(accountId, jobId) {
      const stored = await store.get(jobId);
      return stored !== null && stored.value.accountId === accountId ? logicalJob(stored.value.job) : null;
    },

    watch(jobId, onChange) {
      return deps.storage.subscribe(recordTopic(JOBS_COLLECTION, jobId), onChange);
    },

    async events(actor, jobId, input = {}) {
      const stored = await store.visible(actor, jobId);
      const limit = parseEventLimit(input.limit);
      return eventPage(deps, stored, parseEventCursor(input.after, stored.seq), limit);
    },

    async follow(actor, jobId, input = {}) {
      const stored = await store.visible(actor, jobId);
      const after = parseEventCursor(input.after, stored.seq);
      return followEvents(hub, jobId, after, input.signal);
    },

    async feed(actor, jobId, input, sink) {
      const stored = await store.visible(actor, jobId);
      return hub.open(jobId, parseEventCursor(input.after, stored.seq), sink);
    },

    get followedJobs() {
      return hub.channels;
    },

    async cancel(actor, jobId, input) {
      const key = requireIdempotencyKey(input.idempotencyKey);
      if (!v.is(CancellationRequestSchema, input.body)) {
        throw invalid('The cancellation body is exactly {"v":1}.', [{ field: '$', message: 'must be exactly {"v":1}' }]);
      }
      if (input.ifRevision === undefined || input.ifRevision === '') {
        throw new ServiceError('PRECONDITION_REQUIRED', 'A cancellation needs the job revision as precondition: read the job and send its revision back.', {
          fieldErrors: [{ field: 'ifRevision', message: 'is required' }],
          requiredAction: 'refresh-resource',
        });
      }
      const ifRevision = input.ifRevision;
      await store.visible(actor, jobId);
      const scope = writeScope('research-job.cancel', ownerOf(actor), key);
      const fingerprint = deps.sha256(`research-job.cancel\n${jobId}\n${ifRevision}`);
      const apply = async (): Promise<JobWriteResult> => {
        const nowMs = deps.clock.now();
        const receiptRef = newReceiptRef(deps.ids);
        const next = await store.update(
          jobId,
          (current) => {
            if (isTerminal(current.job.state)) {
              throw new ServiceError('CONFLICT', `The research job is already ${current.job.state}; a terminal job cannot be cancelled.`, { requiredAction: 'refresh-resource' });
            }
            if (store.revisionOf(current) !== ifRevision) {
              throw new ServiceError('PRECONDITION_FAILED', 'The job changed since that revision: read it again and send its current revision.', {
                fieldErrors: [{ field: 'ifRevision', message: 'is not the current revision of the job' }],
                requiredAction: 'refresh-resource',
              });
            }
            return applyEvent(current, { type: 'cancel' }, (job) => ({
              ...job,
              requiredAction: null,
              progress: { ...job.progress, summary: 'Cancelled on request.' },
            }));
          },
          () => [idem.recordOp<StoredResult>(scope, { fingerprint, receiptRef, createdAt: nowMs, result: { jobId } })],
        );
        supervisor.abort(jobId, 'cancelled');
        return { ...read(next), receipt: createdReceipt(receiptRef) };
      };
      return idem.run(scope, fingerprint, apply, (r: IdempotencyRecord<StoredResult>) => replay(actor, r));
    },

    async report(actor, jobId, format) {
      if (!(REPORT_FORMATS as readonly (string | undefined)[]).includes(format)) {
        throw invalid(`format is required: ${REPORT_FORMATS.join(' or ')}.`, [{ field: 'format', message: `must be ${REPORT_FORMATS.join(' or ')}` }]);
      }
      const stored = await store.visible(actor, jobId);
      const report = stored.job.artifacts.report;
      if (!report) {
        if (isTerminal(stored.job.state)) {
          throw new ServiceError('CONFLICT', `The research job ended ${stored.job.state} without a report; none will be staged.`);
        }
        throw new ServiceError('REPORT_NOT_READY', 'The report is not staged yet; poll the job until artifacts.report exists.', {
          retryable: true,
          retryAfterMs: 5000,
        });
      }
      return exportReport(documents, stored.accountId, report.documentRef, format as ReportFormat);
    },

    runsRemaining(actor) {
      if (!runner) return 0;
      if (runner.runBudget) return runner.runBudget(actor.accountId)?.remaining ?? null;
      return runner.remainingRuns?.(actor.accountId) ?? null;
    },
    researchRuns(actor) {
      if (!runner) return { limit: 0, remaining: 0 };
      const budget = runner.runBudget?.(actor.accountId) ?? null;
      return budget === null ? null : { limit: budget.limit, remaining: budget.remaining };
    },

    sweep: () => supervisor.sweep(),
    idle: () => supervisor.idle(),
    close: () => supervisor.close(),
  };
  return service;
}
