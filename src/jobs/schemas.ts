/**
 * valibot schemas of the research-job resources: the job, its events, and the pages of both. The
 * TypeScript types are inferred from them, so each fact is written once. The request spec lives in
 * `spec-schema.ts` and is re-exported here.
 * @module
 */
import * as v from 'valibot';
import { PublicArtifactRefSchema } from '../knowledge/public-schemas.ts';
import { int, maxArray, pageOf } from '../schema-builders.ts';
import { ApiErrorSchema, Href, RequiredActionSchema, TimestampSchema } from '../values.ts';
import { Patterns } from '../ids.ts';
import { JOB_EVENT_KINDS, JOB_PHASES, JOB_STATES } from './states.ts';
import { ResearchReportSpecSchema } from './spec-schema.ts';

export * from './spec-schema.ts';

/** Report export formats. */
export const REPORT_FORMATS = ['rich-json', 'markdown'] as const;

const id = (re: RegExp) => v.pipe(v.string(), v.regex(re));

/** The contract's ApiError inside a job: the terminal error (code JOB_FAILED). */
export const JobErrorSchema = ApiErrorSchema;
export type JobError = v.InferOutput<typeof JobErrorSchema>;

/** `progress`: percent 0-100 and a summary of at most 1024 characters. */
export const ProgressSchema = v.object({ percent: int(0, 100), summary: v.pipe(v.string(), v.maxLength(1024)) });
export type Progress = v.InferOutput<typeof ProgressSchema>;

export { PublicArtifactRefSchema, type PublicArtifactRef } from '../knowledge/public-schemas.ts';

/** What a job produced so far. */
export const JobArtifactsSchema = v.object({
  document: v.nullable(v.object({ documentRef: id(Patterns.documentRef), href: Href })),
  inquiry: v.nullable(v.object({ inquiryId: id(Patterns.inquiryId) })),
  proposal: v.nullable(v.object({ proposalRef: id(Patterns.proposalRef) })),
  review: v.nullable(v.object({ reviewRef: id(Patterns.reviewRef), browserHref: Href })),
  /** The staged report, by its document (the API answers it with its export links, `jsonHref` and `markdownHref`). */
  report: v.nullable(v.object({ documentRef: id(Patterns.documentRef) })),
  publicArtifacts: maxArray(PublicArtifactRefSchema, 256),
});
export type JobArtifacts = v.InferOutput<typeof JobArtifactsSchema>;

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

const AuditV1 = {
  acceptedDecisionCount: int(0, 24),
  admittedSourceCount: int(0, 256),
  attempt: v.picklist([0, 1, 2]),
  coverageState: v.picklist(['absent', 'finalized', 'open']),
  defectCount: int(0, 1296),
  repairKeyCount: int(0, 24),
  selectedSourceCount: int(0, 16),
};
/** The optional research audit diagnostic, v1 or v2 (v2 adds defect codes and a witness histogram). */
export const ResearchAuditDiagnosticSchema = v.variant('v', [
  v.object({ v: v.literal(1), ...AuditV1 }),
  v.object({
    v: v.literal(2),
    ...AuditV1,
    defectCodes: maxArray(v.picklist(DEFECT_CODES), 9),
    witnessReasonHistogram: maxArray(v.object({ reason: v.string(), count: int(1, 24) }), 22),
  }),
]);
export type ResearchAuditDiagnostic = v.InferOutput<typeof ResearchAuditDiagnosticSchema>;

/** The research job as the job read returns it. */
export const ResearchJobSchema = v.object({
  v: v.literal(1),
  jobId: id(Patterns.jobId),
  state: v.picklist(JOB_STATES as [(typeof JOB_STATES)[number], ...(typeof JOB_STATES)[number][]]),
  phase: v.picklist(JOB_PHASES as [(typeof JOB_PHASES)[number], ...(typeof JOB_PHASES)[number][]]),
  progress: ProgressSchema,
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  error: v.nullable(JobErrorSchema),
  requiredAction: v.nullable(RequiredActionSchema),
  missingEvidence: maxArray(v.pipe(v.string(), v.maxLength(4096)), 64),
  artifacts: JobArtifactsSchema,
  spec: ResearchReportSpecSchema,
  researchAuditDiagnostic: v.optional(ResearchAuditDiagnosticSchema),
});
export type ResearchJob = v.InferOutput<typeof ResearchJobSchema>;

/** One item of the job list: the job without spec and artifacts' bulk. */
export const ResearchJobSummarySchema = v.object({
  v: v.literal(1),
  jobId: id(Patterns.jobId),
  state: ResearchJobSchema.entries.state,
  phase: ResearchJobSchema.entries.phase,
  progress: ProgressSchema,
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type ResearchJobSummary = v.InferOutput<typeof ResearchJobSummarySchema>;

/** A page of the job list (`{items, nextCursor}`). */
export const ResearchJobPageSchema = pageOf(ResearchJobSummarySchema, 50);
export type ResearchJobPage = v.InferOutput<typeof ResearchJobPageSchema>;

/** One event of a job. job.succeeded, job.failed and job.cancelled are terminal. */
export const ResearchJobEventSchema = v.object({
  v: v.literal(1),
  eventId: v.pipe(v.string(), v.regex(/^[1-9][0-9]*$/)),
  jobId: id(Patterns.jobId),
  kind: v.picklist(JOB_EVENT_KINDS),
  state: ResearchJobSchema.entries.state,
  phase: ResearchJobSchema.entries.phase,
  progress: ProgressSchema,
  createdAt: TimestampSchema,
});
export type ResearchJobEvent = v.InferOutput<typeof ResearchJobEventSchema>;

/**
 * A bounded page of events. `nextCursor` is the `after` to send next: the last eventId returned (or
 * the cursor sent, when nothing new exists yet); null only when the job is terminal and this page
 * reaches its last event, so nothing will ever follow.
 */
export const ResearchJobEventPageSchema = v.object({
  items: maxArray(ResearchJobEventSchema, 256),
  nextCursor: v.nullable(v.pipe(v.string(), v.regex(/^(0|[1-9][0-9]*)$/))),
});
export type ResearchJobEventPage = v.InferOutput<typeof ResearchJobEventPageSchema>;

/** The fixed cancellation body: exactly `{"v":1}`. */
export const CancellationRequestSchema = v.strictObject({ v: v.literal(1) });
