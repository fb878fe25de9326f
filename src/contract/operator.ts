/**
 * The contract of the operator API under /operator/v1: create credentials and sign-in links, switch
 * activation.
 * Authenticated with `Authorization: Bearer <operatorKey>`, never charged, not in /openapi.json.
 * @module
 */
import * as v from 'valibot';
import { ActivationRequestSchema, CredentialRequestSchema, SignInLinkRequestSchema } from '../auth/credential-schema.ts';
import { TimestampSchema } from '../values.ts';
import { operation } from './define.ts';
import { OptionalIdempotencyKeyHeader } from './params.ts';
import { envelope, OpaqueEnvelopeSchema } from './response-schemas.ts';

/** A new sign-in link: the browser app's URL that signs in once, and until when. */
export const SignInLinkSchema = v.object({
  url: v.pipe(v.string(), v.description('Open once within 15 minutes to sign in to the browser app: `<origin>/sign-in/<secret>`.')),
  expiresAt: TimestampSchema,
});

/** POST /operator/v1/credentials: 201 with the token, shown this once. */
export const createCredential = operation({
  operationId: 'createCredential',
  method: 'POST',
  path: '/operator/v1/credentials',
  audience: 'operator',
  tag: 'operator',
  summary: 'Create a credential (operator)',
  description: 'Creates a bearer token for an account, shown this once.',
  auth: 'operator',
  charge: 'never',
  input: { headers: { idempotencyKey: OptionalIdempotencyKeyHeader }, body: { schema: CredentialRequestSchema, component: 'CredentialRequest' } },
  responses: {
    201: { description: 'The new credential and its token (an exact repeat under its Idempotency-Key: the same credential, receipt.idempotency replayed, token null: it is shown once).', json: OpaqueEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: bad body.' },
    409: { description: 'IDEMPOTENCY_CONFLICT: the key is bound to another request.' },
    404: { description: 'NOT_FOUND: the documentRef names no document of the account.' },
  },
});

/** POST /operator/v1/sign-in-links: 201 with a one-time link into the browser app. */
export const createSignInLink = operation({
  operationId: 'createSignInLink',
  method: 'POST',
  path: '/operator/v1/sign-in-links',
  audience: 'operator',
  tag: 'operator',
  summary: 'Create a sign-in link (operator)',
  description: "A one-time link (15 minutes) that signs a person into the browser app as `account` (default: the local person's account). The body may be left out.",
  auth: 'operator',
  charge: 'never',
  input: { body: { schema: SignInLinkRequestSchema, component: 'SignInLinkRequest', optional: true } },
  responses: {
    201: { description: 'The link and its expiry.', json: envelope(SignInLinkSchema, 'A new sign-in link.'), headers: ['Cache-Control'] },
    400: { description: 'INVALID_REQUEST: bad body (not an account id, an unknown field).' },
  },
});

/** POST /operator/v1/activation: change switches; 200 with the whole (effective) state. */
export const setActivation = operation({
  operationId: 'setActivation',
  method: 'POST',
  path: '/operator/v1/activation',
  audience: 'operator',
  tag: 'operator',
  summary: 'Switch surfaces on or off (operator)',
  description: 'Changes the given switches and answers the whole effective state.',
  auth: 'operator',
  charge: 'never',
  input: { body: { schema: ActivationRequestSchema, component: 'ActivationRequest' } },
  responses: { 200: { description: 'The whole activation state.', json: OpaqueEnvelopeSchema }, 400: { description: 'INVALID_REQUEST: bad body.' } },
});

/** GET /operator/v1/activation: the whole (effective) state. */
export const getActivation = operation({
  operationId: 'getActivation',
  method: 'GET',
  path: '/operator/v1/activation',
  audience: 'operator',
  tag: 'operator',
  summary: 'Read the activation state (operator)',
  description: 'The whole effective activation state.',
  auth: 'operator',
  charge: 'never',
  input: {},
  responses: { 200: { description: 'The whole activation state.', json: OpaqueEnvelopeSchema } },
});
