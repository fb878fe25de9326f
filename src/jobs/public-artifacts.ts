/**
 * A research job's public artifacts published after it ended. A job is terminal (succeeded) once
 * its review is decided, and its state machine takes no artifact after that; the person then
 * publishes from the review page (Confirm rights, Release, Promote). What the Release step released
 * is recorded once per review (`web-publications`, keyed by reviewRef); a job's
 * `artifacts.publicArtifacts` is derived when the job is read: the refs its runner recorded, then
 * each release of its review's publication record that is promoted (public), in release order.
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import { KnowledgeCollections, releaseKey, type ReleaseRecord } from '../knowledge/records.ts';
import type { ArtifactRef } from '../knowledge/releases.ts';
import type { PublicArtifactRef, ResearchJob } from './schemas.ts';

/** Storage collection of review publication records (written by the browser app's review page), keyed by reviewRef. */
export const PUBLICATION_COLLECTION = 'web-publications';

/** What the Release step released for one review (so a second click releases nothing new). */
export interface PublicationRecord {
  v: 1;
  reviewRef: string;
  releases: ArtifactRef[];
}

/** Longest `artifacts.publicArtifacts` list (the job schema's bound). */
const MAX_PUBLIC_ARTIFACTS = 256;

/** The job with its review's promoted releases appended to `artifacts.publicArtifacts` (the job itself when there are none). */
export async function withPublishedArtifacts(deps: EngineDeps, job: ResearchJob): Promise<ResearchJob> {
  const reviewRef = job.artifacts.review?.reviewRef;
  if (!reviewRef) return job;
  const record = await deps.storage.getRecord<PublicationRecord>(PUBLICATION_COLLECTION, reviewRef);
  if (!record) return job;
  const listed = job.artifacts.publicArtifacts;
  const seen = new Set(listed.map((r) => releaseKey(r.kind, r.artifactId, r.revision)));
  const added: PublicArtifactRef[] = [];
  for (const ref of record.value.releases) {
    const key = releaseKey(ref.kind, ref.artifactId, ref.revision);
    if (seen.has(key) || listed.length + added.length >= MAX_PUBLIC_ARTIFACTS) continue;
    const release = await deps.storage.getRecord<ReleaseRecord>(KnowledgeCollections.releases, key);
    if (release?.value.state !== 'promoted') continue;
    seen.add(key);
    added.push({ kind: ref.kind, artifactId: ref.artifactId, revision: ref.revision, v: 1 } as PublicArtifactRef);
  }
  return added.length === 0 ? job : { ...job, artifacts: { ...job.artifacts, publicArtifacts: [...listed, ...added] } };
}
