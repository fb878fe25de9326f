/**
 * The three publication steps of the review page, through the engine's operator API (the same
 * steps `publishFromAcceptedProposal` takes for the demo, one per button):
 * - "Confirm rights": the space owner's enablement of publication (`setPublication`);
 * - "Release": every accepted entity and inquiry at the graph revision the acceptance produced, and
 *   the job's report as an edition; what was released is recorded once per review, so a second click
 *   (or a second process) releases nothing new;
 * - "Promote": the promotion review of each of those releases, approved; the public locators resolve.
 * @module
 */
import type { Engine } from '../engine.ts';
import { conflict } from '../errors.ts';
import { JOBS_COLLECTION, type StoredJob } from '../jobs/store.ts';
import type { ProposalRecord, ReleaseRecord } from '../knowledge/records.ts';
import { KnowledgeCollections, releaseKey } from '../knowledge/records.ts';
import type { ArtifactRef } from '../knowledge/releases.ts';
import { isStorageConflict } from '../ports.ts';
import { accountActor } from '../deps.ts';
import { PUBLICATION_COLLECTION, type PublicationRecord } from './pages.ts';

/** A step of the review page's publication. */
export type PublicationStep = 'confirm-rights' | 'release' | 'promote';

const refOf = (r: ReleaseRecord): ArtifactRef => ({ kind: r.kind, artifactId: r.artifactId, revision: r.revision });

async function releaseAll(engine: Engine, p: ProposalRecord, accepted: NonNullable<ProposalRecord['accepted']>, person: string): Promise<ArtifactRef[]> {
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
export async function publicationStep(engine: Engine, p: ProposalRecord, step: PublicationStep, person: string): Promise<void> {
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
