/**
 * The knowledge surfaces: proposal submission (standalone blocked), review reads and search
 * (activation-blocked by default), and the anonymous public-artifact read.
 * @module
 */
import { ServiceError, invalid, notFound, type FieldError } from '../../errors.ts';
import { requireIdempotencyKey } from '../../idempotency/idempotency.ts';
import { Patterns } from '../../ids.ts';
import { parseProposalRequest } from '../../knowledge/proposal-request.ts';
import { ProposalRequestSchema } from '../../knowledge/proposal-schema.ts';
import { SearchRequestSchema } from '../../knowledge/public-schemas.ts';
import { baseHeaders, ok } from '../envelope.ts';
import { etagMatches, weakEtag } from '../http-util.ts';
import { defineOperation } from '../registry/operation.ts';
import { IdempotencyKeyHeader, IfNoneMatchHeader, pathId } from '../registry/params.ts';
import { ProposalSubmissionEnvelopeSchema, PublicArtifactEnvelopeSchema, ReviewEnvelopeSchema, SearchPageEnvelopeSchema } from '../response-schemas.ts';
import { knowledgeOperatorOperations } from './knowledge-operator.ts';
import * as v from 'valibot';

/**
 * POST /api/v1/proposals. Standalone submission is blocked: a well-formed request answers 409
 * AGENT_RUN_REQUIRED (requiredAction submit-through-research-job), a malformed one 400, and when the
 * operator blocks the surface 503. None of these charges the request budget.
 */
export const submitProposal = defineOperation({
  operationId: 'submitProposal',
  method: 'POST',
  path: '/api/v1/proposals',
  audience: 'public',
  tag: 'proposals',
  summary: 'Submit a knowledge proposal (blocked standalone)',
  description:
    'A well-formed standalone request answers 409 AGENT_RUN_REQUIRED (requiredAction submit-through-research-job) without charging the budget; when the operator blocks the surface every authenticated request answers 503. A successful submission (through a research-job agent run) answers 201 with the ProposalSubmissionResult.',
  auth: 'bearer',
  allScopes: ['knowledge:propose'],
  activation: 'proposals',
  charge: 'never',
  input: {
    headers: { idempotencyKey: IdempotencyKeyHeader },
    body: { schema: ProposalRequestSchema, component: 'ProposalRequest' },
  },
  responses: {
    201: { description: 'Submitted.', json: ProposalSubmissionEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: malformed proposal; IDEMPOTENCY_REQUIRED: missing Idempotency-Key.' },
    404: { description: 'NOT_FOUND: the given spaceRef is not visible.' },
    409: { description: 'AGENT_RUN_REQUIRED: standalone submission needs a live research-job agent run; IDEMPOTENCY_CONFLICT.' },
  },
  async run(ctx, input) {
    requireIdempotencyKey(input.headers.idempotencyKey);
    const proposal = parseProposalRequest(input.body);
    // Exact-space boundary: a spaceRef outside the credential's spaces is 404, never 403.
    if (proposal.spaceRef !== undefined && !(await ctx.engine.knowledge.spaceVisible(ctx.credential!.actor, proposal.spaceRef))) throw notFound('The space');
    throw new ServiceError(
      'AGENT_RUN_REQUIRED',
      'Standalone proposal submission is blocked: a knowledge proposal must come from a live research-job agent run (hosted job creation is retired). No request budget was charged.',
      { requiredAction: 'submit-through-research-job', retryable: false },
    );
  },
});

const ARTIFACT_ID: Readonly<Record<string, RegExp>> = {
  entity: Patterns.entityId,
  inquiry: Patterns.inquiryId,
  edition: Patterns.editionId,
};

/** Caching of released content: it never changes at an exact revision. */
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';

/**
 * Check a public locator's parts.
 * @returns false for a kind that names no locator (404); throws INVALID_REQUEST for a malformed id or revision.
 */
export function checkLocator(kind: string, artifactId: string, revision: string): boolean {
  const pattern = Object.hasOwn(ARTIFACT_ID, kind) ? ARTIFACT_ID[kind] : undefined;
  if (!pattern) return false;
  const errors: FieldError[] = [];
  if (!pattern.test(artifactId)) errors.push({ field: 'artifactId', message: `must be a ${kind} artifactId (${pattern.source.slice(1, 6)} and 24 of [a-z0-9])` });
  if (!Patterns.sha256.test(revision)) errors.push({ field: 'revision', message: 'must be 64 lowercase hex characters' });
  if (errors.length) throw invalid('The public artifact locator is malformed.', errors);
  return true;
}

/**
 * GET /api/v1/public/artifacts/{kind}/{artifactId}/{revision}. Anonymous; never charged.
 * @remarks A kind other than entity, inquiry or edition is 404 (no such locator exists); an artifactId
 * that does not carry its kind's prefix and shape, or a revision that is not 64 lowercase hex, is 400
 * naming `path.artifactId` / `path.revision`. Only a promoted release answers 200; anything else
 * (unknown, unreleased, pending promotion, declined, another revision) is 404.
 */
export const readPublicArtifact = defineOperation({
  operationId: 'getPublicArtifact',
  method: 'GET',
  path: '/api/v1/public/artifacts/{kind}/{artifactId}/{revision}',
  audience: 'public',
  tag: 'public',
  summary: 'Read a released public projection (anonymous)',
  description:
    'The only anonymous operation. A public locator is not an access grant. The projection value is the canonical JSON (sorted keys) whose UTF-8 length is projection.byteLength. Immutable: cached for a year, weak ETag, 304 on If-None-Match.',
  auth: 'none',
  charge: 'never',
  input: {
    path: {
      kind: { schema: v.picklist(['entity', 'inquiry', 'edition']), description: 'entity, inquiry or edition.', required: true },
      artifactId: pathId(/^(kent|kinq|kedn)_[a-z0-9]{24}$/, 'kent_ (entity), kinq_ (inquiry) or kedn_ (edition) followed by 24 [a-z0-9], matching kind.'),
      revision: pathId(Patterns.sha256, 'The exact graph revision or edition digest (64 lowercase hex).'),
    },
    headers: { ifNoneMatch: IfNoneMatchHeader },
  },
  responses: {
    200: { description: 'The released projection.', json: PublicArtifactEnvelopeSchema, headers: ['Service-Revision', 'ETag', 'Cache-Control'] },
    304: { description: 'Not modified since the If-None-Match ETag.', headers: ['Service-Revision', 'ETag', 'Cache-Control'] },
    400: { description: 'INVALID_REQUEST: artifactId or revision malformed.' },
    404: { description: 'NOT_FOUND: no released projection at that exact kind, identity and revision.' },
  },
  async run(ctx, input) {
    const { kind, artifactId, revision } = input.path;
    const notReleased = () => new ServiceError('NOT_FOUND', `No released ${kind} projection exists at this exact identity and revision.`);
    if (!checkLocator(kind, artifactId, revision)) throw notFound('The public artifact');
    const read = await ctx.engine.knowledge.readPublicArtifact(kind, artifactId, revision);
    if (!read) throw notReleased();
    const etag = weakEtag(revision, kind);
    const headers = { 'service-revision': revision, etag, 'cache-control': IMMUTABLE_CACHE };
    if (input.headers.ifNoneMatch !== undefined && etagMatches(input.headers.ifNoneMatch, etag)) {
      return { status: 304, headers: { ...baseHeaders(ctx, null), ...headers } };
    }
    return ok(ctx, 200, read.dataJson, { headers });
  },
});

/** GET /api/v1/reviews/{reviewRef}: activation-blocked by default; the documented shape (docs/http-api.md) once activated. */
export const readReview = defineOperation({
  operationId: 'getReview',
  method: 'GET',
  path: '/api/v1/reviews/{reviewRef}',
  audience: 'public',
  tag: 'reviews',
  summary: 'Read review metadata (activation-blocked by default)',
  description:
    'Activation-blocked by default: 503 to every authenticated request, no budget charged. Once activated: the review of a proposal inside the credential\'s spaces; anything else 404.',
  auth: 'bearer',
  allScopes: ['review:read'],
  activation: 'reviews',
  charge: 'before',
  input: { path: { reviewRef: pathId(Patterns.reviewRef, 'A reviewRef: krvw_ and 48 lowercase hex characters.') } },
  responses: {
    200: { description: 'Review metadata.', json: ReviewEnvelopeSchema },
    404: { description: 'NOT_FOUND: unknown review or outside the boundary.' },
  },
  async run(ctx, input) {
    const review = await ctx.engine.knowledge.readReview(ctx.credential!.actor, input.path.reviewRef);
    return ok(ctx, 200, JSON.stringify(review), { headers: { 'cache-control': 'no-store' } });
  },
});

/** POST /api/v1/search: activation-blocked by default; public:read (scope public) or knowledge:read (scope space). */
export const search = defineOperation({
  operationId: 'search',
  method: 'POST',
  path: '/api/v1/search',
  audience: 'public',
  tag: 'search',
  summary: 'Search released artifacts or a space graph (activation-blocked by default)',
  description:
    'public:read when scope.kind is public (released artifacts only); knowledge:read and the exact space when scope.kind is space (a space outside the credential is 404). Ranked best first, paged with opaque cursors. Activation-blocked by default: 503, no budget charged.',
  auth: 'bearer',
  anyScopes: ['public:read', 'knowledge:read'],
  activation: 'search',
  charge: 'self',
  input: { body: { schema: SearchRequestSchema, component: 'SearchRequest' } },
  responses: {
    200: { description: 'Search results, best match first.', json: SearchPageEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: bad body or a cursor of another search or credential.' },
    404: { description: 'NOT_FOUND: the space is not visible to this credential.' },
  },
  async run(ctx, input) {
    const credential = ctx.credential!;
    const body = input.body as { scope?: { kind?: unknown } } | null;
    const kind = typeof body === 'object' && body !== null ? body.scope?.kind : undefined;
    const needed = kind === 'space' ? 'knowledge:read' : kind === 'public' ? 'public:read' : null;
    // the scope depends on the body: checked before charging, like every other scope check
    if (needed !== null && !credential.scopeSet.has(needed)) throw new ServiceError('FORBIDDEN', `This credential lacks the scope ${needed}; use a token created with it.`);
    await ctx.charge();
    const page = await ctx.engine.knowledge.search(credential.actor, credential.scopeSet, input.body);
    return ok(ctx, 200, JSON.stringify(page), { headers: { 'cache-control': 'no-store' } });
  },
});

/** The knowledge operations in published order (operator ones last; they are not published). */
export const knowledgeOperations = [submitProposal, readPublicArtifact, readReview, search, ...knowledgeOperatorOperations];
