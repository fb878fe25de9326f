/**
 * The contract of research jobs: list, start (410 FEATURE_RETIRED unless a runner is installed), read
 * (conditional), events (JSON page or Server-Sent Events), cancel, and report export.
 * @module
 */
import * as v from 'valibot';
import { Patterns } from '../ids.ts';
import { CancellationRequestSchema, REPORT_FORMATS, ResearchReportSpecSchema } from '../jobs/schemas.ts';
import { DEFAULT_PACING, EVENT_PAGE_MAX, ReportLimits, SSE_DEFAULTS } from '../limits.ts';
import { operation } from './define.ts';
import { LINKED_PATHS } from './links.ts';
import { AcceptEventsHeader, AfterQuery, IdempotencyKeyHeader, IfNoneMatchHeader, IfRevisionHeader, LastEventIdHeader, pageQuery, pathId } from './params.ts';
import { ReportEnvelopeSchema, ResearchJobEnvelopeSchema, ResearchJobEventPageEnvelopeSchema, ResearchJobPageEnvelopeSchema } from './response-schemas.ts';

const READ_SCOPES = ['research:read', 'research:run'] as const;
const jobId = pathId(Patterns.jobId, 'A research job id: kjob_ and 48 lowercase hex characters.');
/** The `format` of a report export. */
export const ReportFormatSchema = v.picklist(REPORT_FORMATS, `must be ${REPORT_FORMATS.join(' or ')}`);
const notFoundJob = { description: 'NOT_FOUND: unknown job, or one another credential created (indistinguishable).' };

/** GET /api/v1/research-jobs */
export const listResearchJobs = operation({
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
});

/** GET /api/v1/research-jobs/{jobId} */
export const getResearchJob = operation({
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
});

/** GET /api/v1/research-jobs/{jobId}/events (JSON page or text/event-stream). */
export const listResearchJobEvents = operation({
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
});

/** POST /api/v1/research-jobs/{jobId}/cancellations with the fixed body `{"v":1}`. */
export const cancelResearchJob = operation({
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
});

/** GET /api/v1/research-jobs/{jobId}/report?format=rich-json|markdown (rich-json also needs document:read). */
export const getResearchJobReport = operation({
  operationId: 'getResearchJobReport',
  method: 'GET',
  path: LINKED_PATHS.report,
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
        'REPORT_NOT_READY (retryable): the report is not staged yet; wait for Retry-After and poll the job until artifacts.report exists. CONFLICT (not retryable): the job ended failed or cancelled without a report, so none will ever be staged; or an inconsistent report binding.',
      headers: ['Retry-After'],
    },
  },
});

/**
 * POST /api/v1/research-jobs. The jobs service checks the key, the spec and the boundary (a
 * document-bound credential must name its own document; a new-document start needs an account-wide
 * credential); without a runner a fresh start answers 410 FEATURE_RETIRED and creates nothing.
 */
export const startResearchJob = operation({
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
});
