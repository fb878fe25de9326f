/**
 * The contract of the knowledge surfaces: proposal submission (standalone blocked), review reads and
 * search (activation-blocked by default), the anonymous public-artifact read, and the operator's
 * knowledge API under /operator/v1 (review decisions, publication, releases, promotion; not published).
 * @module
 */
import { Patterns } from '../ids.ts';
import { DecisionRequestSchema, PromotionRequestSchema, PublicationRequestSchema, ReleaseRequestSchema } from '../knowledge/operator-schemas.ts';
import { ProposalRequestSchema } from '../knowledge/proposal-schema.ts';
import { SearchRequestSchema } from '../knowledge/public-schemas.ts';
import { operation } from './define.ts';
import { ArtifactKindPath, IdempotencyKeyHeader, IfNoneMatchHeader, OptionalIdempotencyKeyHeader, pathId } from './params.ts';
import { OpaqueEnvelopeSchema, ProposalSubmissionEnvelopeSchema, PublicArtifactEnvelopeSchema, ReviewEnvelopeSchema, SearchPageEnvelopeSchema } from './response-schemas.ts';

/** The artifact id of a public locator (its prefix must match the kind). */
export const ArtifactIdPattern = /^(kent|kinq|kedn)_[a-z0-9]{24}$/;

/**
 * POST /api/v1/proposals. Standalone submission is blocked: a well-formed request answers 409
 * AGENT_RUN_REQUIRED (requiredAction submit-through-research-job), a malformed one 400, and when the
 * operator blocks the surface 503. None of these charges the request budget.
 */
export const submitProposal = operation({
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
});

/**
 * GET /api/v1/public/artifacts/{kind}/{artifactId}/{revision}. Anonymous; never charged.
 * @remarks A kind other than entity, inquiry or edition is 404 (no such locator exists); an artifactId
 * that does not carry its kind's prefix and shape, or a revision that is not 64 lowercase hex, is 400
 * naming `path.artifactId` / `path.revision`. Only a promoted release answers 200; anything else
 * (unknown, unreleased, pending promotion, declined, another revision) is 404.
 */
export const getPublicArtifact = operation({
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
      kind: ArtifactKindPath,
      artifactId: {
        ...pathId(ArtifactIdPattern, 'kent_ (entity), kinq_ (inquiry) or kedn_ (edition) followed by 24 [a-z0-9], matching kind.'),
        malformed: 'invalid',
        message: 'must be kent_, kinq_ or kedn_ and 24 of [a-z0-9], matching kind',
      },
      revision: { ...pathId(Patterns.sha256, 'The exact graph revision or edition digest (64 lowercase hex).'), malformed: 'invalid', message: 'must be 64 lowercase hex characters' },
    },
    headers: { ifNoneMatch: IfNoneMatchHeader },
  },
  responses: {
    200: { description: 'The released projection.', json: PublicArtifactEnvelopeSchema, headers: ['Service-Revision', 'ETag', 'Cache-Control'] },
    304: { description: 'Not modified since the If-None-Match ETag.', headers: ['Service-Revision', 'ETag', 'Cache-Control'] },
    400: { description: 'INVALID_REQUEST: artifactId or revision malformed.' },
    404: { description: 'NOT_FOUND: no released projection at that exact kind, identity and revision.' },
  },
});

/** GET /api/v1/reviews/{reviewRef}: activation-blocked by default; the documented shape (docs/http-api.md) once activated. */
export const getReview = operation({
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
});

/** POST /api/v1/search: activation-blocked by default; public:read (scope public) or knowledge:read (scope space). */
export const search = operation({
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
});

const common = { audience: 'operator', tag: 'operator', auth: 'operator', charge: 'never' } as const;

/** GET /operator/v1/reviews/{reviewRef}: the proposal under review, operator view. */
export const operatorGetReview = operation({
  ...common,
  operationId: 'operatorGetReview',
  method: 'GET',
  path: '/operator/v1/reviews/{reviewRef}',
  summary: 'Read a proposal under review (operator)',
  description: 'The proposal, its state, conflicts, history and, once accepted, its graph revision and artifact ids.',
  input: { path: { reviewRef: pathId(Patterns.reviewRef, 'A reviewRef.') } },
  responses: { 200: { description: 'The proposal.', json: OpaqueEnvelopeSchema }, 404: { description: 'NOT_FOUND.' } },
});

/** POST /operator/v1/reviews/{reviewRef}/decisions: open-review, accept, reject or withdraw. */
export const decideReview = operation({
  ...common,
  operationId: 'decideReview',
  method: 'POST',
  path: '/operator/v1/reviews/{reviewRef}/decisions',
  summary: 'Decide a proposal (operator, for the named person)',
  description: 'Accepting writes the graph records and moves the graph revision; it never publishes. A refused transition is 409.',
  input: {
    path: { reviewRef: pathId(Patterns.reviewRef, 'A reviewRef.') },
    headers: { idempotencyKey: OptionalIdempotencyKeyHeader },
    body: { schema: DecisionRequestSchema, component: 'DecisionRequest' },
  },
  responses: {
    200: { description: 'The proposal after the decision (or, for an exact repeat under its Idempotency-Key, as it is now, receipt.idempotency replayed).', json: OpaqueEnvelopeSchema },
    400: { description: 'INVALID_REQUEST.' },
    404: { description: 'NOT_FOUND.' },
    409: { description: 'CONFLICT: the state does not allow this decision; IDEMPOTENCY_CONFLICT: the key is bound to another request.' },
  },
});

/** POST /operator/v1/spaces/{spaceRef}/publication: the owner's enablement. */
export const setSpacePublication = operation({
  ...common,
  operationId: 'setSpacePublication',
  method: 'POST',
  path: '/operator/v1/spaces/{spaceRef}/publication',
  summary: "Enable or disable publication of a space (the owner's decision)",
  description: 'Without enablement nothing of the space can be released or promoted.',
  input: { path: { spaceRef: pathId(Patterns.spaceRef, 'A spaceRef.') }, body: { schema: PublicationRequestSchema, component: 'PublicationRequest' } },
  responses: { 200: { description: 'The publication setting.', json: OpaqueEnvelopeSchema }, 400: { description: 'INVALID_REQUEST.' }, 404: { description: 'NOT_FOUND: the space has no knowledge.' } },
});

/** POST /operator/v1/releases: bind a projection at an exact revision (private until promoted). */
export const createRelease = operation({
  ...common,
  operationId: 'createRelease',
  method: 'POST',
  path: '/operator/v1/releases',
  summary: 'Release an entity, inquiry or edition (operator)',
  description: 'Needs the owner enablement; the release stays private until its promotion is approved. Releasing the same projection again answers the same release.',
  input: { body: { schema: ReleaseRequestSchema, component: 'ReleaseRequest' } },
  responses: { 201: { description: 'The release.', json: OpaqueEnvelopeSchema }, 400: { description: 'INVALID_REQUEST.' }, 404: { description: 'NOT_FOUND.' }, 409: { description: 'CONFLICT: publication not enabled, or projection too large.' } },
});

/** POST /operator/v1/releases/{kind}/{artifactId}/{revision}/promotion: the separate promotion review. */
export const promoteRelease = operation({
  ...common,
  operationId: 'promoteRelease',
  method: 'POST',
  path: '/operator/v1/releases/{kind}/{artifactId}/{revision}/promotion',
  summary: 'Approve or decline the promotion of a release (operator)',
  description: 'Approve makes the release resolve at its public locator; decline keeps it private for good.',
  input: {
    path: {
      kind: ArtifactKindPath,
      artifactId: pathId(ArtifactIdPattern, 'The artifact id.'),
      revision: pathId(Patterns.sha256, 'The revision.'),
    },
    body: { schema: PromotionRequestSchema, component: 'PromotionRequest' },
  },
  responses: { 200: { description: 'The release after the decision.', json: OpaqueEnvelopeSchema }, 400: { description: 'INVALID_REQUEST.' }, 404: { description: 'NOT_FOUND.' }, 409: { description: 'CONFLICT: already decided or publication disabled.' } },
});
