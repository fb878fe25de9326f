/**
 * The research-jobs service: start, list, read, events (page and live), cancel and report export.
 * Methods take an {@link Actor} and logical inputs (never HTTP names) and throw `ServiceError`s with
 * the contract's codes.
 * @module
 */
import * as v from 'valibot';
import { isoTimestamp } from '../clock.ts';
import type { Actor, EngineDeps } from '../deps.ts';
import { ServiceError, invalid } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../documents/cursor.ts';
import { IdempotencyStore, requireIdempotencyKey, scopedKey } from '../idempotency/idempotency.ts';
import { createEventHub } from './event-hub.ts';
import { eventPage, followEvents, parseEventCursor, parseEventLimit } from './events.ts';
import { exportReport, type ReportFormat, REPORT_FORMATS } from './report.ts';
import { applyEvent } from './run-context.ts';
import { canonicalJson } from '../canonical-json.ts';
import { CancellationRequestSchema, parseSpec, type ResearchJob } from './schemas.ts';
import { isTerminal } from './states.ts';
import { JOBS_COLLECTION, createJobStore, listPartition, ownerOf, type StoredJob } from './store.ts';
import { createSupervisor } from './supervisor.ts';
import type { JobRead, JobWriteResult, JobsService, JobsServiceOptions } from './types.ts';

export type { JobRead, JobWriteResult, JobsService, JobsServiceOptions } from './types.ts';

const LIST = 'research-jobs';

interface StoredResult {
  job: ResearchJob;
  revision: string;
}

/** Build the service over the engine's ports. */
export function createJobsService(deps: EngineDeps, options: JobsServiceOptions): JobsService {
  const { documents } = options;
  const runner = options.runner ?? null;
  const onError = options.onError ?? (() => undefined);
  const store = createJobStore(deps);
  const hub = createEventHub(deps.storage);
  const idem = options.idempotency ?? new IdempotencyStore(deps.storage, deps.clock, { onError: deps.reportError });
  const supervisor = createSupervisor({ deps, store, documents, proposals: options.proposals ?? null }, { runner, onError, extendContext: options.extendContext });
  const recovered = options.recover === false ? Promise.resolve() : supervisor.recover().catch((e: unknown) => onError(e, null));
  const read = (stored: StoredJob): JobRead => ({ job: stored.job, revision: store.revisionOf(stored) });

  async function replayOrRun(scope: string, fingerprint: string, run: () => Promise<JobWriteResult>, beforeRun?: () => void): Promise<JobWriteResult> {
    for (;;) {
      const record = await idem.lookup<StoredResult>(scope, fingerprint);
      if (record) return { ...record.result, receipt: { idempotency: 'replayed', receiptRef: record.receiptRef, v: 1 } };
      if (!idem.busy(scope)) break; // else another request claimed the key while we looked
    }
    beforeRun?.();
    return idem.track(scope, run());
  }

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
        document: target ? { documentRef: target, href: `${deps.baseUrl}/documents/${target}` } : null,
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
    const receiptRef = `rcpt_${deps.ids.hex(32)}`;
    await deps.storage.commit([...ops, idem.recordOp<StoredResult>(scope, { fingerprint, receiptRef, createdAt: nowMs, result: { job, revision } })]);
    supervisor.launch(stored);
    return { job, revision, receipt: { idempotency: 'created', receiptRef, v: 1 } };
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
      const scope = scopedKey(actor.accountId, key);
      const fingerprint = deps.sha256(`research-job.start\n${ownerOf(actor)}\n${canonicalJson(spec)}`);
      return replayOrRun(scope, fingerprint, () => create(actor, spec, scope, fingerprint), () => {
        if (!runner) {
          throw new ServiceError(
            'FEATURE_RETIRED',
            'Fresh hosted research is retired: this server has no research runner. Use your own agent with the document tools; reports of earlier jobs stay readable.',
            { retryable: false },
          );
        }
        if (runner.remainingRuns?.(actor.accountId) === 0) {
          throw new ServiceError('RATE_LIMITED', 'The research-run budget of this account is spent; no further research job can start now.');
        }
      });
    },

    async list(actor, input = {}) {
      const limit = input.limit ?? 20;
      if (!Number.isInteger(limit) || limit < 1 || limit > 50) {
        throw invalid('limit must be an integer from 1 to 50.', [{ field: 'limit', message: 'must be an integer from 1 to 50' }]);
      }
      const owner = ownerOf(actor);
      // The storage position is opaque; the shared cursor scheme binds it to this list and credential.
      const after = input.cursor === undefined ? null : decodeCursor(LIST, owner, input.cursor).documentRef;
      let page;
      try {
        page = await deps.storage.listPage<StoredJob>(JOBS_COLLECTION, listPartition(actor.accountId, owner), limit, after);
      } catch (e) {
        if (after === null) throw e;
        throw new ServiceError('INVALID_REQUEST', 'The cursor is not a cursor of this list for this credential; send back nextCursor unchanged.', {
          fieldErrors: [{ field: 'cursor', message: 'is not a valid cursor of this list for this credential' }],
          cause: e,
        });
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
      return { items, nextCursor: page.next === null ? null : encodeCursor(LIST, owner, { updatedAt: 0, documentRef: page.next }) };
    },

    async read(actor, jobId) {
      return read(await store.visible(actor, jobId));
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
      const scope = scopedKey(actor.accountId, key);
      const fingerprint = deps.sha256(`research-job.cancel\n${ownerOf(actor)}\n${jobId}\n${ifRevision}`);
      return replayOrRun(scope, fingerprint, async () => {
        const nowMs = deps.clock.now();
        const receiptRef = `rcpt_${deps.ids.hex(32)}`;
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
          (next) => [idem.recordOp<StoredResult>(scope, { fingerprint, receiptRef, createdAt: nowMs, result: read(next) })],
        );
        supervisor.abort(jobId, 'cancelled');
        return { ...read(next), receipt: { idempotency: 'created', receiptRef, v: 1 } };
      });
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

    idle: () => supervisor.idle(),
    close: () => supervisor.close(),
  };
  return service;
}
