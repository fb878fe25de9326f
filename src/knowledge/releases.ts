/**
 * Publication: the space owner's enablement, releases, and the separate promotion review.
 * @remarks A projection resolves at a public locator only when all three hold: the owner enabled
 * publication for the space, a release binds the projection at an exact revision, and a person
 * approved its promotion. Accepting a proposal never publishes anything. Releases are immutable
 * once promoted (the public read is cached as immutable content).
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import { conflict, invalid, notFound, ServiceError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import { isStorageConflict } from '../ports.ts';
import { canonicalJson } from '../canonical-json.ts';
import { editionProjection, entityProjection, inquiryProjection, type ArtifactKind, type Projection } from './projections.ts';
import { checkPerson } from './proposals.ts';
import { KnowledgeCollections, ordinalKey, releaseKey, type GraphRecord, type ReleaseRecord, type SpaceRecord } from './records.ts';
import type { SpaceDirectory } from './spaces.ts';

/** What to release: a graph entity or inquiry at a revision, or an edition's exact synthesis text. */
export type ReleaseInput =
  | { kind: 'entity' | 'inquiry'; spaceRef: string; artifactId: string; graphRevision?: string | undefined; person: string }
  | { kind: 'edition'; spaceRef: string; graphRevision?: string | undefined; title: string; markdown: string; person: string };

/** The identity of a release: kind, artifact id and revision (graph revision or edition digest). */
export interface ArtifactRef {
  kind: ArtifactKind;
  artifactId: string;
  revision: string;
}

/** Largest projection the contract allows (byteLength 2-524288). */
export const MAX_PROJECTION_BYTES = 524_288;

const encoder = new TextEncoder();

/** Build publication over the engine's storage; `onPromoted` keeps the public search index current. */
export function createReleases(deps: EngineDeps, spaces: SpaceDirectory, onPromoted: () => void) {
  const { storage, clock, refs, sha256 } = deps;

  async function space(spaceRef: string) {
    const rec = Patterns.spaceRef.test(spaceRef) ? await storage.getRecord<SpaceRecord>(KnowledgeCollections.spaces, spaceRef) : null;
    if (!rec) throw notFound('The space (it has no knowledge yet)');
    return rec;
  }

  async function recordsAt(spaceRef: string, graphRevision: string): Promise<GraphRecord[]> {
    const rev = await storage.getRecord<{ recordCount: number }>(KnowledgeCollections.revisions, `${spaceRef}/${graphRevision}`);
    if (!rev) throw new ServiceError('NOT_FOUND', 'The graph revision is not one of this space.', { fieldErrors: [{ field: 'graphRevision', message: 'names no revision of this space' }] });
    const all = await storage.listRecords<GraphRecord>(KnowledgeCollections.graph, `${spaceRef}/`);
    return all.map((r) => r.value).filter((r) => r.ordinal <= rev.value.recordCount).sort((a, b) => a.ordinal - b.ordinal);
  }

  /** The owner enables (or disables) publication of a space. */
  async function setPublication(spaceRef: string, input: { enabled: boolean; person: string }): Promise<SpaceRecord> {
    const person = checkPerson(input.person);
    if (typeof input.enabled !== 'boolean') throw invalid('enabled must be a boolean.', [{ field: 'enabled', message: 'must be a boolean' }]);
    return spaces.serialize(spaceRef, async () => {
      const rec = await space(spaceRef);
      const next: SpaceRecord = { ...rec.value, publication: { enabled: input.enabled, person, at: clock.now() } };
      await storage.commit([{ kind: 'record.put', collection: KnowledgeCollections.spaces, key: spaceRef, value: next, expectedRevision: rec.revision }]);
      return next;
    });
  }

  /** Bind a projection at an exact revision; it stays private until its promotion is approved. */
  async function release(input: ReleaseInput): Promise<ReleaseRecord> {
    const person = checkPerson(input.person);
    const rec = await space(input.spaceRef);
    if (!rec.value.publication?.enabled) {
      throw conflict("The space owner has not enabled publication for this space; nothing was released. Enable it first (the owner's decision).");
    }
    const graphRevision = input.graphRevision ?? rec.value.graphRevision;
    if (!Patterns.sha256.test(graphRevision)) throw invalid('graphRevision must be 64 lowercase hex.', [{ field: 'graphRevision', message: 'must be 64 lowercase hex' }]);
    const records = await recordsAt(input.spaceRef, graphRevision);
    let artifactId: string;
    let revision: string;
    let projection: Projection | null;
    if (input.kind === 'edition') {
      if (typeof input.markdown !== 'string' || input.markdown.length === 0) throw invalid('An edition needs its synthesis text.', [{ field: 'markdown', message: 'must be a non-empty string' }]);
      if (typeof input.title !== 'string' || input.title.length === 0 || input.title.length > 240) throw invalid('An edition needs a title of 1-240 characters.', [{ field: 'title', message: 'must be 1-240 characters' }]);
      artifactId = refs.editionId();
      revision = sha256(input.markdown);
      projection = editionProjection(artifactId, revision, graphRevision, input.title, input.markdown);
    } else {
      const pattern = input.kind === 'entity' ? Patterns.entityId : Patterns.inquiryId;
      if (!pattern.test(input.artifactId)) throw invalid(`artifactId must be a ${input.kind} id.`, [{ field: 'artifactId', message: `must match ${pattern.source}` }]);
      artifactId = input.artifactId;
      revision = graphRevision;
      projection = input.kind === 'entity' ? entityProjection(records, artifactId, graphRevision) : inquiryProjection(records, artifactId, graphRevision);
      if (!projection) throw notFound(`The ${input.kind} at this graph revision`);
    }
    const projectionJson = canonicalJson(projection.value);
    const byteLength = encoder.encode(projectionJson).byteLength;
    if (byteLength > MAX_PROJECTION_BYTES) throw conflict(`The projection is ${byteLength} bytes; public projections are at most ${MAX_PROJECTION_BYTES}. Nothing was released.`);
    const key = releaseKey(input.kind, artifactId, revision);
    const existing = await storage.getRecord<ReleaseRecord>(KnowledgeCollections.releases, key);
    if (existing) return existing.value;
    const value: ReleaseRecord = {
      v: 1, kind: input.kind, artifactId, revision, spaceRef: input.spaceRef, graphRevision, projectionJson, byteLength,
      title: projection.title, snippet: projection.snippet, releasedBy: person, releasedAt: clock.now(), state: 'pending-promotion', promotion: null, publicOrdinal: null,
    };
    try {
      await storage.commit([{ kind: 'record.put', collection: KnowledgeCollections.releases, key, value, expectedRevision: null }]);
    } catch (e) {
      if (!isStorageConflict(e)) throw e;
      const raced = await storage.getRecord<ReleaseRecord>(KnowledgeCollections.releases, key);
      if (raced) return raced.value;
      throw e;
    }
    return value;
  }

  /** The separate promotion review: approve makes a release public, decline keeps it private for good. */
  async function promote(ref: ArtifactRef, input: { decision: 'approve' | 'decline'; person: string }): Promise<ReleaseRecord> {
    const person = checkPerson(input.person);
    if (input.decision !== 'approve' && input.decision !== 'decline') throw invalid('decision must be approve or decline.', [{ field: 'decision', message: 'must be approve or decline' }]);
    // promotions share one public counter: one at a time in this process
    return spaces.serialize('public', () => decidePromotion(ref, input.decision, person));
  }

  async function decidePromotion(ref: ArtifactRef, decision: 'approve' | 'decline', person: string): Promise<ReleaseRecord> {
    const key = releaseKey(ref.kind, ref.artifactId, ref.revision);
    const rec = await storage.getRecord<ReleaseRecord>(KnowledgeCollections.releases, key);
    if (!rec) throw notFound('The release');
    if (rec.value.state !== 'pending-promotion') throw conflict(`The release was already decided (${rec.value.state}).`);
    const sp = await space(rec.value.spaceRef);
    if (decision === 'approve' && !sp.value.publication?.enabled) throw conflict('The space owner has disabled publication; the release cannot be promoted.');
    const now = clock.now();
    const next: ReleaseRecord = { ...rec.value, state: decision === 'approve' ? 'promoted' : 'declined', promotion: { decision, person, at: now } };
    if (decision === 'decline') {
      await storage.commit([{ kind: 'record.put', collection: KnowledgeCollections.releases, key, value: next, expectedRevision: rec.revision }]);
      return next;
    }
    const counter = await storage.getRecord<{ count: number }>(KnowledgeCollections.counters, 'public');
    const ordinal = (counter?.value.count ?? 0) + 1;
    next.publicOrdinal = ordinal;
    try {
      await storage.commit([
        { kind: 'record.put', collection: KnowledgeCollections.releases, key, value: next, expectedRevision: rec.revision, index: { partition: 'public', sortKey: ordinalKey(ordinal) } },
        { kind: 'record.put', collection: KnowledgeCollections.counters, key: 'public', value: { count: ordinal }, expectedRevision: counter ? counter.revision : null },
      ]);
    } catch (e) {
      if (!isStorageConflict(e)) throw e;
      throw new ServiceError('CONFLICT', 'Another promotion was recorded at the same time; nothing was written. Retry.', { cause: e, retryable: true });
    }
    onPromoted();
    return next;
  }

  /** A promoted release at exactly this kind, identity and revision, else null. */
  async function publicRelease(ref: ArtifactRef): Promise<ReleaseRecord | null> {
    const rec = await storage.getRecord<ReleaseRecord>(KnowledgeCollections.releases, releaseKey(ref.kind, ref.artifactId, ref.revision));
    return rec && rec.value.state === 'promoted' ? rec.value : null;
  }

  return { setPublication, release, promote, publicRelease };
}
