/**
 * Wire schemas of the operator's credential, activation and sign-in-link requests, and the limits of
 * credential fields: pure valibot, shared by the contract and the credentials service.
 * @module
 */
import * as v from 'valibot';
import { Patterns } from '../ids.ts';
import { SCOPES } from './scopes.ts';

/** Limits of credential fields. */
export const CredentialLimits = {
  labelMax: 80,
  budgetMin: 1,
  budgetMax: 10_000,
  budgetDefault: 10_000,
  expiresInDaysMin: 1,
  expiresInDaysMax: 90,
  expiresInDaysDefault: 90,
  accountIdMax: 64,
} as const;

/** An account id: 1-64 characters, letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Body of POST /operator/v1/credentials. */
export const CredentialRequestSchema = v.strictObject({
  account: v.optional(
    v.pipe(v.string(), v.regex(ACCOUNT_ID_PATTERN, 'must be 1-64 letters, digits, dots, underscores or hyphens, starting with a letter or digit')),
  ),
  label: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(CredentialLimits.labelMax, 'must be at most 80 characters')),
  scopes: v.pipe(v.array(v.picklist(SCOPES, `must be one of ${SCOPES.join(', ')}`)), v.minLength(1, 'must list at least one scope'), v.maxLength(SCOPES.length, 'lists at most 12 scopes')),
  documentRef: v.optional(v.nullable(v.pipe(v.string(), v.regex(Patterns.documentRef, 'must be a documentRef (sdoc_ and 48 lowercase hex)')))),
  requestBudget: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(CredentialLimits.budgetMax, `must be at most ${CredentialLimits.budgetMax}`))),
  expiresInDays: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(CredentialLimits.expiresInDaysMax, `must be at most ${CredentialLimits.expiresInDaysMax}`))),
});

/** Body of POST /operator/v1/sign-in-links (may be left out): the account the link signs into, default the local person's. */
export const SignInLinkRequestSchema = v.strictObject({
  account: v.optional(
    v.pipe(v.string(), v.regex(ACCOUNT_ID_PATTERN, 'must be 1-64 letters, digits, dots, underscores or hyphens, starting with a letter or digit')),
  ),
});

/** Body of POST /operator/v1/activation. */
export const ActivationRequestSchema = v.strictObject({
  search: v.optional(v.boolean()),
  reviews: v.optional(v.boolean()),
  proposals: v.optional(v.boolean()),
});

