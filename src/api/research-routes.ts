/**
 * Research jobs. Fresh hosted starts are retired (410 FEATURE_RETIRED after auth, scope and
 * validation, since no research runner is installed); the reads, events, cancellations and report
 * exports answer 503 until the jobs domain lands.
 * @module
 */
import { utf8Length } from './http-util.ts';
import { ServiceError, invalid } from '../errors.ts';
import { requireIdempotencyKey } from '../idempotency/idempotency.ts';
import { parseOrThrow } from '../validation.ts';
import type { Operation } from './context.ts';
import { ResearchReportSpecSchema } from './response-schemas.ts';
import { notBuilt } from './unavailable.ts';

/** Maximum canonical UTF-8 size of an acceptance contract. */
export const ACCEPTANCE_MAX_BYTES = 32_768;

const READ_SCOPES = ['research:read', 'research:run'] as const;

function placeholder(capability: string, anyScopes: Operation['anyScopes'], allScopes?: Operation['allScopes']): Operation {
  const op: Operation = {
    auth: 'bearer',
    charge: 'never',
    run() {
      throw notBuilt(capability);
    },
  };
  if (anyScopes) op.anyScopes = anyScopes;
  if (allScopes) op.allScopes = allScopes;
  return op;
}

/** GET /api/v1/research-jobs */
export const listJobs = placeholder('Listing research jobs', READ_SCOPES);
/** GET /api/v1/research-jobs/{jobId} */
export const readJob = placeholder('Reading research jobs', READ_SCOPES);
/** GET /api/v1/research-jobs/{jobId}/events */
export const readJobEvents = placeholder('Research-job events', READ_SCOPES);
/** POST /api/v1/research-jobs/{jobId}/cancellations */
export const cancelJob = placeholder('Cancelling research jobs', undefined, ['research:run']);
/** GET /api/v1/research-jobs/{jobId}/report */
export const readJobReport = placeholder('Research report export', READ_SCOPES);

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
