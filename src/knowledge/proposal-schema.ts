/**
 * The knowledge proposal request (ProposalRequest v2) and the submission result, as valibot schemas.
 * The rules the schema cannot say are in `proposal-request.ts`.
 * @module
 */
import * as v from 'valibot';
import { LanguageSchema, ProposalRefSchema, ReviewRefSchema, SpaceRefSchema } from '../values.ts';
import { boundedPattern, maxArray, rangeArray, str } from '../schema-kit.ts';

/** A proposal-local key. */
export const ProposalKey = boundedPattern(1, 96, /^[a-z][a-z0-9]*([._:-][a-z0-9]+)*$/, 'Proposal-local key: 1-96 characters, lowercase, starting with a letter.');

const EntitySourceSchema = v.variant('kind', [
  v.strictObject({ kind: v.literal('entity'), entityKey: ProposalKey }),
  v.strictObject({ kind: v.literal('uri'), uri: v.string() }),
]);

const FactObjectSchema = v.variant('kind', [
  v.strictObject({ kind: v.literal('boolean'), value: v.boolean() }),
  v.strictObject({ kind: v.literal('decimal'), value: v.pipe(v.string(), v.regex(/^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/), v.maxLength(1024)) }),
  v.strictObject({ kind: v.literal('duration'), iso8601: str(2, 128) }),
  v.strictObject({ kind: v.literal('entity'), entityKey: ProposalKey }),
  v.strictObject({ kind: v.literal('integer'), value: v.pipe(v.string(), v.maxLength(1024)) }),
  v.strictObject({ kind: v.literal('string'), value: v.string() }),
  v.strictObject({ kind: v.literal('text'), language: LanguageSchema, text: v.string() }),
  v.strictObject({ kind: v.literal('uri'), uri: v.string() }),
]);

export const ProposalRequestSchema = v.strictObject({
  v: v.literal(2),
  entities: maxArray(
    v.strictObject({
      key: ProposalKey,
      name: v.string(),
      description: v.nullable(v.string()),
      language: LanguageSchema,
      identifiers: maxArray(v.pipe(v.string(), v.description('An HTTP, HTTPS or URN URI; canonicalized by the server.')), 4),
      concepts: rangeArray(
        v.picklist([
          'account',
          'agent',
          'artifact',
          'concept',
          'entity',
          'event',
          'information-resource',
          'inquiry',
          'organization',
          'person',
          'place',
          'process',
          'source',
          'work',
        ]),
        1,
        4,
      ),
    }),
    32,
  ),
  facts: maxArray(
    v.strictObject({
      key: ProposalKey,
      subject: ProposalKey,
      predicate: v.picklist([
        'about',
        'authored-by',
        'cites',
        'created-by',
        'derived-from',
        'description',
        'identifier',
        'located-in',
        'name',
        'object',
        'part-of',
        'related-to',
        'same-as',
      ]),
      stance: v.picklist(['questions', 'refutes', 'reports', 'supports', 'undetermined']),
      object: FactObjectSchema,
    }),
    128,
  ),
  evidence: maxArray(
    v.strictObject({
      key: ProposalKey,
      factKey: ProposalKey,
      bearing: v.picklist([
        'background',
        'contradicts',
        'corroborates',
        'direct-observation',
        'method',
        'quotation',
        'registry-record',
        'supports',
      ]),
      selector: v.nullable(v.string()),
      source: EntitySourceSchema,
    }),
    128,
  ),
  inquiries: maxArray(
    v.strictObject({
      key: ProposalKey,
      question: v.string(),
      answerForm: ProposalKey,
      language: LanguageSchema,
      parentKeys: maxArray(ProposalKey, 16),
    }),
    32,
  ),
  spaceRef: v.optional(v.pipe(SpaceRefSchema, v.description('Exact space of the proposal (exact-space boundary).'))),
});

export const ProposalSubmissionResultSchema = v.object({
  v: v.literal(1),
  proposalRef: ProposalRefSchema,
  reviewRef: ReviewRefSchema,
  state: v.picklist(['proposed', 'in-review', 'accepted', 'rejected', 'withdrawn']),
  browserHref: v.pipe(v.string(), v.maxLength(2048)),
  conflicts: maxArray(v.pipe(v.string(), v.maxLength(4096)), 64),
  requiredAction: v.nullable(v.literal('review-in-browser')),
  supportPaths: maxArray(v.object({ href: v.pipe(v.string(), v.maxLength(2048)), label: v.pipe(v.string(), v.maxLength(512)) }), 128),
});


/** A ProposalRequest as parsed. */
export type ProposalRequest = v.InferOutput<typeof ProposalRequestSchema>;
/** The result of a proposal submission. */
export type ProposalSubmissionResult = v.InferOutput<typeof ProposalSubmissionResultSchema>;
