/**
 * valibot schemas of everything the API answers (envelopes, resources) and of the request bodies of
 * surfaces that have no domain schema yet (research specs, proposals, search, library commands).
 * The published OpenAPI document (`openapi.ts`) is generated from these and from
 * `documents/schemas.ts`. The request schemas here (ResearchReportSpec, ProposalRequest) are also
 * what the API edge validates those bodies with, so the published schema and the check are one.
 *
 * @remarks Response objects are open (`v.object`: extra fields allowed, so clients must ignore
 * fields they do not know); request bodies are closed (`v.strictObject`) as the contract requires.
 * @module
 */
import * as v from 'valibot';
import { PrincipalSchema } from '../auth/principal-schema.ts';
import { LibraryCommandSchema } from '../library/schemas.ts';
import { LibraryItemSchema, LibraryResultSchema, ReceivedUploadSchema } from '../library/result-schemas.ts';
import {
  PublicArtifactRefSchema,
  PublicArtifactSchema,
  ReviewSchema,
  SearchPageSchema,
  SearchRequestSchema,
} from '../knowledge/public-schemas.ts';
import {
  AcceptanceContractSchema,
  CancellationRequestSchema,
  JobArtifactsSchema,
  ResearchJobEventPageSchema,
  ResearchJobEventSchema,
  ResearchJobPageSchema,
  ResearchJobSchema,
  ResearchJobSummarySchema,
  ResearchReportSpecSchema,
} from '../jobs/schemas.ts';
import {
  BlocksRepresentationSchema,
  DocumentMutationResultSchema,
  DocumentPageSchema,
  DocumentSchema,
  DocumentSummarySchema,
  FlatBlockSchema,
  MutationReceiptSchema,
  RichBlockSchema,
  RichDocumentSchema,
} from '../documents/resource-schemas.ts';
import { ProposalRequestSchema, ProposalSubmissionResultSchema } from '../knowledge/proposal-schema.ts';
import { boundedPattern, maxArray } from '../schema-builders.ts';
import {
  ApiErrorSchema,
  ClientRequestIdSchema,
  FieldErrorSchema,
  Href,
  DocumentRefSchema,
  JobIdSchema,
  ReceiptRefSchema,
  RequestIdSchema,
  RequiredActionSchema,
  ScopeSchema,
  Sha256Schema,
  SpaceRefSchema,
  TimestampSchema,
} from '../values.ts';

// The knowledge schemas live in src/knowledge; re-exported here for the envelopes and components.
export { PublicArtifactRefSchema, PublicArtifactSchema, SearchRequestSchema };

// ---------------------------------------------------------------------------------------------
// Envelopes

export const MetaSchema = v.pipe(
  v.object({
    apiVersion: v.literal('1'),
    requestId: RequestIdSchema,
    clientRequestId: v.optional(ClientRequestIdSchema),
  }),
  v.description('Response metadata. requestId equals the X-Request-Id response header.'),
);

export const LinkSchema = v.object({
  href: v.pipe(v.string(), v.maxLength(2048)),
  rel: boundedPattern(1, 64, /^[a-z]+(-[a-z]+)*$/, '1-64 characters: lowercase words joined by hyphens, starting with a letter.'),
});

export const IdempotencyReceiptSchema = v.pipe(
  v.object({
    idempotency: v.picklist(['created', 'replayed']),
    receiptRef: ReceiptRefSchema,
    v: v.literal(1),
  }),
  v.description('How the write was applied: created on first application, replayed on an exact repeat.'),
);

/** The success envelope around `data`. */
export function envelope<T extends v.GenericSchema>(data: T, description: string) {
  return v.pipe(
    v.object({
      data,
      meta: MetaSchema,
      links: v.optional(maxArray(LinkSchema, 16)),
      receipt: v.optional(IdempotencyReceiptSchema),
    }),
    v.description(description),
  );
}

export const ErrorEnvelopeSchema = v.pipe(
  v.object({ error: ApiErrorSchema, meta: MetaSchema }),
  v.description('Every error answer.'),
);


// ---------------------------------------------------------------------------------------------
// Public artifacts, search, reviews, library

export const OpaqueObjectSchema = v.pipe(v.object({}), v.description('A body the contract does not show.'));

/** The OpenAPI 3.1 document served at /openapi.json (not an envelope: the document itself). */
export const OpenApiDocumentSchema = v.pipe(
  v.object({
    openapi: v.pipe(v.string(), v.regex(/^3\.1\.\d+$/)),
    info: v.object({ title: v.string(), version: v.string() }),
    paths: v.pipe(v.object({}), v.description('Path items by path template.')),
    components: v.pipe(v.object({}), v.description('Schemas, headers, responses and security schemes.')),
  }),
  v.description('An OpenAPI 3.1 document.'),
);

// ---------------------------------------------------------------------------------------------
// Named envelopes (one component each)

export const PrincipalEnvelopeSchema = envelope(PrincipalSchema, 'The principal of the bearer token.');
export const DocumentEnvelopeSchema = envelope(DocumentSchema, 'A document in the rich-json representation.');
export const DocumentPageEnvelopeSchema = envelope(DocumentPageSchema, 'A page of document summaries, newest updatedAt first.');
export const BlocksEnvelopeSchema = envelope(BlocksRepresentationSchema, 'A document in the blocks representation.');
export const DocumentMutationEnvelopeSchema = envelope(
  DocumentMutationResultSchema,
  'The mutated document and its receipt; `receipt` (outer) tells created or replayed.',
);
/**
 * The research job as the API answers it: the domain's job, with the staged report's export links
 * (`jsonHref`, `markdownHref`: the report operation, rich-json and markdown), which the edge renders.
 */
export const ResearchJobWireSchema = v.object({
  ...ResearchJobSchema.entries,
  artifacts: v.object({
    ...JobArtifactsSchema.entries,
    report: v.nullable(v.object({ ...JobArtifactsSchema.entries.report.wrapped.entries, jsonHref: Href, markdownHref: Href })),
  }),
});
export type ResearchJobWire = v.InferOutput<typeof ResearchJobWireSchema>;
export const ResearchJobEnvelopeSchema = envelope(ResearchJobWireSchema, 'A research job.');
export const ResearchJobPageEnvelopeSchema = envelope(ResearchJobPageSchema, 'A page of research-job summaries.');
export const ResearchJobEventPageEnvelopeSchema = envelope(ResearchJobEventPageSchema, 'A bounded page of at most 256 events.');
export const ReportEnvelopeSchema = envelope(DocumentSchema, 'The report document (format=rich-json): a Document, at most 760,000 bytes.');
export const ProposalSubmissionEnvelopeSchema = envelope(ProposalSubmissionResultSchema, 'The submitted proposal.');
export const PublicArtifactEnvelopeSchema = envelope(PublicArtifactSchema, 'A released public projection at an exact revision.');
export const SearchPageEnvelopeSchema = envelope(SearchPageSchema, 'Search results, best match first.');
export const ReviewEnvelopeSchema = envelope(ReviewSchema, 'Review metadata.');
export const LibraryResultEnvelopeSchema = envelope(LibraryResultSchema, 'The result of a library command: the item(s), the reader page or the prepared upload, by command type.');
export const ReceivedUploadEnvelopeSchema = envelope(ReceivedUploadSchema, 'What the upload received: its size and SHA-256.');
export const OpaqueEnvelopeSchema = envelope(OpaqueObjectSchema, 'A success envelope whose data the contract does not show.');

/**
 * Every named schema the OpenAPI document publishes under components.schemas, by component name.
 * The same schema objects referenced from several places become `$ref`s.
 */
export const responseComponents = {
  RequestId: RequestIdSchema,
  Timestamp: TimestampSchema,
  Sha256: Sha256Schema,
  DocumentRef: DocumentRefSchema,
  SpaceRef: SpaceRefSchema,
  JobId: JobIdSchema,
  Scope: ScopeSchema,
  RequiredAction: RequiredActionSchema,
  Meta: MetaSchema,
  Link: LinkSchema,
  IdempotencyReceipt: IdempotencyReceiptSchema,
  FieldError: FieldErrorSchema,
  ApiError: ApiErrorSchema,
  ErrorEnvelope: ErrorEnvelopeSchema,
  Principal: PrincipalSchema,
  RichBlock: RichBlockSchema,
  RichDocument: RichDocumentSchema,
  Document: DocumentSchema,
  DocumentSummary: DocumentSummarySchema,
  DocumentPage: DocumentPageSchema,
  FlatBlock: FlatBlockSchema,
  BlocksRepresentation: BlocksRepresentationSchema,
  MutationReceipt: MutationReceiptSchema,
  DocumentMutationResult: DocumentMutationResultSchema,
  ResearchReportSpec: ResearchReportSpecSchema,
  AcceptanceContract: AcceptanceContractSchema,
  PublicArtifactRef: PublicArtifactRefSchema,
  ResearchJob: ResearchJobWireSchema,
  ResearchJobSummary: ResearchJobSummarySchema,
  ResearchJobPage: ResearchJobPageSchema,
  ResearchJobEvent: ResearchJobEventSchema,
  ResearchJobEventPage: ResearchJobEventPageSchema,
  CancellationRequest: CancellationRequestSchema,
  ProposalRequest: ProposalRequestSchema,
  ProposalSubmissionResult: ProposalSubmissionResultSchema,
  PublicArtifact: PublicArtifactSchema,
  SearchRequest: SearchRequestSchema,
  SearchPage: SearchPageSchema,
  Review: ReviewSchema,
  LibraryCommand: LibraryCommandSchema,
  PrincipalEnvelope: PrincipalEnvelopeSchema,
  DocumentEnvelope: DocumentEnvelopeSchema,
  DocumentPageEnvelope: DocumentPageEnvelopeSchema,
  BlocksEnvelope: BlocksEnvelopeSchema,
  DocumentMutationEnvelope: DocumentMutationEnvelopeSchema,
  ResearchJobEnvelope: ResearchJobEnvelopeSchema,
  ResearchJobPageEnvelope: ResearchJobPageEnvelopeSchema,
  ResearchJobEventPageEnvelope: ResearchJobEventPageEnvelopeSchema,
  ReportEnvelope: ReportEnvelopeSchema,
  ProposalSubmissionEnvelope: ProposalSubmissionEnvelopeSchema,
  PublicArtifactEnvelope: PublicArtifactEnvelopeSchema,
  SearchPageEnvelope: SearchPageEnvelopeSchema,
  ReviewEnvelope: ReviewEnvelopeSchema,
  OpaqueEnvelope: OpaqueEnvelopeSchema,
  LibraryItem: LibraryItemSchema,
  LibraryResult: LibraryResultSchema,
  LibraryResultEnvelope: LibraryResultEnvelopeSchema,
  ReceivedUploadEnvelope: ReceivedUploadEnvelopeSchema,
  OpenApiDocument: OpenApiDocumentSchema,
} as const;
