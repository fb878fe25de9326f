/**
 * Wire schemas of the knowledge reads: PublicArtifactRef and PublicArtifact (contract), the search
 * request and answer and the review read (docs/http-api.md).
 * @remarks Response objects are open (`v.object`), request bodies closed (`v.strictObject`).
 * @module
 */
import * as v from 'valibot';
import { Patterns } from '../ids.ts';
import { int, maxArray, pattern, str } from '../schema-builders.ts';
import { ProposalRefSchema, ReviewRefSchema, Sha256Schema, SpaceRefSchema, TimestampSchema } from '../values.ts';
import { PROPOSAL_STATES } from './proposal-schema.ts';

export const PublicArtifactRefSchema = v.variant('kind', [
  v.object({ kind: v.literal('entity'), artifactId: pattern(Patterns.entityId, 'kent_ + 24 [a-z0-9]'), revision: Sha256Schema, v: v.literal(1) }),
  v.object({ kind: v.literal('inquiry'), artifactId: pattern(Patterns.inquiryId, 'kinq_ + 24 [a-z0-9]'), revision: Sha256Schema, v: v.literal(1) }),
  v.object({ kind: v.literal('edition'), artifactId: pattern(Patterns.editionId, 'kedn_ + 24 [a-z0-9]'), revision: Sha256Schema, v: v.literal(1) }),
]);

export const PublicArtifactSchema = v.object({
  v: v.literal(1),
  canonicalUrl: v.pipe(v.string(), v.maxLength(2048)),
  ref: PublicArtifactRefSchema,
  projection: v.object({
    kind: v.picklist(['entity', 'inquiry', 'edition']),
    byteLength: int(2, 524_288),
    value: v.pipe(v.object({}), v.description('The released projection: its canonical JSON (sorted keys) is exactly byteLength UTF-8 bytes.')),
  }),
});

export const SearchRequestSchema = v.pipe(
  v.strictObject({
    v: v.literal(1, 'must be 1'),
    scope: v.variant('kind', [
      v.strictObject({ kind: v.literal('public') }),
      v.strictObject({ kind: v.literal('space'), spaceRef: SpaceRefSchema }),
    ], 'kind must be public or space'),
    query: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(512, 'must be at most 512 characters')),
    limit: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(50, 'must be at most 50'))),
    cursor: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(512))),
  }),
  v.description('Search request: public needs public:read, space needs knowledge:read and the exact space.'),
);

export const SearchItemSchema = v.object({
  kind: str(1, 64),
  ref: v.union([PublicArtifactRefSchema, str(1, 64)]),
  title: v.string(),
  snippet: v.string(),
  score: v.number(),
});

export const SearchPageSchema = v.object({
  items: maxArray(SearchItemSchema, 50),
  nextCursor: v.nullable(v.string()),
});

export const ReviewSchema = v.object({
  v: v.literal(1),
  reviewRef: ReviewRefSchema,
  proposalRef: ProposalRefSchema,
  state: v.picklist(PROPOSAL_STATES),
  createdAt: TimestampSchema,
  decidedAt: v.nullable(TimestampSchema),
  browserHref: str(1, 2048),
});

/** A search request as parsed. */
export type SearchRequest = v.InferOutput<typeof SearchRequestSchema>;
/** A search answer page. */
export type SearchPage = v.InferOutput<typeof SearchPageSchema>;
/** A review read. */
export type ReviewView = v.InferOutput<typeof ReviewSchema>;
/** A reference to a released public artifact. */
export type PublicArtifactRef = v.InferOutput<typeof PublicArtifactRefSchema>;
