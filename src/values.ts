/**
 * The contract's identifier and value formats as valibot schemas (published in /openapi.json and used
 * by every domain that names them). The patterns themselves live in `ids.ts`.
 * @module
 */
import * as v from 'valibot';
import { SCOPES } from './auth/scopes.ts';
import { ErrorCode } from './errors.ts';
import { Patterns } from './ids.ts';
import { boundedPattern, int, maxArray, pattern, str } from './schema-builders.ts';

export const RequestIdSchema = pattern(Patterns.requestId, 'Server-minted request id (16-128 characters).');
export const ClientRequestIdSchema = pattern(
  Patterns.clientRequestId,
  'The X-Request-Id the client sent, echoed (16-128 letters, digits, underscores, hyphens).',
);
export const TimestampSchema = pattern(
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
  'ISO 8601 UTC timestamp with millisecond precision: YYYY-MM-DDTHH:MM:SS.mmmZ.',
);
export const Sha256Schema = pattern(Patterns.sha256, '64 lowercase hex characters.');
export const DocumentRefSchema = pattern(Patterns.documentRef, 'A documentRef: sdoc_ and 48 lowercase hex characters.');
export const SpaceRefSchema = pattern(Patterns.spaceRef, 'A spaceRef: ksp_ and 48 lowercase hex characters.');
export const OperationRefSchema = pattern(Patterns.operationRef, 'An operationRef: docop_ and 48 lowercase hex characters.');
export const CredentialRefSchema = pattern(Patterns.credentialRef, 'A credentialRef: scred_ and 24 lowercase hex characters.');
export const JobIdSchema = pattern(Patterns.jobId, 'A research job id: kjob_ and 48 lowercase hex characters.');
export const ProposalRefSchema = pattern(Patterns.proposalRef, 'A proposalRef: kprp_ and 48 lowercase hex characters.');
export const ReviewRefSchema = pattern(Patterns.reviewRef, 'A reviewRef: krvw_ and 48 lowercase hex characters.');
export const ReceiptRefSchema = pattern(Patterns.receiptRef, 'An idempotency receipt ref (16-160 characters).');
export const ResponseBlockIdSchema = pattern(Patterns.blockId, 'A stable block id (1-128 characters).');
export const LanguageSchema = boundedPattern(
  2,
  64,
  /^(und|[a-z]{2,3}(-[a-z0-9]{2,8})*)$/,
  'und, or a lowercase BCP 47 tag: 2-3 letters then optional subtags of 2-8 alphanumerics (2-64 characters).',
);
/** A link target: 1-2048 characters. */
export const Href = str(1, 2048);
/** A decimal sequence number as a string. */
export const DecimalString = pattern(/^(0|[1-9][0-9]*)$/, 'A decimal sequence number as a string.');

export const ScopeSchema = v.picklist(SCOPES);

export const REQUIRED_ACTIONS = [
  'authenticate',
  'choose-new-idempotency-key',
  'refresh-resource',
  'retry-job',
  'review-in-browser',
  'submit-through-research-job',
] as const;
export const RequiredActionSchema = v.picklist(REQUIRED_ACTIONS);

/** One entry of `error.fieldErrors`. */
export const FieldErrorSchema = v.object({
  field: boundedPattern(1, 256, /^(\$|[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*)$/, '$ or dot-separated names of letters, digits, underscores (1-256 characters).'),
  message: v.pipe(v.string(), v.maxLength(1024)),
});

/** The `error` of the error envelope (also a job's terminal error). */
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
