/**
 * Wire schemas of the operator's knowledge requests (review decisions, publication, releases,
 * promotion): pure valibot, shared by the contract and the operator's bindings.
 * @module
 */
import * as v from 'valibot';
import { Patterns } from '../ids.ts';
import { PROPOSAL_DECISIONS } from './states.ts';

const Person = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(80, 'must be at most 80 characters'));
const Revision = v.pipe(v.string(), v.regex(Patterns.sha256, 'must be 64 lowercase hex'));

/** Body of a review decision. */
export const DecisionRequestSchema = v.strictObject({
  decision: v.picklist(PROPOSAL_DECISIONS, `must be one of ${PROPOSAL_DECISIONS.join(', ')}`),
  person: Person,
  note: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1024, 'must be at most 1024 characters')))),
});

/** Body of the publication switch. */
export const PublicationRequestSchema = v.strictObject({ enabled: v.boolean(), person: Person });

/** Body of a release. */
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

/** Body of a promotion decision. */
export const PromotionRequestSchema = v.strictObject({ decision: v.picklist(['approve', 'decline'], 'must be approve or decline'), person: Person });

