/**
 * Research jobs. Fresh hosted starts are retired (410 FEATURE_RETIRED after auth, scope and
 * validation, since no research runner is installed). No job can exist on this server yet, so the
 * reads answer what is true: the list is an empty page, and every job reference is 404 NOT_FOUND once
 * the request itself is well-formed.
 * @module
 */
import * as v from 'valibot';
import { ServiceError, invalid, notFound } from '../../errors.ts';
import { requireIdempotencyKey } from '../../idempotency/idempotency.ts';
import { Patterns } from '../../ids.ts';
import { parseOrThrow } from '../../validation.ts';
import { parseLimit } from '../../documents/cursor.ts';
import { ok } from '../envelope.ts';
import { utf8Length } from '../http-util.ts';
import { defineOperation } from '../registry/operation.ts';
import {
  AcceptEventsHeader,
  AfterQuery,
  IdempotencyKeyHeader,
  IfNoneMatchHeader,
  IfRevisionHeader,
  LastEventIdHeader,
  pageQuery,
  pathId,
} from '../registry/params.ts';
import {
  CancellationRequestSchema,
  ReportEnvelopeSchema,
  ResearchJobEnvelopeSchema,
  ResearchJobEventPageEnvelopeSchema,
  ResearchJobPageEnvelopeSchema,
  ResearchReportSpecSchema,
} from '../response-schemas.ts';

/** Maximum canonical UTF-8 size of an acceptance contract. */
export const ACCEPTANCE_MAX_BYTES = 32_768;

const READ_SCOPES = ['research:read', 'research:run'] as const;
const jobId = pathId(Patterns.jobId, 'A research job id: kjob_ and 48 lowercase hex characters.');
const noSuchJob = () => notFound('The research job');

/** An event cursor: a decimal sequence (after, Last-Event-ID). */
const EVENT_CURSOR = /^(0|[1-9]\d{0,15})$/;

function checkEventCursor(value: string | undefined, field: string): void {
  if (value !== undefined && !EVENT_CURSOR.test(value)) {
    throw invalid('An event cursor is the decimal eventId of an earlier event.', [{ field, message: 'must be a decimal event sequence' }]);
  }
}

const ReportFormatSchema = v.picklist(['rich-json', 'markdown'], 'must be rich-json or markdown');

const notFoundJob = { description: 'NOT_FOUND: unknown job, or one another credential created (indistinguishable).' };

/** GET /api/v1/research-jobs */
export const listJobs = defineOperation({
  operationId: 'listResearchJobs',
  method: 'GET',
  path: '/api/v1/research-jobs',
  audience: 'public',
  tag: 'research',
  summary: 'List research jobs',
  description: 'Jobs are visible only to the credential that created them. Newest updatedAt first.',
  auth: 'bearer',
  anyScopes: READ_SCOPES,
  charge: 'before',
  researchBudget: true,
  input: { query: pageQuery },
  responses: {
    200: { description: 'A page of job summaries.', json: ResearchJobPageEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: bad limit or cursor.' },
  },
  run(ctx, input) {
    parseLimit(input.query.limit);
    if (input.query.cursor !== undefined) {
      // No page of this list has ever carried a nextCursor, so no cursor can belong to it.
      throw invalid('The cursor is not a cursor of this list for this credential; send back nextCursor unchanged.', [
        { field: 'cursor', message: 'is not a valid cursor of this list for this credential' },
      ]);
    }
    return ok(ctx, 200, '{"items":[],"nextCursor":null}');
  },
});

/** GET /api/v1/research-jobs/{jobId} */
export const readJob = defineOperation({
  operationId: 'getResearchJob',
  method: 'GET',
  path: '/api/v1/research-jobs/{jobId}',
  audience: 'public',
  tag: 'research',
  summary: 'Read a research job',
  description: 'The canonical job read; authoritative over events. artifacts.report is set once a report is staged.',
  auth: 'bearer',
  anyScopes: READ_SCOPES,
  charge: 'before',
  researchBudget: true,
  input: { path: { jobId }, headers: { ifNoneMatch: IfNoneMatchHeader } },
  responses: {
    200: { description: 'The job.', json: ResearchJobEnvelopeSchema, headers: ['Service-Revision', 'ETag'] },
    304: { description: 'Not modified since the If-None-Match ETag.', headers: ['Service-Revision', 'ETag'] },
    404: notFoundJob,
  },
  run() {
    throw noSuchJob();
  },
});

/** GET /api/v1/research-jobs/{jobId}/events (JSON page or text/event-stream). */
export const readJobEvents = defineOperation({
  operationId: 'listResearchJobEvents',
  method: 'GET',
  path: '/api/v1/research-jobs/{jobId}/events',
  audience: 'public',
  tag: 'research',
  summary: 'Read or follow the events of a job',
  description:
    'JSON form (default): a bounded monotonic page of at most 256 events after `after`. Stream form when Accept includes text/event-stream: opens with `retry: 5000`; frames `id: <eventId>`, `event: research-job`, `data: <ResearchJobEvent JSON>`; `: keep-alive` comments while idle; closes after a terminal event, 1024 events or 20 seconds; resume with Last-Event-ID; 204 for a terminal job with nothing after the cursor.',
  auth: 'bearer',
  anyScopes: READ_SCOPES,
  charge: 'before',
  researchBudget: true,
  input: { path: { jobId }, query: { after: AfterQuery }, headers: { lastEventId: LastEventIdHeader, accept: AcceptEventsHeader } },
  responses: {
    200: {
      description: 'A JSON page of events, or an event stream.',
      json: ResearchJobEventPageEnvelopeSchema,
      text: { 'text/event-stream': 'Server-sent events; each data line is one ResearchJobEvent (#/components/schemas/ResearchJobEvent) as JSON.' },
    },
    204: { description: 'Stream form for a terminal job with no events after the cursor: tells an EventSource client to stop reconnecting.' },
    400: { description: 'INVALID_REQUEST: after or Last-Event-ID is not one valid event cursor.' },
    404: notFoundJob,
  },
  run(_ctx, input) {
    checkEventCursor(input.query.after, 'after');
    checkEventCursor(input.headers.lastEventId, 'lastEventId');
    throw noSuchJob();
  },
});

/** POST /api/v1/research-jobs/{jobId}/cancellations with the fixed body `{"v":1}`. */
export const cancelJob = defineOperation({
  operationId: 'cancelResearchJob',
  method: 'POST',
  path: '/api/v1/research-jobs/{jobId}/cancellations',
  audience: 'public',
  tag: 'research',
  summary: 'Cancel a non-terminal research job',
  description: 'The body is exactly {"v":1}. A replay of the same successful cancellation key returns the terminal receipt.',
  auth: 'bearer',
  allScopes: ['research:run'],
  charge: 'before',
  researchBudget: true,
  input: {
    path: { jobId },
    headers: { idempotencyKey: IdempotencyKeyHeader, ifRevision: IfRevisionHeader },
    body: { schema: CancellationRequestSchema, component: 'CancellationRequest' },
  },
  responses: {
    200: { description: 'The cancelled job and the cancellation receipt.', json: ResearchJobEnvelopeSchema, headers: ['Service-Revision'] },
    400: { description: 'INVALID_REQUEST: the body is not exactly {"v":1}; IDEMPOTENCY_REQUIRED: missing Idempotency-Key.' },
    404: notFoundJob,
    409: { description: 'CONFLICT: the job is already terminal or the cancellation was rejected; IDEMPOTENCY_CONFLICT: key reused for another request.' },
    412: { description: 'PRECONDITION_FAILED: stale Service-If-Revision.' },
    428: { description: 'PRECONDITION_REQUIRED: Service-If-Revision is missing.' },
  },
  run(_ctx, input) {
    requireIdempotencyKey(input.headers.idempotencyKey);
    if (!input.headers.ifRevision) {
      throw new ServiceError('PRECONDITION_REQUIRED', 'A cancellation needs a Service-If-Revision header: read the job and send back its Service-Revision.', {
        requiredAction: 'refresh-resource',
      });
    }
    parseOrThrow(CancellationRequestSchema, input.body, 'cancellation body (exactly {"v":1})');
    throw noSuchJob();
  },
});

/** GET /api/v1/research-jobs/{jobId}/report?format=rich-json|markdown (rich-json also needs document:read). */
export const readJobReport = defineOperation({
  operationId: 'getResearchJobReport',
  method: 'GET',
  path: '/api/v1/research-jobs/{jobId}/report',
  audience: 'public',
  tag: 'research',
  summary: 'Export the report of a job',
  description:
    'rich-json: the whole report document envelope (needs document:read as well); markdown: the loss-reported text projection (at most 256 loss issues). Maximum report size 760,000 bytes.',
  auth: 'bearer',
  anyScopes: READ_SCOPES,
  charge: 'before',
  researchBudget: true,
  input: {
    path: { jobId },
    query: { format: { schema: ReportFormatSchema, description: 'rich-json (also needs document:read) or markdown. Bad format: 400.', required: true } },
    headers: { ifNoneMatch: IfNoneMatchHeader },
  },
  responses: {
    200: {
      description: 'The report.',
      json: ReportEnvelopeSchema,
      text: { 'text/markdown': 'format=markdown; X-Service-Markdown-Loss-Count is set.' },
      headers: ['Service-Revision', 'ETag', 'X-Service-Markdown-Loss-Count'],
    },
    304: { description: 'Not modified since the If-None-Match ETag.', headers: ['Service-Revision', 'ETag'] },
    400: { description: 'INVALID_REQUEST: missing or bad format.' },
    404: notFoundJob,
    409: {
      description:
        'REPORT_NOT_READY (retryable): the report is not staged yet; wait for Retry-After and poll the job until artifacts.report exists. CONFLICT: inconsistent report binding.',
      headers: ['Retry-After'],
    },
  },
  run(ctx, input) {
    const format = parseOrThrow(ReportFormatSchema, input.query.format, 'format', 'format');
    if (format === 'rich-json' && !ctx.credential!.scopeSet.has('document:read')) {
      throw new ServiceError('FORBIDDEN', 'Exporting a report as rich-json also needs the scope document:read.');
    }
    throw noSuchJob();
  },
});

/**
 * POST /api/v1/research-jobs. Checks the key, the spec and the boundary (a document-bound credential
 * must name its own document; a new-document start needs an account-wide credential), then answers
 * 410 FEATURE_RETIRED.
 */
export const startJob = defineOperation({
  operationId: 'startResearchJob',
  method: 'POST',
  path: '/api/v1/research-jobs',
  audience: 'public',
  tag: 'research',
  summary: 'Start a research job (retired)',
  description:
    'Fresh hosted research is retired: a fresh start answers 410 FEATURE_RETIRED unless the embedding program installed a research runner. Account-wide credentials when spaceRef.kind is new-document; a document-bound credential must use its bound documentRef.',
  auth: 'bearer',
  allScopes: ['inquiry:create', 'knowledge:propose', 'research:run'],
  charge: 'before',
  researchBudget: true,
  input: {
    headers: { idempotencyKey: IdempotencyKeyHeader },
    body: { schema: ResearchReportSpecSchema, component: 'ResearchReportSpec' },
  },
  responses: {
    202: { description: 'Accepted: the job.', json: ResearchJobEnvelopeSchema, headers: ['Service-Revision'] },
    400: { description: 'INVALID_REQUEST: bad body; IDEMPOTENCY_REQUIRED: missing Idempotency-Key.' },
    404: { description: 'NOT_FOUND: the target document is not visible.' },
    409: { description: 'IDEMPOTENCY_CONFLICT: the key is bound to a different request.' },
    410: { description: 'FEATURE_RETIRED: fresh hosted research is retired; use your own agent with the document tools.' },
  },
  async run(ctx, input) {
    requireIdempotencyKey(input.headers.idempotencyKey);
    const spec = parseOrThrow(ResearchReportSpecSchema, input.body, 'research report spec');
    if (spec.acceptance !== undefined && utf8Length(JSON.stringify(spec.acceptance)) > ACCEPTANCE_MAX_BYTES) {
      throw invalid('The acceptance contract exceeds 32768 canonical UTF-8 bytes.', [
        { field: 'acceptance', message: 'must be at most 32768 bytes as canonical JSON' },
      ]);
    }
    const actor = ctx.credential!.actor;
    if (spec.spaceRef.kind === 'document') {
      await ctx.engine.documents.head(actor, spec.spaceRef.documentRef); // NOT_FOUND outside the boundary
    } else if (actor.documentRef !== null) {
      throw new ServiceError('FORBIDDEN', 'A document-bound credential cannot start research in a new document; name its bound document.');
    }
    throw new ServiceError(
      'FEATURE_RETIRED',
      'Fresh hosted research is retired: this server has no research runner. Use your own agent with the document tools; reports of earlier jobs stay readable.',
      { retryable: false },
    );
  },
});

/** The research operations in published order. */
export const researchOperations = [listJobs, startJob, readJob, readJobEvents, cancelJob, readJobReport];
