/**
 * The operator's knowledge API under /operator/v1: review decisions, the space owner's publication
 * enablement, releases and the promotion review. Operator key only, never charged, not published in
 * /openapi.json. The same calls exist in-process as `engine.operator`.
 * @module
 */
import { isoTimestamp } from '../../clock.ts';
import { contract } from '../../contract/operations.ts';
import { notFound } from '../../errors.ts';
import { DecisionRequestSchema, PromotionRequestSchema, PublicationRequestSchema, ReleaseRequestSchema } from '../../knowledge/operator-schemas.ts';
import type { ProposalRecord, ReleaseRecord } from '../../knowledge/records.ts';
import { locatorPath } from '../../contract/links.ts';
import { parseOrThrow } from '../../validation.ts';
import { bind } from '../bind.ts';
import { ok } from '../envelope.ts';

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

/** GET /operator/v1/reviews/{reviewRef}: the proposal under review, operator view. */
const operatorReadReview = bind(contract.operatorGetReview, async (ctx, input) => {
  return ok(ctx, 200, JSON.stringify(proposalView(await ctx.engine.operator.proposalOfReview(input.path.reviewRef))));
});

/** POST /operator/v1/reviews/{reviewRef}/decisions: open-review, accept, reject or withdraw. */
const decideReview = bind(contract.decideReview, async (ctx, input) => {
  const body = parseOrThrow(DecisionRequestSchema, input.body, 'decision');
  const decision = { decision: body.decision, person: body.person, note: body.note ?? null };
  const key = input.headers.idempotencyKey;
  if (key === undefined) return ok(ctx, 200, JSON.stringify(proposalView(await ctx.engine.operator.decide(input.path.reviewRef, decision))));
  const out = await ctx.engine.operator.decideOnce(input.path.reviewRef, decision, key);
  return ok(ctx, 200, JSON.stringify(proposalView(out.proposal)), { receipt: out.receipt });
});

/** POST /operator/v1/spaces/{spaceRef}/publication: the owner's enablement. */
const setPublication = bind(contract.setSpacePublication, async (ctx, input) => {
  const body = parseOrThrow(PublicationRequestSchema, input.body, 'publication request');
  const space = await ctx.engine.operator.setPublication(input.path.spaceRef, body);
  return ok(ctx, 200, JSON.stringify({ spaceRef: space.spaceRef, graphRevision: space.graphRevision, enabled: space.publication?.enabled ?? false }));
});

/** POST /operator/v1/releases: bind a projection at an exact revision (private until promoted). */
const createRelease = bind(contract.createRelease, async (ctx, input) => {
  const body = parseOrThrow(ReleaseRequestSchema, input.body, 'release request');
  return ok(ctx, 201, JSON.stringify(releaseView(await ctx.engine.operator.release(body))));
});

/** POST /operator/v1/releases/{kind}/{artifactId}/{revision}/promotion: the separate promotion review. */
const promoteRelease = bind(contract.promoteRelease, async (ctx, input) => {
  const body = parseOrThrow(PromotionRequestSchema, input.body, 'promotion request');
  const { kind, artifactId, revision } = input.path;
  if (kind !== 'entity' && kind !== 'inquiry' && kind !== 'edition') throw notFound('The release');
  return ok(ctx, 200, JSON.stringify(releaseView(await ctx.engine.operator.promote({ kind, artifactId, revision }, body))));
});

/** The bindings of the operator's knowledge operations. */
export const knowledgeOperatorBindings = [operatorReadReview, decideReview, setPublication, createRelease, promoteRelease];
