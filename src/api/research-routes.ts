/**
 * Research jobs. Fresh hosted starts are retired (410 FEATURE_RETIRED after auth, scope and
 * validation, since no research runner is installed). No job can exist on this server yet (starts are
 * retired and the jobs domain with its fixtures has not landed), so the reads answer what is true:
 * the list is an empty page, and every job reference is 404 NOT_FOUND once the request itself is
 * well-formed (query, headers and the fixed cancellation body are validated first).
 * @module
 */
import { utf8Length, queryParam } from './http-util.ts';
import { ServiceError, invalid, notFound } from '../errors.ts';
import { requireIdempotencyKey } from '../idempotency/idempotency.ts';
import { parseOrThrow } from '../validation.ts';
import type { Operation, RequestContext } from './context.ts';
import { ok } from './envelope.ts';
import { ResearchReportSpecSchema } from './response-schemas.ts';
import { parseLimit } from '../documents/cursor.ts';

/** Maximum canonical UTF-8 size of an acceptance contract. */
export const ACCEPTANCE_MAX_BYTES = 32_768;

const READ_SCOPES = ['research:read', 'research:run'] as const;

const noSuchJob = () => notFound('The research job');

/** An event cursor: a decimal sequence (after, Last-Event-ID). */
const EVENT_CURSOR = /^(0|[1-9]\d{0,15})$/;

function checkEventCursor(value: string | undefined, field: string): void {
  if (value !== undefined && !EVENT_CURSOR.test(value)) {
    throw invalid('An event cursor is the decimal eventId of an earlier event.', [{ field, message: 'must be a decimal event sequence' }]);
  }
}

/** GET /api/v1/research-jobs: jobs are visible only to the credential that created them; none can exist yet. */
export const listJobs: Operation = {
  auth: 'bearer',
  anyScopes: READ_SCOPES,
  charge: 'before',
  run(ctx) {
    parseLimit(queryParam(ctx.query, 'limit'));
    if (queryParam(ctx.query, 'cursor') !== undefined) {
      // No page of this list has ever carried a nextCursor, so no cursor can belong to it.
      throw invalid('The cursor is not a cursor of this list for this credential; send back nextCursor unchanged.', [
        { field: 'query.cursor', message: 'is not a valid cursor of this list for this credential' },
      ]);
    }
    return ok(ctx, 200, '{"items":[],"nextCursor":null}');
  },
};

/** GET /api/v1/research-jobs/{jobId} */
export const readJob: Operation = {
  auth: 'bearer',
  anyScopes: READ_SCOPES,
  charge: 'before',
  run() {
    throw noSuchJob();
  },
};

/** GET /api/v1/research-jobs/{jobId}/events (JSON page or text/event-stream). */
export const readJobEvents: Operation = {
  auth: 'bearer',
  anyScopes: READ_SCOPES,
  charge: 'before',
  run(ctx: RequestContext) {
    checkEventCursor(queryParam(ctx.query, 'after'), 'query.after');
    checkEventCursor(ctx.request.headers['last-event-id'], 'headers.Last_Event_ID');
    throw noSuchJob();
  },
};

/** POST /api/v1/research-jobs/{jobId}/cancellations with the fixed body `{"v":1}`. */
export const cancelJob: Operation = {
  auth: 'bearer',
  allScopes: ['research:run'],
  charge: 'before',
  body: 'json',
  run(ctx) {
    requireIdempotencyKey(ctx.request.headers['idempotency-key']);
    if (!ctx.request.headers['service-if-revision']) {
      throw new ServiceError('PRECONDITION_REQUIRED', 'A cancellation needs a Service-If-Revision header: read the job and send back its Service-Revision.', {
        requiredAction: 'refresh-resource',
      });
    }
    const body = ctx.body as Record<string, unknown> | null;
    if (typeof body !== 'object' || body === null || Array.isArray(body) || Object.keys(body).length !== 1 || body.v !== 1) {
      throw invalid('The cancellation body is exactly {"v":1}.', [{ field: '$', message: 'must be exactly {"v":1}' }]);
    }
    throw noSuchJob();
  },
};

/** GET /api/v1/research-jobs/{jobId}/report?format=rich-json|markdown (rich-json also needs document:read). */
export const readJobReport: Operation = {
  auth: 'bearer',
  anyScopes: READ_SCOPES,
  charge: 'before',
  run(ctx) {
    const format = queryParam(ctx.query, 'format');
    if (format !== 'rich-json' && format !== 'markdown') {
      throw invalid('format is required: rich-json or markdown.', [{ field: 'query.format', message: 'must be rich-json or markdown' }]);
    }
    if (format === 'rich-json' && !ctx.credential!.scopeSet.has('document:read')) {
      throw new ServiceError('FORBIDDEN', 'Exporting a report as rich-json also needs the scope document:read.');
    }
    throw noSuchJob();
  },
};

/**
 * POST /api/v1/research-jobs. Checks the key, the spec and the boundary (a document-bound credential
 * must name its own document; a new-document start needs an account-wide credential), then answers
 * 410 FEATURE_RETIRED.
 */
export const startJob: Operation = {
  auth: 'bearer',
  allScopes: ['inquiry:create', 'knowledge:propose', 'research:run'],
  charge: 'before',
  body: 'json',
  async run(ctx) {
    requireIdempotencyKey(ctx.request.headers['idempotency-key']);
    const spec = parseOrThrow(ResearchReportSpecSchema, ctx.body, 'research report spec');
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
};
