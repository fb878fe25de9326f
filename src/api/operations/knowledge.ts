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
import { defineOperation } from '../registry/operation.ts';
import { IdempotencyKeyHeader, IfNoneMatchHeader, pathId } from '../registry/params.ts';
import {
  OpaqueEnvelopeSchema,
  ProposalSubmissionEnvelopeSchema,
  PublicArtifactEnvelopeSchema,
  SearchRequestSchema,
} from '../response-schemas.ts';
import { notBuilt } from '../unavailable.ts';
import * as v from 'valibot';

/**
 * POST /api/v1/proposals. Standalone submission is blocked: a well-formed request answers 409
 * AGENT_RUN_REQUIRED (requiredAction submit-through-research-job), a malformed one 400, and when the
 * operator blocks the surface 503. None of these charges the request budget (decisions.md).
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
  run(ctx, input) {
    requireIdempotencyKey(input.headers.idempotencyKey);
    const proposal = parseProposalRequest(input.body);
    const bound = ctx.credential!.spaceRef;
    // Exact-space boundary: a document-bound credential only reaches its own space (404, never 403).
    if (proposal.spaceRef !== undefined && bound !== null && proposal.spaceRef !== bound) throw notFound('The space');
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

/**
 * GET /api/v1/public/artifacts/{kind}/{artifactId}/{revision}. Anonymous; never charged.
 * @remarks A kind other than entity, inquiry or edition is 404 (no such locator exists); an artifactId
 * that does not carry its kind's prefix and shape, or a revision that is not 64 lowercase hex, is 400
 * naming `path.artifactId` / `path.revision`. A well-formed locator answers 404: nothing has been
 * released on this server yet.
 */
export const readPublicArtifact = defineOperation({
  operationId: 'getPublicArtifact',
  method: 'GET',
  path: '/api/v1/public/artifacts/{kind}/{artifactId}/{revision}',
  audience: 'public',
  tag: 'public',
  summary: 'Read a released public projection (anonymous)',
  description: 'The only anonymous operation. A public locator is not an access grant.',
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
    304: { description: 'Not modified since the If-None-Match ETag.', headers: ['Service-Revision', 'ETag'] },
    400: { description: 'INVALID_REQUEST: artifactId or revision malformed.' },
    404: { description: 'NOT_FOUND: no released projection at that exact kind, identity and revision.' },
  },
  run(_ctx, input) {
    const { kind, artifactId, revision } = input.path;
    const pattern = Object.hasOwn(ARTIFACT_ID, kind) ? ARTIFACT_ID[kind] : undefined;
    if (!pattern) throw notFound('The public artifact');
    const errors: FieldError[] = [];
    if (!pattern.test(artifactId)) errors.push({ field: 'artifactId', message: `must be a ${kind} artifactId (${pattern.source.slice(1, 6)} and 24 of [a-z0-9])` });
    if (!Patterns.sha256.test(revision)) errors.push({ field: 'revision', message: 'must be 64 lowercase hex characters' });
    if (errors.length) throw invalid('The public artifact locator is malformed.', errors);
    throw new ServiceError('NOT_FOUND', `No released ${kind} projection exists at this exact identity and revision.`);
  },
});

/** GET /api/v1/reviews/{reviewRef}: activation-blocked by default. */
export const readReview = defineOperation({
  operationId: 'getReview',
  method: 'GET',
  path: '/api/v1/reviews/{reviewRef}',
  audience: 'public',
  tag: 'reviews',
  summary: 'Read review metadata (activation-blocked)',
  description: 'Activation-blocked by default: 503 to every authenticated request, no budget charged.',
  auth: 'bearer',
  allScopes: ['review:read'],
  activation: 'reviews',
  charge: 'never',
  input: { path: { reviewRef: pathId(Patterns.reviewRef, 'A reviewRef: krvw_ and 48 lowercase hex characters.') } },
  responses: {
    200: { description: 'Review metadata.', json: OpaqueEnvelopeSchema },
    404: { description: 'NOT_FOUND: unknown review or outside the boundary.' },
  },
  run() {
    throw notBuilt('Reading reviews');
  },
});

/** POST /api/v1/search: activation-blocked by default; public:read or knowledge:read. */
export const search = defineOperation({
  operationId: 'search',
  method: 'POST',
  path: '/api/v1/search',
  audience: 'public',
  tag: 'search',
  summary: 'Search (activation-blocked)',
  description:
    'public:read when scope.kind is public; knowledge:read (exact-space) when scope.kind is space. Activation-blocked by default: 503, no budget charged.',
  auth: 'bearer',
  anyScopes: ['public:read', 'knowledge:read'],
  activation: 'search',
  charge: 'never',
  input: { body: { schema: SearchRequestSchema, component: 'SearchRequest' } },
  responses: {
    200: { description: 'Search results.', json: OpaqueEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: bad body.' },
  },
  run() {
    throw notBuilt('Search');
  },
});

/** The knowledge operations in published order. */
export const knowledgeOperations = [submitProposal, readPublicArtifact, readReview, search];
