/**
 * Research jobs over the jobs service: list, start (410 FEATURE_RETIRED unless a runner is installed),
 * read (conditional), events (JSON page or Server-Sent Events), cancel, and report export.
 * @module
 */
import * as v from 'valibot';
import type { Actor } from '../../deps.ts';
import { parseLimit } from '../../documents/cursor.ts';
import { ServiceError, isServiceError } from '../../errors.ts';
import { Patterns } from '../../ids.ts';
import type { EventSink } from '../../jobs/event-hub.ts';
import { CancellationRequestSchema, ResearchReportSpecSchema, type ResearchJobEvent } from '../../jobs/schemas.ts';
import { DEFAULT_PACING } from '../../jobs/event-hub.ts';
import { EVENT_PAGE_MAX } from '../../jobs/events.ts';
import { REPORT_FORMATS, ReportLimits } from '../../jobs/report.ts';
import { TERMINAL_EVENT_KINDS } from '../../jobs/states.ts';
import { parseOrThrow } from '../../validation.ts';
import type { RequestContext } from '../context.ts';
import { baseHeaders, ok } from '../envelope.ts';
import { weakEtag } from '../http-util.ts';
import { notModified, representationResponse } from '../representation.ts';
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
  ReportEnvelopeSchema,
  ResearchJobEnvelopeSchema,
  ResearchJobEventPageEnvelopeSchema,
  ResearchJobPageEnvelopeSchema,
} from '../response-schemas.ts';
import { SSE_DEFAULTS } from '../sse-stream.ts';
import { SseStream, frameCache, type SseEvent } from '../sse.ts';

const READ_SCOPES = ['research:read', 'research:run'] as const;
const jobId = pathId(Patterns.jobId, 'A research job id: kjob_ and 48 lowercase hex characters.');
const actorOf = (ctx: RequestContext): Actor => ctx.credential!.actor;
const ReportFormatSchema = v.picklist(REPORT_FORMATS, `must be ${REPORT_FORMATS.join(' or ')}`);
const notFoundJob = { description: 'NOT_FOUND: unknown job, or one another credential created (indistinguishable).' };
const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_EVENT_KINDS);
const EVENT_STREAM = /(^|,)\s*text\/event-stream\s*(;|,|$)/i;

/** Frames of job events, each encoded once however many streams carry it. */
const framesOf = frameCache((event: ResearchJobEvent): SseEvent => ({ id: event.eventId, json: JSON.stringify(event), terminal: TERMINAL.has(event.kind) }));

/** A cursor error of the service names `after`; when the client sent Last-Event-ID, name that instead. */
function cursorFromHeader(e: unknown): never {
  if (isServiceError(e) && e.fieldErrors?.some((f) => f.field === 'after')) {
    throw new ServiceError(e.code, e.message.replace(/\bafter\b/, 'Last-Event-ID'), {
      fieldErrors: e.fieldErrors.map((f) => (f.field === 'after' ? { field: 'lastEventId', message: f.message } : f)),
      cause: e,
    });
  }
  throw e;
}

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
  async run(ctx, input) {
    const page = await ctx.engine.jobs.list(actorOf(ctx), { limit: parseLimit(input.query.limit), cursor: input.query.cursor });
    return ok(ctx, 200, JSON.stringify(page));
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
  async run(ctx, input) {
    const { job, revision } = await ctx.engine.jobs.read(actorOf(ctx), input.path.jobId);
    const etag = weakEtag(revision, 'job');
    const unchanged = notModified(ctx, input.headers.ifNoneMatch, revision, etag);
    if (unchanged) return unchanged;
    return ok(ctx, 200, JSON.stringify(job), { headers: { 'service-revision': revision, etag } });
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
    `JSON form (default): a bounded monotonic page of at most ${EVENT_PAGE_MAX} events after \`after\`. Stream form when Accept includes text/event-stream: opens with \`retry: ${SSE_DEFAULTS.retryMs}\`; frames \`id: <eventId>\`, \`event: research-job\`, \`data: <ResearchJobEvent JSON>\`; \`: keep-alive\` comments after ${SSE_DEFAULTS.keepAliveMs / 1000} s of silence; closes after a terminal event, ${SSE_DEFAULTS.maxEvents} events or ${SSE_DEFAULTS.maxMs / 1000} seconds; resume with Last-Event-ID; 204 for a terminal job with nothing after the cursor. Under heavy fan-out a burst's events may arrive together, at most ${DEFAULT_PACING.maxCoalesceMs} ms after the first.`,
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
  async run(ctx, input) {
    const actor = actorOf(ctx);
    const id = input.path.jobId;
    // An EventSource reconnects to the same URL with Last-Event-ID: the header is the newer position.
    const resume = input.headers.lastEventId;
    // A malformed cursor is refused before the job is looked up; one past the job's events by the service.
    if (resume !== undefined) parseOrThrow(LastEventIdHeader.schema, resume, 'Last-Event-ID', 'lastEventId');
    else if (input.query.after !== undefined) parseOrThrow(AfterQuery.schema, input.query.after, 'after cursor', 'after');
    const after = resume ?? input.query.after;
    const onError = resume === undefined ? (e: unknown): never => { throw e; } : cursorFromHeader;
    if (!EVENT_STREAM.test(input.headers.accept ?? '')) {
      const page = await ctx.engine.jobs.events(actor, id, { after }).catch(onError);
      return ok(ctx, 200, JSON.stringify(page));
    }
    // Visibility and the cursor are checked now, while an error can still be answered.
    const first = await ctx.engine.jobs.events(actor, id, { after, limit: 1 }).catch(onError);
    const headers = baseHeaders(ctx, null);
    if (first.items.length === 0 && first.nextCursor === null) return { status: 204, headers }; // terminal, nothing after: stop reconnecting
    headers['content-type'] = 'text/event-stream; charset=utf-8';
    headers['cache-control'] = 'no-cache, no-transform';
    headers['x-accel-buffering'] = 'no';
    // One feed of the process's event hub: every event is read, framed and encoded once for all streams.
    const stream = new SseStream(ctx.settings.eventStreams, ctx.request.signal);
    const sink: EventSink = { events: (batch) => stream.push(framesOf(batch)), end: () => stream.end(), error: (e) => stream.fail(e) };
    try {
      stream.bind(await ctx.engine.jobs.feed(actor, id, { after }, sink));
    } catch (e) {
      await stream.return();
      return onError(e);
    }
    return { status: 200, headers, stream };
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
  async run(ctx, input) {
    const out = await ctx.engine.jobs.cancel(actorOf(ctx), input.path.jobId, {
      idempotencyKey: input.headers.idempotencyKey,
      ifRevision: input.headers.ifRevision,
      body: input.body,
    });
    return ok(ctx, 200, JSON.stringify(out.job), { receipt: out.receipt, headers: { 'service-revision': out.revision } });
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
    `rich-json: the whole report document envelope (needs document:read as well); markdown: the loss-reported text projection (at most ${ReportLimits.maxLossIssues} loss issues). Maximum report size ${ReportLimits.maxBytes.toLocaleString('en-US')} bytes.`,
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
  async run(ctx, input) {
    const format = parseOrThrow(ReportFormatSchema, input.query.format, 'format', 'format');
    if (format === 'rich-json' && !ctx.credential!.scopeSet.has('document:read')) {
      throw new ServiceError('FORBIDDEN', 'Exporting a report as rich-json also needs the scope document:read.');
    }
    const read = await ctx.engine.jobs.report(actorOf(ctx), input.path.jobId, format);
    return notModified(ctx, input.headers.ifNoneMatch, read.revision, weakEtag(read.revision, read.format)) ?? representationResponse(ctx, read);
  },
});

/**
 * POST /api/v1/research-jobs. The jobs service checks the key, the spec and the boundary (a
 * document-bound credential must name its own document; a new-document start needs an account-wide
 * credential); without a runner a fresh start answers 410 FEATURE_RETIRED and creates nothing.
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
    202: { description: 'Accepted (or an exact replay of an accepted start): the job.', json: ResearchJobEnvelopeSchema, headers: ['Service-Revision', 'Location'] },
    400: { description: 'INVALID_REQUEST: bad body; IDEMPOTENCY_REQUIRED: missing Idempotency-Key.' },
    404: { description: 'NOT_FOUND: the target document is not visible.' },
    409: { description: 'IDEMPOTENCY_CONFLICT: the key is bound to a different request.' },
    410: { description: 'FEATURE_RETIRED: fresh hosted research is retired; use your own agent with the document tools.' },
  },
  async run(ctx, input) {
    const out = await ctx.engine.jobs.start(actorOf(ctx), { idempotencyKey: input.headers.idempotencyKey, body: input.body });
    return ok(ctx, 202, JSON.stringify(out.job), {
      receipt: out.receipt,
      headers: { 'service-revision': out.revision, location: `/api/v1/research-jobs/${out.job.jobId}` },
    });
  },
});

/** The research operations in published order. */
export const researchOperations = [listJobs, startJob, readJob, readJobEvents, cancelJob, readJobReport];
