/**
 * The Principal (data of GET /auth) as a valibot schema; the credential service's `Principal` type is
 * derived from it.
 * @module
 */
import * as v from 'valibot';
import { Patterns } from '../ids.ts';
import { int, MAX_SAFE, pattern, rangeArray } from '../schema-builders.ts';
import { CredentialRefSchema, DocumentRefSchema, Href, ScopeSchema, SpaceRefSchema, TimestampSchema } from '../values.ts';
import { SCOPES } from './scopes.ts';

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
  budgets: v.optional(
    v.pipe(
      v.object({
        request: v.object({ limit: int(1, 10_000), remaining: int(0, 10_000), windowMs: int(1, MAX_SAFE), resetsAt: TimestampSchema }),
        researchRuns: v.nullable(v.object({ limit: int(0, MAX_SAFE), remaining: int(0, MAX_SAFE) })),
      }),
      v.description(
        'request: the request budget window (limit, what remains, the window length and when it resets); researchRuns: the research runs the account may start (limit, remaining), or null when unknown.',
      ),
    ),
  ),
});

/** The principal of a credential, as GET /auth shows it. */
export type Principal = v.InferOutput<typeof PrincipalSchema>;
