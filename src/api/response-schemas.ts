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
import { Patterns } from '../ids.ts';
import { BLOCK_TYPES } from '../blocks/model.ts';
import { ErrorCode } from '../errors.ts';
import { SCOPES } from '../auth/scopes.ts';
import { ProposalRequestSchema, ProposalSubmissionResultSchema } from '../knowledge/proposal-schema.ts';
import {
  PublicArtifactRefSchema,
  PublicArtifactSchema,
  ReviewSchema,
  SearchPageSchema,
  SearchRequestSchema,
} from '../knowledge/public-schemas.ts';
import { boundedPattern, int, MAX_SAFE, maxArray, pattern, rangeArray, str } from '../schema-kit.ts';
import {
  ClientRequestIdSchema,
  CredentialRefSchema,
  DecimalString,
  DocumentRefSchema,
  Href,
  JobIdSchema,
  LanguageSchema,
  OperationRefSchema,
  ProposalRefSchema,
  ReceiptRefSchema,
  RequestIdSchema,
  RequiredActionSchema,
  ResponseBlockIdSchema,
  ReviewRefSchema,
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

export const FieldErrorSchema = v.object({
  field: boundedPattern(1, 256, /^(\$|[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*)$/, '$ or dot-separated names of letters, digits, underscores (1-256 characters).'),
  message: v.pipe(v.string(), v.maxLength(1024)),
});

export const ApiErrorSchema = v.object({
  code: v.pipe(
    v.picklist(Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]),
    v.description(
      'The contract enum, plus REPORT_NOT_READY, METHOD_NOT_ALLOWED and FEATURE_RETIRED which the service also emits.',
    ),
  ),
  message: v.pipe(v.string(), v.maxLength(2048)),
  retryable: v.boolean(),
  fieldErrors: v.optional(maxArray(FieldErrorSchema, 32)),
  requiredAction: v.optional(RequiredActionSchema),
  retryAfterMs: v.optional(int(0, 86_400_000)),
});

export const ErrorEnvelopeSchema = v.pipe(
  v.object({ error: ApiErrorSchema, meta: MetaSchema }),
  v.description('Every error answer.'),
);

// ---------------------------------------------------------------------------------------------
// Principal

export const PrincipalSchema = v.object({
  v: v.literal(1),
  credentialRef: CredentialRefSchema,
  displayPrefix: pattern(Patterns.displayPrefix, 'svc_agent_v1_scred_ + 8 lowercase hex + U+2026 (28 characters).'),
  label: v.pipe(v.string(), v.maxLength(80)),
  scopes: v.pipe(rangeArray(ScopeSchema, 1, SCOPES.length), v.description('The scopes the credential holds.')),
  requestBudget: int(1, 10_000),
  remainingBudget: int(0, 10_000),
  expiresAt: v.nullable(TimestampSchema),
  spaceRef: v.optional(SpaceRefSchema),
  documentRef: v.optional(v.pipe(DocumentRefSchema, v.description('Set for a document-bound credential.'))),
  browserHref: v.optional(v.pipe(Href, v.description('Set for a document-bound credential.'))),
  budgets: v.optional(v.pipe(v.object({}), v.description('Per-minute, daily and research-run budgets.'))),
});

// ---------------------------------------------------------------------------------------------
// Documents

/**
 * One block of the canonical editor JSON, shaped as the BlockNote editor shapes its blocks.
 * @remarks Recursive through `children`; converted with the `definitions` option.
 */
export const RichBlockSchema: v.GenericSchema = v.object({
  id: ResponseBlockIdSchema,
  type: v.string(),
  props: v.record(v.string(), v.unknown()),
  content: v.optional(v.unknown()),
  children: v.array(v.lazy(() => RichBlockSchema)),
});

export const RichDocumentSchema = v.pipe(
  v.object({ type: v.literal('blocks'), blocks: v.array(RichBlockSchema) }),
  v.description('The canonical editor JSON (BlockNote blocks). contentSha256 is the SHA-256 of its compact JSON.'),
);

export const DocumentSchema = v.object({
  v: v.literal(1),
  documentRef: DocumentRefSchema,
  spaceRef: SpaceRefSchema,
  title: str(1, 240),
  version: int(1, MAX_SAFE),
  format: v.literal('service-rich-document'),
  formatGeneration: v.literal(1),
  contentSha256: Sha256Schema,
  browserHref: Href,
  document: RichDocumentSchema,
});

export const DocumentSummarySchema = v.object({
  v: v.literal(1),
  documentRef: DocumentRefSchema,
  spaceRef: SpaceRefSchema,
  title: str(1, 240),
  version: int(1, MAX_SAFE),
  contentSha256: Sha256Schema,
  blockCount: v.optional(int(0, 10_000)),
  browserHref: Href,
  createdAt: v.optional(TimestampSchema),
  updatedAt: TimestampSchema,
});

/** A list page: decisions.md fixes `{ items, nextCursor }`. */
export function pageOf<T extends v.GenericSchema>(item: T, max: number) {
  return v.object({
    items: maxArray(item, max),
    nextCursor: v.pipe(v.nullable(v.string()), v.description('Send back unchanged as cursor for the next page; null on the last page.')),
  });
}

export const DocumentPageSchema = pageOf(DocumentSummarySchema, 50);

export const FlatBlockSchema = v.object({
  id: ResponseBlockIdSchema,
  parentBlockId: v.nullable(ResponseBlockIdSchema),
  index: int(0, 10_000),
  depth: v.optional(int(0, 10_000)),
  type: v.picklist(BLOCK_TYPES),
  markdown: v.optional(v.string()),
  level: v.optional(v.picklist([1, 2, 3])),
  checked: v.optional(v.boolean()),
  code: v.optional(v.string()),
  language: v.optional(v.string()),
  rows: v.optional(v.array(v.array(v.string()))),
  citations: v.optional(v.pipe(v.array(v.string()), v.description('Exact https URLs the block cites.'))),
});

export const BlocksRepresentationSchema = v.pipe(
  v.object({
    v: v.optional(v.literal(1)),
    documentRef: DocumentRefSchema,
    version: int(1, MAX_SAFE),
    blocks: v.pipe(maxArray(FlatBlockSchema, 10_000), v.description('Every authored block in document order.')),
  }),
  v.description('format=blocks: a flat list of authored blocks, each with its stable id, parent, index and own Markdown.'),
);

export const MutationReceiptSchema = v.object({
  v: v.literal(1),
  documentRef: DocumentRefSchema,
  operationRef: OperationRefSchema,
  baseVersion: int(1, MAX_SAFE - 1),
  resultingVersion: int(2, MAX_SAFE),
  contentSha256: Sha256Schema,
  affectedBlockIds: rangeArray(ResponseBlockIdSchema, 1, 256),
});

export const DocumentMutationResultSchema = v.object({
  v: v.literal(1),
  document: DocumentSchema,
  receipt: MutationReceiptSchema,
});

// ---------------------------------------------------------------------------------------------
// Research jobs

export const JOB_STATES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'] as const;
export const JOB_PHASES = [
  'queued',
  'planning',
  'retrieving',
  'extracting',
  'proposing',
  'synthesizing',
  'requesting-review',
  'complete',
  'cancelled',
] as const;

const ProgressSchema = v.object({ percent: int(0, 100), summary: v.pipe(v.string(), v.maxLength(1024)) });
const CoverageIndex = int(0, 15);

const AcceptanceContractSchema = v.strictObject({
  revision: v.literal(3),
  v: v.literal(1),
  asOf: v.optional(
    v.strictObject({ date: pattern(/^\d{4}-\d{2}-\d{2}$/, 'YYYY-MM-DD'), coverageRequirementIndex: CoverageIndex, v: v.literal(1) }),
  ),
  confidence: v.optional(
    v.strictObject({ scale: v.literal('zero-to-one'), coverageRequirementIndex: CoverageIndex, v: v.literal(1) }),
  ),
  coverageRequirements: rangeArray(
    v.strictObject({
      claimClass: v.picklist([
        'comparison',
        'counterevidence',
        'definition',
        'direct-answer',
        'limitation',
        'mechanism',
        'quantitative',
        'temporal-status',
      ]),
      requirement: str(12, 500),
      providerRecovery: v.strictObject({ anchor: str(1, 500), requiresConfidencePoint: v.boolean(), v: v.literal(1) }),
    }),
    1,
    16,
  ),
  termGroups: v.optional(
    rangeArray(
      v.strictObject({
        key: pattern(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/, 'Lowercase hyphenated key, up to 80 characters.'),
        coverageRequirementIndex: CoverageIndex,
        memberMode: v.literal('all'),
        members: rangeArray(v.strictObject({ aliases: rangeArray(v.string(), 1, 8), v: v.literal(1) }), 1, 8),
        v: v.literal(1),
      }),
      1,
      16,
    ),
  ),
  ratioPercentChecks: v.optional(
    maxArray(
      v.strictObject({
        coverageRequirementIndex: CoverageIndex,
        numerator: pattern(/^[0-9]{1,18}$/, 'Non-negative integer string, up to 18 digits.'),
        denominator: pattern(/^[0-9]{1,18}$/, 'Non-negative integer string, up to 18 digits.'),
        percentHundredths: int(0, 10_000),
        scope: v.literal('same-authored-block'),
        v: v.literal(1),
      }),
      8,
    ),
  ),
  requestedVisibleBodyWords: v.optional(v.strictObject({ minimum: int(1, 20_000), maximum: int(1, 20_000) })),
  requiredSources: v.optional(
    maxArray(
      v.strictObject({
        id: v.string(),
        familyKey: v.string(),
        locator: v.pipe(v.string(), v.maxLength(2048)),
        version: v.pipe(v.string(), v.maxLength(160)),
        sourceRole: v.picklist([
          'first-party-technical',
          'primary-peer-reviewed',
          'primary-preprint',
          'primary-supplement',
          'secondary',
        ]),
        coverageRequirementIndices: rangeArray(CoverageIndex, 1, 16),
        v: v.literal(1),
      }),
      16,
    ),
  ),
  findingChecks: v.optional(v.pipe(v.object({}), v.description('Application-only finding checks.'))),
});

/** The request spec of a research job (ResearchReportSpec), as stored in `job.spec`. */
export const ResearchReportSpecSchema = v.strictObject({
  v: v.literal(1),
  question: v.pipe(v.string(), v.maxLength(16_384)),
  profile: v.picklist(['focused', 'deep']),
  visibilityIntent: v.picklist(['private', 'request-publication']),
  deliverable: v.strictObject({
    kind: v.literal('report'),
    form: v.picklist(['evidence-review', 'literature-review', 'question-answer']),
    language: LanguageSchema,
  }),
  spaceRef: v.variant('kind', [
    v.strictObject({ kind: v.literal('new-document'), title: v.pipe(v.string(), v.maxLength(1024)) }),
    v.strictObject({ kind: v.literal('document'), documentRef: DocumentRefSchema }),
  ]),
  acceptance: v.optional(
    v.pipe(AcceptanceContractSchema, v.description('Optional acceptance contract; its canonical JSON is at most 32768 UTF-8 bytes.')),
  ),
});

const DEFECT_CODES = [
  'acceptance-finding-witness-deficit',
  'duplicate-decision-key',
  'invalid-decision',
  'missing-decision',
  'quantitative-checks-invalid',
  'unknown-decision-key',
  'unselected-source-handle',
  'writer-evidence-reference-deficit',
  'writer-handoff-infeasible',
] as const;

const ResearchAuditDiagnosticSchema = v.object({
  v: v.picklist([1, 2]),
  acceptedDecisionCount: int(0, 24),
  admittedSourceCount: int(0, 256),
  attempt: v.picklist([0, 1, 2]),
  coverageState: v.picklist(['absent', 'finalized', 'open']),
  defectCount: int(0, 1296),
  repairKeyCount: int(0, 24),
  selectedSourceCount: int(0, 16),
  defectCodes: v.optional(maxArray(v.picklist(DEFECT_CODES), 9)),
  witnessReasonHistogram: v.optional(maxArray(v.object({ reason: v.string(), count: int(1, 24) }), 22)),
});

export const ResearchJobSchema = v.object({
  v: v.literal(1),
  jobId: JobIdSchema,
  state: v.picklist(JOB_STATES),
  phase: v.picklist(JOB_PHASES),
  progress: ProgressSchema,
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  error: v.pipe(v.nullable(ApiErrorSchema), v.description('The terminal error (code JOB_FAILED) or null.')),
  requiredAction: v.nullable(RequiredActionSchema),
  missingEvidence: maxArray(v.pipe(v.string(), v.maxLength(4096)), 64),
  artifacts: v.object({
    document: v.nullable(v.object({ documentRef: DocumentRefSchema, href: Href })),
    inquiry: v.nullable(v.object({ inquiryId: pattern(Patterns.inquiryId, 'kinq_ + 24 [a-z0-9]') })),
    proposal: v.nullable(v.object({ proposalRef: ProposalRefSchema })),
    review: v.nullable(v.object({ reviewRef: ReviewRefSchema, browserHref: Href })),
    report: v.nullable(v.object({ documentRef: DocumentRefSchema, jsonHref: Href, markdownHref: Href })),
    publicArtifacts: maxArray(PublicArtifactRefSchema, 256),
  }),
  spec: v.pipe(v.object({}), v.description('The ResearchReportSpec the job was started with.')),
  researchAuditDiagnostic: v.optional(ResearchAuditDiagnosticSchema),
});

export const ResearchJobSummarySchema = v.object({
  v: v.literal(1),
  jobId: JobIdSchema,
  state: v.picklist(JOB_STATES),
  phase: v.picklist(JOB_PHASES),
  progress: v.optional(ProgressSchema),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export const ResearchJobPageSchema = pageOf(ResearchJobSummarySchema, 50);

export const JOB_EVENT_KINDS = [
  'job.created',
  'job.progress',
  'job.phase',
  'job.waiting',
  'job.artifact',
  'job.succeeded',
  'job.failed',
  'job.cancelled',
] as const;

export const ResearchJobEventSchema = v.pipe(
  v.object({
    v: v.literal(1),
    eventId: DecimalString,
    jobId: JobIdSchema,
    kind: v.picklist(JOB_EVENT_KINDS),
    state: v.picklist(JOB_STATES),
    phase: v.picklist(JOB_PHASES),
    progress: ProgressSchema,
    createdAt: TimestampSchema,
  }),
  v.description('One event of a job. job.succeeded, job.failed and job.cancelled are terminal.'),
);
export const ResearchJobEventPageSchema = v.object({
  items: maxArray(ResearchJobEventSchema, 256),
  nextCursor: v.pipe(v.nullable(DecimalString), v.description('The eventId to send as `after` for the next page.')),
});

export const CancellationRequestSchema = v.pipe(v.strictObject({ v: v.literal(1) }), v.description('The fixed cancellation body.'));

export const ReportDocumentSchema = v.pipe(
  v.object({}),
  v.description('format=rich-json: the whole report document (fields not shown by the contract); at most 760,000 bytes.'),
);

// ---------------------------------------------------------------------------------------------
// Public artifacts, search, reviews, library

export const OpaqueObjectSchema = v.pipe(v.object({}), v.description('A body the contract does not show.'));

const IdempotencyKeyField = v.pipe(v.string(), v.minLength(16), v.description('At least 16 characters; a retry with the same key returns the same item.'));

/** The library command body, discriminated by `type`. Fields the contract does not show are left open. */
export const LibraryCommandSchema = v.variant('type', [
  v.looseObject({ type: v.literal('save-link'), url: v.pipe(v.string(), v.maxLength(2048)), idempotencyKey: IdempotencyKeyField }),
  v.looseObject({ type: v.literal('list') }),
  v.looseObject({ type: v.literal('get') }),
  v.looseObject({ type: v.literal('reader-page') }),
  v.looseObject({
    type: v.literal('highlight'),
    sourceId: v.string(),
    selections: v.array(
      v.looseObject({ exact: v.string(), start: int(0, MAX_SAFE), end: int(0, MAX_SAFE), prefix: v.string(), suffix: v.string() }),
    ),
    idempotencyKey: IdempotencyKeyField,
  }),
  v.looseObject({ type: v.literal('create-note') }),
  v.looseObject({ type: v.literal('set-reading-state'), expectedRevision: v.unknown(), read: v.boolean(), archived: v.boolean() }),
  v.looseObject({ type: v.literal('prepare-upload') }),
  v.looseObject({ type: v.literal('finish-upload') }),
  v.looseObject({ type: v.literal('prepare-import') }),
]);

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
export const ResearchJobEnvelopeSchema = envelope(ResearchJobSchema, 'A research job.');
export const ResearchJobPageEnvelopeSchema = envelope(ResearchJobPageSchema, 'A page of research-job summaries.');
export const ResearchJobEventPageEnvelopeSchema = envelope(ResearchJobEventPageSchema, 'A bounded page of at most 256 events.');
export const ReportEnvelopeSchema = envelope(ReportDocumentSchema, 'The report document.');
export const ProposalSubmissionEnvelopeSchema = envelope(ProposalSubmissionResultSchema, 'The submitted proposal.');
export const PublicArtifactEnvelopeSchema = envelope(PublicArtifactSchema, 'A released public projection at an exact revision.');
export const SearchPageEnvelopeSchema = envelope(SearchPageSchema, 'Search results, best match first.');
export const ReviewEnvelopeSchema = envelope(ReviewSchema, 'Review metadata.');
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
  ResearchJob: ResearchJobSchema,
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
} as const;
