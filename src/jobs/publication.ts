/**
 * The publication of an accepted proposal in three steps, through the engine's operator API (the
 * same steps `publishFromAcceptedProposal` takes for the demo; the browser app's review page has a
 * button for each):
 * - "Confirm rights": the space owner's enablement of publication (`setPublication`);
 * - "Release": every accepted entity and inquiry at the graph revision the acceptance produced, and
 *   the job's report as an edition; what was released is recorded once per review, so a second click
 *   (or a second process) releases nothing new;
 * - "Promote": the promotion review of each of those releases, approved; the public locators resolve.
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import { accountActor } from '../actor.ts';
import type { DocumentsService } from '../documents/types.ts';
import { conflict } from '../errors.ts';
import { KeyedLock } from '../keyed-lock.ts';
import type { ProposalRecord, ReleaseRecord, SpaceRecord } from '../knowledge/records.ts';
import { KnowledgeCollections, releaseKey } from '../knowledge/records.ts';
import type { ArtifactRef } from '../knowledge/releases.ts';
import type { KnowledgeOperator } from '../knowledge/service.ts';
import { isStorageConflict } from '../ports.ts';
import { PUBLICATION_COLLECTION, type PublicationRecord } from './public-artifacts.ts';
import { JOBS_COLLECTION, type StoredJob } from './store.ts';

/** A step of the review page's publication. */
export type PublicationStep = 'confirm-rights' | 'release' | 'promote';

const refOf = (r: ReleaseRecord): ArtifactRef => ({ kind: r.kind, artifactId: r.artifactId, revision: r.revision });

/** What the steps take from the engine. */
interface PublicationContext {
  deps: EngineDeps;
  documents: DocumentsService;
  operator: KnowledgeOperator;
}

async function releaseAll(engine: PublicationContext, p: ProposalRecord, accepted: NonNullable<ProposalRecord['accepted']>, person: string): Promise<ArtifactRef[]> {
  const { graphRevision, entityIds, inquiryIds } = accepted;
  const releases: ReleaseRecord[] = [];
  for (const artifactId of Object.values(entityIds)) releases.push(await engine.operator.release({ kind: 'entity', spaceRef: p.spaceRef, artifactId, graphRevision, person }));
  for (const artifactId of Object.values(inquiryIds)) releases.push(await engine.operator.release({ kind: 'inquiry', spaceRef: p.spaceRef, artifactId, graphRevision, person }));
  const job = (await engine.deps.storage.getRecord<StoredJob>(JOBS_COLLECTION, p.jobId))?.value.job;
  const reportRef = job?.artifacts.report?.documentRef;
  if (reportRef) {
    const read = await engine.documents.read(accountActor(p.accountId), reportRef, 'markdown');
    const head = await engine.deps.storage.getDocumentHead(reportRef);
    if (read.format === 'markdown' && read.markdown.length > 0) {
      releases.push(await engine.operator.release({ kind: 'edition', spaceRef: p.spaceRef, graphRevision, title: (head?.title ?? 'Report').slice(0, 240), markdown: read.markdown, person }));
    }
  }
  return releases.map(refOf);
}

/**
 * Take one publication step for an accepted proposal, as `person`.
 * @throws CONFLICT when the proposal is not accepted, a step comes before the one it needs, or the
 * operator API refuses it (publication disabled, release already decided).
 */
async function publicationStep(engine: PublicationContext, p: ProposalRecord, step: PublicationStep, person: string): Promise<void> {
  const accepted = p.accepted;
  if (p.state !== 'accepted' || !accepted) throw conflict(`The proposal is ${p.state}; only an accepted proposal can be published.`);
  const { storage } = engine.deps;
  if (step === 'confirm-rights') {
    await engine.operator.setPublication(p.spaceRef, { enabled: true, person });
    return;
  }
  const record = await storage.getRecord<PublicationRecord>(PUBLICATION_COLLECTION, p.reviewRef);
  if (step === 'release') {
    if (record) return; // released already
    const releases = await releaseAll(engine, p, accepted, person);
    const value: PublicationRecord = { v: 1, reviewRef: p.reviewRef, releases };
    try {
      await storage.commit([{ kind: 'record.put', collection: PUBLICATION_COLLECTION, key: p.reviewRef, value, expectedRevision: null }]);
    } catch (e) {
      if (!isStorageConflict(e)) throw e; // another process recorded its release first: the page shows that one
    }
    return;
  }
  if (!record) throw conflict('Release first: there is nothing to promote yet.');
  for (const ref of record.value.releases) {
    const current = await storage.getRecord<ReleaseRecord>(KnowledgeCollections.releases, releaseKey(ref.kind, ref.artifactId, ref.revision));
    if (current?.value.state === 'pending-promotion') await engine.operator.promote(ref, { decision: 'approve', person });
  }
}

/** The publication of accepted proposals, step by step (see the module). */
export interface PublicationService {
  /**
   * Take one publication step for an accepted proposal, as `person` (steps of one review run one
   * after another).
   * @throws CONFLICT when the proposal is not accepted, a step comes before the one it needs, or the
   * operator API refuses it (publication disabled, release already decided), or a racing step of
   * another caller recorded the same thing at the same time.
   */
  step(proposal: ProposalRecord, step: PublicationStep, person: string): Promise<void>;
  /** What the Release step released for a review, or null before it. */
  released(reviewRef: string): Promise<ArtifactRef[] | null>;
  /** Where the publication of an accepted proposal stands (what its review page shows). */
  state(proposal: ProposalRecord): Promise<PublicationState>;
}

/** Where the publication of an accepted proposal stands. */
export interface PublicationState {
  /** The space owner enabled publication (the "Confirm rights" step). */
  rightsConfirmed: boolean;
  /** The releases the "Release" step made, as they are now. */
  releases: ReleaseRecord[];
  /** Every one of them is promoted (the "Promote" step). */
  promoted: boolean;
}

/** Create the {@link PublicationService} over the engine's dependencies and services. */
export function createPublicationService(deps: EngineDeps, services: { documents: DocumentsService; operator: KnowledgeOperator }): PublicationService {
  const ctx: PublicationContext = { deps, ...services };
  // One step of a review at a time in this process (the storage's revisions guard across processes).
  const steps = new KeyedLock();
  const released = async (reviewRef: string): Promise<ArtifactRef[] | null> =>
    (await deps.storage.getRecord<PublicationRecord>(PUBLICATION_COLLECTION, reviewRef))?.value.releases ?? null;
  return {
    step: (proposal, step, person) =>
      steps.run(proposal.reviewRef, async () => {
        try {
          await publicationStep(ctx, proposal, step, person);
        } catch (e) {
          // A racing step of another process wrote the same record first: said as the domain's conflict.
          if (isStorageConflict(e)) throw conflict('Another step was recorded at the same time; reload the review.');
          throw e;
        }
      }),
    released,
    async state(p) {
      const { storage } = deps;
      const space = await storage.getRecord<SpaceRecord>(KnowledgeCollections.spaces, p.spaceRef);
      const releases: ReleaseRecord[] = [];
      for (const ref of (await released(p.reviewRef)) ?? []) {
        const r = await storage.getRecord<ReleaseRecord>(KnowledgeCollections.releases, releaseKey(ref.kind, ref.artifactId, ref.revision));
        if (r) releases.push(r.value);
      }
      return {
        rightsConfirmed: space?.value.publication?.enabled === true,
        releases,
        promoted: releases.length > 0 && releases.every((r) => r.state === 'promoted'),
      };
    },
  };
}
