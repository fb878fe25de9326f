/**
 * Research jobs over the jobs service: list, start (410 FEATURE_RETIRED unless a runner is installed),
 * read (conditional), events (JSON page or Server-Sent Events), cancel, and report export.
 * @module
 */
import { contract } from '../../contract/operations.ts';
import type { Actor } from '../../actor.ts';
import { ServiceError, invalid, isServiceError } from '../../errors.ts';
import type { EventSink } from '../../jobs/event-hub.ts';
import type { ResearchJob, ResearchJobEvent } from '../../jobs/schemas.ts';
import { REPORT_FORMATS } from '../../jobs/report.ts';
import { TERMINAL_EVENT_KINDS } from '../../jobs/states.ts';
import { bind } from '../bind.ts';
import type { RequestContext } from '../context.ts';
import { baseHeaders, ok } from '../envelope.ts';
import { weakEtag } from '../http-util.ts';
import { notModified, representationResponse } from '../representation.ts';
import { SseStream, frameCache, type OutgoingSseEvent } from '../sse.ts';

const actorOf = (ctx: RequestContext): Actor => ctx.credential!.actor;

/**
 * A job's JSON as the API answers it: the domain names the staged report by its document; the answer
 * carries the report operation's links too (rich-json and markdown), from this server's base URL.
 */
function jobJson(ctx: RequestContext, job: ResearchJob): string {
  const report = job.artifacts.report;
  if (report === null) return JSON.stringify(job);
  const at = ctx.engine.deps.links;
  const links = { documentRef: report.documentRef, jsonHref: at.report(job.jobId, 'rich-json'), markdownHref: at.report(job.jobId, 'markdown') };
  return JSON.stringify({ ...job, artifacts: { ...job.artifacts, report: links } });
}
const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_EVENT_KINDS);
const EVENT_STREAM = /(^|,)\s*text\/event-stream\s*(;|,|$)/i;

/** Frames of job events, each encoded once however many streams carry it. */
const framesOf = frameCache((event: ResearchJobEvent): OutgoingSseEvent => ({ id: event.eventId, json: JSON.stringify(event), terminal: TERMINAL.has(event.kind) }));

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
const listJobs = bind(contract.listResearchJobs, async (ctx, input) => {
  const page = await ctx.engine.jobs.list(actorOf(ctx), { limit: input.query.limit, cursor: input.query.cursor });
  return ok(ctx, 200, JSON.stringify(page));
});

/** GET /api/v1/research-jobs/{jobId} */
const readJob = bind(contract.getResearchJob, async (ctx, input) => {
  const { job, revision } = await ctx.engine.jobs.read(actorOf(ctx), input.path.jobId);
  const etag = weakEtag(revision, 'job');
  const unchanged = notModified(ctx, input.headers.ifNoneMatch, revision, etag);
  if (unchanged) return unchanged;
  return ok(ctx, 200, jobJson(ctx, job), { headers: { 'service-revision': revision, etag } });
});

/** GET /api/v1/research-jobs/{jobId}/events (JSON page or text/event-stream). */
const readJobEvents = bind(contract.listResearchJobEvents, async (ctx, input) => {
  const actor = actorOf(ctx);
  const id = input.path.jobId;
  // An EventSource reconnects to the same URL with Last-Event-ID: the header is the newer position.
  const resume = input.headers.lastEventId;
  // Both cursors were checked for form by the edge; one past the job's events is refused by the service.
  // When both are sent the header wins, but a query cursor past the end is still a bad request.
  if (resume !== undefined && input.query.after !== undefined) await ctx.engine.jobs.events(actor, id, { after: input.query.after, limit: 1 });
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
});

/** POST /api/v1/research-jobs/{jobId}/cancellations with the fixed body `{"v":1}`. */
const cancelJob = bind(contract.cancelResearchJob, async (ctx, input) => {
  const out = await ctx.engine.jobs.cancel(actorOf(ctx), input.path.jobId, {
    idempotencyKey: input.headers.idempotencyKey,
    ifRevision: input.headers.ifRevision,
    body: input.body,
  });
  return ok(ctx, 200, jobJson(ctx, out.job), { receipt: out.receipt, headers: { 'service-revision': out.revision } });
});

/** GET /api/v1/research-jobs/{jobId}/report?format=rich-json|markdown (rich-json also needs document:read). */
const readJobReport = bind(contract.getResearchJobReport, async (ctx, input) => {
  const format = input.query.format;
  if (format === undefined) throw invalid(`format is required: ${REPORT_FORMATS.join(' or ')}.`, [{ field: 'format', message: 'is required' }]);
  if (format === 'rich-json' && !ctx.credential!.scopeSet.has('document:read')) {
    throw new ServiceError('FORBIDDEN', 'Exporting a report as rich-json also needs the scope document:read.');
  }
  const read = await ctx.engine.jobs.report(actorOf(ctx), input.path.jobId, format);
  return notModified(ctx, input.headers.ifNoneMatch, read.revision, weakEtag(read.revision, read.format)) ?? representationResponse(ctx, read);
});

/**
 * POST /api/v1/research-jobs. The jobs service checks the key, the spec and the boundary (a
 * document-bound credential must name its own document; a new-document start needs an account-wide
 * credential); without a runner a fresh start answers 410 FEATURE_RETIRED and creates nothing.
 */
const startJob = bind(contract.startResearchJob, async (ctx, input) => {
  const out = await ctx.engine.jobs.start(actorOf(ctx), { idempotencyKey: input.headers.idempotencyKey, body: input.body });
  return ok(ctx, 202, jobJson(ctx, out.job), {
    receipt: out.receipt,
    headers: { 'service-revision': out.revision, location: `/api/v1/research-jobs/${out.job.jobId}` },
  });
});

/** The bindings of the research operations in published order. */
export const researchBindings = [listJobs, startJob, readJob, readJobEvents, cancelJob, readJobReport];
