/**
 * The operator's knowledge API under /operator/v1: review decisions, the space owner's publication
 * enablement, releases and the promotion review. Operator key only, never charged, not published in
 * /openapi.json. The same calls exist in-process as `engine.operator`.
 * @module
 */
import * as v from 'valibot';
import { isoTimestamp } from '../../clock.ts';
import { notFound } from '../../errors.ts';
import { Patterns } from '../../ids.ts';
import type { ProposalRecord, ReleaseRecord } from '../../knowledge/records.ts';
import { locatorPath } from '../../knowledge/service.ts';
import { PROPOSAL_DECISIONS } from '../../knowledge/states.ts';
import { parseOrThrow } from '../../validation.ts';
import { ok } from '../envelope.ts';
import { defineOperation } from '../registry/operation.ts';
import { OptionalIdempotencyKeyHeader, pathId } from '../registry/params.ts';
import { OpaqueEnvelopeSchema } from '../response-schemas.ts';

const Person = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(80, 'must be at most 80 characters'));
const Revision = v.pipe(v.string(), v.regex(Patterns.sha256, 'must be 64 lowercase hex'));

export const DecisionRequestSchema = v.strictObject({
  decision: v.picklist(PROPOSAL_DECISIONS, `must be one of ${PROPOSAL_DECISIONS.join(', ')}`),
  person: Person,
  note: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1024, 'must be at most 1024 characters')))),
});

export const PublicationRequestSchema = v.strictObject({ enabled: v.boolean(), person: Person });

export const ReleaseRequestSchema = v.variant('kind', [
  v.strictObject({ kind: v.picklist(['entity', 'inquiry']), spaceRef: v.pipe(v.string(), v.regex(Patterns.spaceRef)), artifactId: v.string(), graphRevision: v.optional(Revision), person: Person }),
  v.strictObject({
    kind: v.literal('edition'),
    spaceRef: v.pipe(v.string(), v.regex(Patterns.spaceRef)),
    graphRevision: v.optional(Revision),
    title: v.pipe(v.string(), v.minLength(1), v.maxLength(240)),
    markdown: v.pipe(v.string(), v.minLength(1)),
    person: Person,
  }),
]);

export const PromotionRequestSchema = v.strictObject({ decision: v.picklist(['approve', 'decline'], 'must be approve or decline'), person: Person });

function proposalView(p: ProposalRecord) {
  return {
    proposalRef: p.proposalRef,
    reviewRef: p.reviewRef,
    spaceRef: p.spaceRef,
    jobId: p.jobId,
    state: p.state,
    conflicts: p.conflicts,
    graphRevision: p.accepted?.graphRevision ?? null,
    entityIds: p.accepted?.entityIds ?? {},
    inquiryIds: p.accepted?.inquiryIds ?? {},
    history: p.history.map((h) => ({ ...h, at: isoTimestamp(h.at) })),
  };
}

function releaseView(r: ReleaseRecord) {
  const ref = { kind: r.kind, artifactId: r.artifactId, revision: r.revision, v: 1 };
  return { ref, state: r.state, graphRevision: r.graphRevision, byteLength: r.byteLength, title: r.title, locator: locatorPath(ref), releasedAt: isoTimestamp(r.releasedAt) };
}

const common = { audience: 'operator', tag: 'operator', auth: 'operator', charge: 'never' } as const;

/** GET /operator/v1/reviews/{reviewRef}: the proposal under review, operator view. */
export const operatorReadReview = defineOperation({
  ...common,
  operationId: 'operatorGetReview',
  method: 'GET',
  path: '/operator/v1/reviews/{reviewRef}',
  summary: 'Read a proposal under review (operator)',
  description: 'The proposal, its state, conflicts, history and, once accepted, its graph revision and artifact ids.',
  input: { path: { reviewRef: pathId(Patterns.reviewRef, 'A reviewRef.') } },
  responses: { 200: { description: 'The proposal.', json: OpaqueEnvelopeSchema }, 404: { description: 'NOT_FOUND.' } },
  async run(ctx, input) {
    return ok(ctx, 200, JSON.stringify(proposalView(await ctx.engine.operator.proposalOfReview(input.path.reviewRef))));
  },
});

/** POST /operator/v1/reviews/{reviewRef}/decisions: open-review, accept, reject or withdraw. */
export const decideReview = defineOperation({
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
  async run(ctx, input) {
    const body = parseOrThrow(DecisionRequestSchema, input.body, 'decision');
    const decision = { decision: body.decision, person: body.person, note: body.note ?? null };
    const key = input.headers.idempotencyKey;
    if (key === undefined) return ok(ctx, 200, JSON.stringify(proposalView(await ctx.engine.operator.decide(input.path.reviewRef, decision))));
    const out = await ctx.engine.operator.decideOnce(input.path.reviewRef, decision, key);
    return ok(ctx, 200, JSON.stringify(proposalView(out.proposal)), { receipt: out.receipt });
  },
});

/** POST /operator/v1/spaces/{spaceRef}/publication: the owner's enablement. */
export const setPublication = defineOperation({
  ...common,
  operationId: 'setSpacePublication',
  method: 'POST',
  path: '/operator/v1/spaces/{spaceRef}/publication',
  summary: "Enable or disable publication of a space (the owner's decision)",
  description: 'Without enablement nothing of the space can be released or promoted.',
  input: { path: { spaceRef: pathId(Patterns.spaceRef, 'A spaceRef.') }, body: { schema: PublicationRequestSchema, component: 'PublicationRequest' } },
  responses: { 200: { description: 'The publication setting.', json: OpaqueEnvelopeSchema }, 400: { description: 'INVALID_REQUEST.' }, 404: { description: 'NOT_FOUND: the space has no knowledge.' } },
  async run(ctx, input) {
    const body = parseOrThrow(PublicationRequestSchema, input.body, 'publication request');
    const space = await ctx.engine.operator.setPublication(input.path.spaceRef, body);
    return ok(ctx, 200, JSON.stringify({ spaceRef: space.spaceRef, graphRevision: space.graphRevision, enabled: space.publication?.enabled ?? false }));
  },
});

/** POST /operator/v1/releases: bind a projection at an exact revision (private until promoted). */
export const createRelease = defineOperation({
  ...common,
  operationId: 'createRelease',
  method: 'POST',
  path: '/operator/v1/releases',
  summary: 'Release an entity, inquiry or edition (operator)',
  description: 'Needs the owner enablement; the release stays private until its promotion is approved. Releasing the same projection again answers the same release.',
  input: { body: { schema: ReleaseRequestSchema, component: 'ReleaseRequest' } },
  responses: { 201: { description: 'The release.', json: OpaqueEnvelopeSchema }, 400: { description: 'INVALID_REQUEST.' }, 404: { description: 'NOT_FOUND.' }, 409: { description: 'CONFLICT: publication not enabled, or projection too large.' } },
  async run(ctx, input) {
    const body = parseOrThrow(ReleaseRequestSchema, input.body, 'release request');
    return ok(ctx, 201, JSON.stringify(releaseView(await ctx.engine.operator.release(body))));
  },
});

/** POST /operator/v1/releases/{kind}/{artifactId}/{revision}/promotion: the separate promotion review. */
export const promoteRelease = defineOperation({
  ...common,
  operationId: 'promoteRelease',
  method: 'POST',
  path: '/operator/v1/releases/{kind}/{artifactId}/{revision}/promotion',
  summary: 'Approve or decline the promotion of a release (operator)',
  description: 'Approve makes the release resolve at its public locator; decline keeps it private for good.',
  input: {
    path: {
      kind: { schema: v.picklist(['entity', 'inquiry', 'edition']), description: 'entity, inquiry or edition.', required: true },
      artifactId: pathId(/^(kent|kinq|kedn)_[a-z0-9]{24}$/, 'The artifact id.'),
      revision: pathId(Patterns.sha256, 'The revision.'),
    },
    body: { schema: PromotionRequestSchema, component: 'PromotionRequest' },
  },
  responses: { 200: { description: 'The release after the decision.', json: OpaqueEnvelopeSchema }, 400: { description: 'INVALID_REQUEST.' }, 404: { description: 'NOT_FOUND.' }, 409: { description: 'CONFLICT: already decided or publication disabled.' } },
  async run(ctx, input) {
    const body = parseOrThrow(PromotionRequestSchema, input.body, 'promotion request');
    const { kind, artifactId, revision } = input.path;
    if (kind !== 'entity' && kind !== 'inquiry' && kind !== 'edition') throw notFound('The release');
    return ok(ctx, 200, JSON.stringify(releaseView(await ctx.engine.operator.promote({ kind, artifactId, revision }, body))));
  },
});

/** The operator's knowledge operations. */
export const knowledgeOperatorOperations = [operatorReadReview, decideReview, setPublication, createRelease, promoteRelease];
