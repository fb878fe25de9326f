/**
 * The knowledge proposal request (ProposalRequest v2) and the submission result, as valibot schemas.
 * The rules the schema cannot say (unique keys, cross-references, URI canonical forms) are in
 * `proposal-request.ts`.
 * @module
 */
import * as v from 'valibot';
import { LanguageSchema, ProposalRefSchema, ReviewRefSchema, SpaceRefSchema } from '../values.ts';
import { boundedPattern, maxArray } from '../schema-builders.ts';
import { DURATION_SHAPE } from './duration.ts';

/** A proposal-local key: 1-96 characters, lowercase, starting with a letter, segments joined by . _ : or -. */
export const ProposalKey = boundedPattern(
  1,
  96,
  /^[a-z][a-z0-9]*([._:-][a-z0-9]+)*$/,
  'Proposal-local key: 1-96 characters, lowercase, starting with a letter, segments joined by . _ : or -.',
);

/** Limits of a proposal request (the contract's "Proposal" row). */
export const ProposalLimits = { entities: 32, facts: 128, evidence: 128, inquiries: 32, identifiers: 4, concepts: 4, parentKeys: 16 } as const;

export const CONCEPTS = [
  'account', 'agent', 'artifact', 'concept', 'entity', 'event', 'information-resource',
  'inquiry', 'organization', 'person', 'place', 'process', 'source', 'work',
] as const;
export const PREDICATES = [
  'about', 'authored-by', 'cites', 'created-by', 'derived-from', 'description', 'identifier',
  'located-in', 'name', 'object', 'part-of', 'related-to', 'same-as',
] as const;
export const STANCES = ['questions', 'refutes', 'reports', 'supports', 'undetermined'] as const;
export const BEARINGS = [
  'background', 'contradicts', 'corroborates', 'direct-observation', 'method', 'quotation', 'registry-record', 'supports',
] as const;

const oneOf = <const T extends readonly string[]>(values: T) => v.picklist(values, `must be one of ${values.join(', ')}`);
const text = (min: number) => (min ? v.pipe(v.string(), v.minLength(min, 'must not be empty')) : v.string());
const atMost = <T extends v.GenericSchema>(item: T, max: number, what: string) =>
  v.pipe(v.array(item), v.maxLength(max, `must hold at most ${max} ${what}`));
const uriString = (description: string) => v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(2048, 'must be at most 2048 characters'), v.description(description));

const EntitySourceSchema = v.variant('kind', [
  v.strictObject({ kind: v.literal('entity'), entityKey: ProposalKey }),
  v.strictObject({ kind: v.literal('uri'), uri: uriString('An absolute URI; canonicalized by the server.') }),
]);

/** Decimal: optional minus, integer part without leading zeros, optional fraction without trailing zero. */
export const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/;
/** Integer string: optional minus, no leading zeros. */
export const INTEGER = /^-?(0|[1-9][0-9]*)$/;

const FactObjectSchema = v.variant('kind', [
  v.strictObject({ kind: v.literal('boolean'), value: v.boolean() }),
  v.strictObject({
    kind: v.literal('decimal'),
    value: v.pipe(v.string(), v.maxLength(1024, 'must be at most 1024 characters'), v.regex(DECIMAL, 'must be a decimal: optional minus, digits, optional fraction without a trailing zero')),
  }),
  v.strictObject({
    kind: v.literal('duration'),
    iso8601: v.pipe(
      v.string(),
      v.minLength(2, 'must be at least 2 characters'),
      v.maxLength(128, 'must be at most 128 characters'),
      v.regex(DURATION_SHAPE, 'must be an ISO 8601 duration, e.g. P3Y6M, PT15M or P2W'),
    ),
  }),
  v.strictObject({ kind: v.literal('entity'), entityKey: ProposalKey }),
  v.strictObject({
    kind: v.literal('integer'),
    value: v.pipe(v.string(), v.maxLength(1024, 'must be at most 1024 characters'), v.regex(INTEGER, 'must be an integer string: optional minus, digits without leading zeros')),
  }),
  v.strictObject({ kind: v.literal('string'), value: text(0) }),
  v.strictObject({ kind: v.literal('text'), language: LanguageSchema, text: text(1) }),
  v.strictObject({ kind: v.literal('uri'), uri: uriString('An absolute URI; canonicalized by the server.') }),
]);

export const ProposalEntitySchema = v.strictObject({
  key: ProposalKey,
  name: text(1),
  description: v.nullable(text(0)),
  language: LanguageSchema,
  identifiers: atMost(uriString('An HTTP, HTTPS or URN URI; canonicalized by the server.'), ProposalLimits.identifiers, 'identifiers'),
  concepts: v.pipe(v.array(oneOf(CONCEPTS)), v.minLength(1, 'must hold at least one concept'), v.maxLength(ProposalLimits.concepts, 'must hold at most 4 concepts')),
});

export const ProposalFactSchema = v.strictObject({
  key: ProposalKey,
  subject: ProposalKey,
  predicate: oneOf(PREDICATES),
  stance: oneOf(STANCES),
  object: FactObjectSchema,
});

export const ProposalEvidenceSchema = v.strictObject({
  key: ProposalKey,
  factKey: ProposalKey,
  bearing: oneOf(BEARINGS),
  selector: v.nullable(text(0)),
  source: EntitySourceSchema,
});

export const ProposalInquirySchema = v.strictObject({
  key: ProposalKey,
  question: text(1),
  answerForm: ProposalKey,
  language: LanguageSchema,
  parentKeys: atMost(ProposalKey, ProposalLimits.parentKeys, 'parent keys'),
});

export const ProposalRequestSchema = v.strictObject({
  v: v.literal(2, 'must be 2'),
  entities: atMost(ProposalEntitySchema, ProposalLimits.entities, 'entities'),
  facts: atMost(ProposalFactSchema, ProposalLimits.facts, 'facts'),
  evidence: atMost(ProposalEvidenceSchema, ProposalLimits.evidence, 'evidence items'),
  inquiries: atMost(ProposalInquirySchema, ProposalLimits.inquiries, 'inquiries'),
  spaceRef: v.optional(v.pipe(SpaceRefSchema, v.description('Exact space of the proposal (exact-space boundary).'))),
});

export const PROPOSAL_STATES = ['proposed', 'in-review', 'accepted', 'rejected', 'withdrawn'] as const;

export const ProposalSubmissionResultSchema = v.object({
  v: v.literal(1),
  proposalRef: ProposalRefSchema,
  reviewRef: ReviewRefSchema,
  state: v.picklist(PROPOSAL_STATES),
  browserHref: v.pipe(v.string(), v.maxLength(2048)),
  conflicts: maxArray(v.pipe(v.string(), v.maxLength(4096)), 64),
  requiredAction: v.nullable(v.literal('review-in-browser')),
  supportPaths: maxArray(v.object({ href: v.pipe(v.string(), v.maxLength(2048)), label: v.pipe(v.string(), v.maxLength(512)) }), 128),
});

/** A ProposalRequest as parsed. */
export type ProposalRequest = v.InferOutput<typeof ProposalRequestSchema>;
/** The result of a proposal submission. */
export type ProposalSubmissionResult = v.InferOutput<typeof ProposalSubmissionResultSchema>;
/** A proposal state. */
export type ProposalState = (typeof PROPOSAL_STATES)[number];
