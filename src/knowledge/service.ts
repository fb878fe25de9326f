/**
 * `createKnowledgeService`: proposals for research-job runners, the operator's decisions, releases,
 * the anonymous public read, review reads and search.
 * @remarks Every read that takes an actor answers NOT_FOUND for anything outside the actor's spaces
 * (absent and out-of-boundary are indistinguishable). The operator API (`operator`) is in-process
 * and trusted: it acts for the named person and is reachable over HTTP only under /operator/v1.
 * @module
 */
import { isoTimestamp } from '../clock.ts';
import type { EngineDeps } from '../deps.ts';
import type { Actor } from '../actor.ts';
import { notFound, ServiceError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import { parseOrThrow } from '../validation.ts';
import type { ProposalSubmissionResult } from './proposal-schema.ts';
import { createProposals, type DecisionInput, type DecisionOutcome, type SubmissionRun } from './proposals.ts';
import { IdempotencyStore } from '../idempotency/idempotency.ts';
import { SearchRequestSchema, type PublicArtifactRef, type ReviewView, type SearchPage } from './public-schemas.ts';
import { KnowledgeCollections, type ProposalRecord, type ReleaseRecord, type SpaceRecord } from './records.ts';
import { createReleases, type ArtifactRef, type ReleaseInput } from './releases.ts';
import { createSearchIndex } from './search-index.ts';
import { createSpaceDirectory } from './spaces.ts';

/** A released artifact as the public read serves it: the envelope data as JSON text. */
export interface PublicArtifactRead {
  ref: PublicArtifactRef;
  canonicalUrl: string;
  /** The `data` of the envelope, with the projection's canonical JSON spliced in as is. */
  dataJson: string;
  release: ReleaseRecord;
}

/** The operator's in-process API (also served under /operator/v1). */
export interface KnowledgeOperator {
  /** A person's decision about the proposal under review `reviewRef` (open-review, accept, reject, withdraw). */
  decide(reviewRef: string, input: DecisionInput): Promise<ProposalRecord>;
  /**
   * {@link KnowledgeOperator.decide} under an idempotency key: an exact repeat (same key, review and
   * body) replays the applied decision with the proposal as it is now; the same key with anything
   * else is IDEMPOTENCY_CONFLICT.
   */
  decideOnce(reviewRef: string, input: DecisionInput, idempotencyKey: string): Promise<DecisionOutcome>;
  /** The space owner's publication enablement. */
  setPublication(spaceRef: string, input: { enabled: boolean; person: string }): Promise<SpaceRecord>;
  /** Bind a projection at an exact revision (needs the owner's enablement); private until promoted. */
  release(input: ReleaseInput): Promise<ReleaseRecord>;
  /** The separate promotion review of a release. */
  promote(ref: ArtifactRef, input: { decision: 'approve' | 'decline'; person: string }): Promise<ReleaseRecord>;
  /** A proposal by its review (operator view, no boundary). */
  proposalOfReview(reviewRef: string): Promise<ProposalRecord>;
  /** Every proposal of an account, in no particular order (operator view: the person's console lists those awaiting a decision). */
  proposalsOfAccount(accountId: string): Promise<ProposalRecord[]>;
}

/** The knowledge service. */
export interface KnowledgeService {
  /**
   * Submit a proposal from a research job's run. `run.actor` is the job's actor, `run.spaceRef` the
   * space the job works in. Same job and key with the same request: the same result (replay); with
   * another request: IDEMPOTENCY_CONFLICT. Malformed request: INVALID_REQUEST with fieldErrors; space
   * not visible to the actor: NOT_FOUND.
   */
  submitProposal(run: SubmissionRun, request: unknown, options: { idempotencyKey: string }): Promise<ProposalSubmissionResult>;
  /** Whether the actor may see the space (for exact-space checks at the edge). */
  spaceVisible(actor: Actor, spaceRef: string): Promise<boolean>;
  /** Review metadata inside the actor's boundary, else NOT_FOUND. */
  readReview(actor: Actor, reviewRef: string): Promise<ReviewView>;
  /** Search released artifacts (`public`, needs public:read) or one space's graph (`space`, knowledge:read, exact space). */
  search(actor: Actor, scopes: ReadonlySet<string>, body: unknown): Promise<SearchPage>;
  /** A promoted release at exactly this kind, identity and revision, or null. Anonymous. */
  readPublicArtifact(kind: string, artifactId: string, revision: string): Promise<PublicArtifactRead | null>;
  /** The current graph revision of a space (null without knowledge). Trusted callers. */
  graphRevision(spaceRef: string): Promise<string | null>;
  readonly operator: KnowledgeOperator;
}

function encodeCursor(offset: number, tag: string): string {
  return btoa(JSON.stringify({ v: 1, o: offset, t: tag })).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function decodeCursor(cursor: string, tag: string): number {
  const bad = (cause?: unknown) =>
    new ServiceError('INVALID_REQUEST', 'The cursor is not a nextCursor of this search and credential.', {
      fieldErrors: [{ field: 'cursor', message: 'is not a cursor of this search' }],
      cause,
    });
  let parsed: unknown;
  try {
    parsed = JSON.parse(atob(cursor.replace(/-/g, '+').replace(/_/g, '/')));
  } catch (cause) {
    throw bad(cause);
  }
  const c = parsed as { v?: unknown; o?: unknown; t?: unknown };
  if (c.v !== 1 || c.t !== tag || typeof c.o !== 'number' || !Number.isInteger(c.o) || c.o < 0) throw bad();
  return c.o;
}

/** Build the knowledge service over the engine's dependencies. */
export function createKnowledgeService(deps: EngineDeps, options: { idempotency?: IdempotencyStore | undefined } = {}): KnowledgeService {
  const { storage, sha256 } = deps;
  const spaces = createSpaceDirectory(deps);
  const index = createSearchIndex(deps);
  const keepCurrent = (name: string) => void index.refresh(name).catch((e: unknown) => deps.reportError(e, 'search-index'));
  const idem = options.idempotency ?? new IdempotencyStore(storage, deps.clock, { onError: deps.reportError });
  const proposals = createProposals(deps, spaces, keepCurrent, idem);
  const releases = createReleases(deps, spaces, () => keepCurrent('public'));

  async function proposalOfReview(reviewRef: string): Promise<ProposalRecord | null> {
    if (!Patterns.reviewRef.test(reviewRef)) return null;
    const review = await storage.getRecord<{ proposalRef: string }>(KnowledgeCollections.reviews, reviewRef);
    if (!review) return null;
    return (await storage.getRecord<ProposalRecord>(KnowledgeCollections.proposals, review.value.proposalRef))?.value ?? null;
  }

  const operator: KnowledgeOperator = {
    decide: proposals.decide,
    decideOnce: proposals.decideOnce,
    setPublication: releases.setPublication,
    release: releases.release,
    promote: releases.promote,
    async proposalOfReview(reviewRef) {
      const p = await proposalOfReview(reviewRef);
      if (!p) throw notFound('The review');
      return p;
    },
    async proposalsOfAccount(accountId) {
      return (await storage.listRecords<ProposalRecord>(KnowledgeCollections.proposals)).map((r) => r.value).filter((p) => p.accountId === accountId);
    },
  };

  return {
    submitProposal: proposals.submit,
    async spaceVisible(actor, spaceRef) {
      return (await spaces.visible(actor, spaceRef)) !== null;
    },
    async readReview(actor, reviewRef) {
      const p = await proposalOfReview(reviewRef);
      if (!p || !(await spaces.visible(actor, p.spaceRef))) throw notFound('The review');
      return {
        v: 1,
        reviewRef: p.reviewRef,
        proposalRef: p.proposalRef,
        state: p.state,
        createdAt: isoTimestamp(p.createdAt),
        decidedAt: p.decidedAt === null ? null : isoTimestamp(p.decidedAt),
        browserHref: deps.links.reviewPage(p.reviewRef),
      };
    },
    async search(actor, scopes, body) {
      const req = parseOrThrow(SearchRequestSchema, body, 'search request');
      let partition: string;
      if (req.scope.kind === 'public') {
        if (!scopes.has('public:read')) throw new ServiceError('FORBIDDEN', 'Searching public artifacts needs the scope public:read.');
        partition = 'public';
      } else {
        if (!scopes.has('knowledge:read')) throw new ServiceError('FORBIDDEN', "Searching a space's graph needs the scope knowledge:read.");
        if (!(await spaces.visible(actor, req.scope.spaceRef))) throw notFound('The space');
        partition = req.scope.spaceRef;
      }
      const tag = sha256(`${actor.credentialRef ?? actor.accountId}\n${partition}\n${req.query}`).slice(0, 24);
      const offset = req.cursor === undefined ? 0 : decodeCursor(req.cursor, tag);
      const limit = req.limit ?? 20;
      const { hits, total } = await index.query(partition, req.query, offset, limit);
      const items = hits.map((h) => ({
        kind: h.kind,
        ref: partition === 'public' ? (JSON.parse(h.ref) as PublicArtifactRef) : h.ref,
        title: h.title,
        snippet: h.snippet,
        score: h.score,
      }));
      return { items, nextCursor: offset + limit < total ? encodeCursor(offset + limit, tag) : null };
    },
    async readPublicArtifact(kind, artifactId, revision) {
      if (kind !== 'entity' && kind !== 'inquiry' && kind !== 'edition') return null;
      const release = await releases.publicRelease({ kind, artifactId, revision });
      if (!release) return null;
      const ref = { kind, artifactId, revision, v: 1 } as PublicArtifactRef;
      const canonicalUrl = deps.links.publicPage(ref);
      const dataJson = `{"v":1,"canonicalUrl":${JSON.stringify(canonicalUrl)},"ref":${JSON.stringify(ref)},"projection":{"kind":"${kind}","byteLength":${release.byteLength},"value":${release.projectionJson}}}`;
      return { ref, canonicalUrl, dataJson, release };
    },
    async graphRevision(spaceRef) {
      const rec = Patterns.spaceRef.test(spaceRef) ? await storage.getRecord<SpaceRecord>(KnowledgeCollections.spaces, spaceRef) : null;
      return rec?.value.graphRevision ?? null;
    },
    operator,
  };
}
