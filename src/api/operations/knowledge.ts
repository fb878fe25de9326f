/**
 * The knowledge surfaces: proposal submission (standalone blocked), review reads and search
 * (activation-blocked by default), and the anonymous public-artifact read.
 * @module
 */
import { ServiceError, invalid, notFound, type FieldError } from '../../errors.ts';
import { requireIdempotencyKey } from '../../idempotency/idempotency.ts';
import { Patterns } from '../../ids.ts';
import { parseProposalRequest } from '../../knowledge/proposal-request.ts';
import { baseHeaders, ok } from '../envelope.ts';
import { etagMatches, weakEtag } from '../http-util.ts';
import { bind } from '../bind.ts';
import { contract } from '../../contract/operations.ts';
import { knowledgeOperatorBindings } from './knowledge-operator.ts';

/**
 * POST /api/v1/proposals. Standalone submission is blocked: a well-formed request answers 409
 * AGENT_RUN_REQUIRED (requiredAction submit-through-research-job), a malformed one 400, and when the
 * operator blocks the surface 503. None of these charges the request budget.
 */
const submitProposal = bind(contract.submitProposal, async (ctx, input) => {
  requireIdempotencyKey(input.headers.idempotencyKey);
  const proposal = parseProposalRequest(input.body);
  // Exact-space boundary: a spaceRef outside the credential's spaces is 404, never 403.
  if (proposal.spaceRef !== undefined && !(await ctx.engine.knowledge.spaceVisible(ctx.credential!.actor, proposal.spaceRef))) throw notFound('The space');
  throw new ServiceError(
    'AGENT_RUN_REQUIRED',
    'Standalone proposal submission is blocked: a knowledge proposal must come from a live research-job agent run (hosted job creation is retired). No request budget was charged.',
    { requiredAction: 'submit-through-research-job', retryable: false },
  );
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
const readPublicArtifact = bind(contract.getPublicArtifact, async (ctx, input) => {
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
});

/** GET /api/v1/reviews/{reviewRef}: activation-blocked by default; the documented shape (docs/http-api.md) once activated. */
const readReview = bind(contract.getReview, async (ctx, input) => {
  const review = await ctx.engine.knowledge.readReview(ctx.credential!.actor, input.path.reviewRef);
  return ok(ctx, 200, JSON.stringify(review), { headers: { 'cache-control': 'no-store' } });
});

/** POST /api/v1/search: activation-blocked by default; public:read (scope public) or knowledge:read (scope space). */
const search = bind(contract.search, async (ctx, input) => {
  const credential = ctx.credential!;
  const body = input.body as { scope?: { kind?: unknown } } | null;
  const kind = typeof body === 'object' && body !== null ? body.scope?.kind : undefined;
  const needed = kind === 'space' ? 'knowledge:read' : kind === 'public' ? 'public:read' : null;
  // the scope depends on the body: checked before charging, like every other scope check
  if (needed !== null && !credential.scopeSet.has(needed)) throw new ServiceError('FORBIDDEN', `This credential lacks the scope ${needed}; use a token created with it.`);
  await ctx.charge();
  const page = await ctx.engine.knowledge.search(credential.actor, credential.scopeSet, input.body);
  return ok(ctx, 200, JSON.stringify(page), { headers: { 'cache-control': 'no-store' } });
});

/** The bindings of the knowledge operations in published order (operator ones last; they are not published). */
export const knowledgeBindings = [submitProposal, readPublicArtifact, readReview, search, ...knowledgeOperatorBindings];
