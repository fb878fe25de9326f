/**
 * One call for fixtures and demos: publish one artifact of each kind from an accepted proposal,
 * through exactly the steps a person takes (owner enablement, releases, promotion reviews).
 * @module
 */
import { conflict } from '../errors.ts';
import type { PublicArtifactRef } from './public-schemas.ts';
import type { ReleaseRecord } from './records.ts';
import type { KnowledgeOperator } from './service.ts';

/** What {@link publishFromAcceptedProposal} needs. */
export interface PublishInput {
  /** The review of an accepted proposal (e.g. a research job's `artifacts.review.reviewRef`). */
  reviewRef: string;
  /** The person who releases and approves the promotions (1-80 characters). */
  person: string;
  /** The space owner who enables publication; default `person`. */
  owner?: string;
  /** The edition: a title (1-240) and its exact synthesis text (e.g. the report's Markdown). */
  edition: { title: string; markdown: string };
}

/** The three released artifacts, ready for a job's `artifacts.publicArtifacts`. */
export interface PublishedArtifacts {
  entity: PublicArtifactRef;
  inquiry: PublicArtifactRef;
  edition: PublicArtifactRef;
}

const refOf = (r: ReleaseRecord) => ({ kind: r.kind, artifactId: r.artifactId, revision: r.revision, v: 1 }) as PublicArtifactRef;

/**
 * Enable publication of the proposal's space, release its first entity and first inquiry at the
 * graph revision its acceptance produced and an edition pinned to that revision, and approve the
 * three promotions.
 * @throws CONFLICT when the proposal is not accepted or has no entity or no inquiry.
 * @example
 * const review = job.artifacts.review!;
 * await engine.operator.decide(review.reviewRef, { decision: 'accept', person: 'Demo Person' });
 * const published = await publishFromAcceptedProposal(engine.operator, { reviewRef: review.reviewRef, person: 'Demo Person', edition: { title, markdown } });
 */
export async function publishFromAcceptedProposal(operator: KnowledgeOperator, input: PublishInput): Promise<PublishedArtifacts> {
  const p = await operator.proposalOfReview(input.reviewRef);
  if (p.state !== 'accepted' || !p.accepted) throw conflict(`The proposal is ${p.state}; only an accepted proposal can be published.`);
  const entityKey = p.request.entities[0]?.key;
  const inquiryKey = p.request.inquiries[0]?.key;
  if (entityKey === undefined || inquiryKey === undefined) throw conflict('The proposal needs at least one entity and one inquiry to publish one artifact of each kind.');
  const { graphRevision, entityIds, inquiryIds } = p.accepted;
  await operator.setPublication(p.spaceRef, { enabled: true, person: input.owner ?? input.person });
  const releases = [
    await operator.release({ kind: 'entity', spaceRef: p.spaceRef, artifactId: entityIds[entityKey]!, graphRevision, person: input.person }),
    await operator.release({ kind: 'inquiry', spaceRef: p.spaceRef, artifactId: inquiryIds[inquiryKey]!, graphRevision, person: input.person }),
    await operator.release({ kind: 'edition', spaceRef: p.spaceRef, graphRevision, title: input.edition.title, markdown: input.edition.markdown, person: input.person }),
  ];
  for (const r of releases) if (r.state === 'pending-promotion') await operator.promote(r, { decision: 'approve', person: input.person });
  const [entity, inquiry, edition] = releases.map(refOf) as [PublicArtifactRef, PublicArtifactRef, PublicArtifactRef];
  return { entity, inquiry, edition };
}
