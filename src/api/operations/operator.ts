/**
 * The operator API under /operator/v1 (docs/http-api.md): create
 * credentials and switch activation. Authenticated with `Authorization: Bearer <operatorKey>`, never
 * charged, and not part of the public OpenAPI document.
 * @module
 */
import * as v from 'valibot';
import { isoTimestamp } from '../../clock.ts';
import { CredentialLimits } from '../../auth/credentials.ts';
import { SCOPES } from '../../auth/scopes.ts';
import { displayPrefix } from '../../auth/tokens.ts';
import { Patterns } from '../../ids.ts';
import { parseOrThrow } from '../../validation.ts';
import { ok } from '../envelope.ts';
import { defineOperation } from '../registry/operation.ts';
import { OpaqueEnvelopeSchema } from '../response-schemas.ts';

/** Body of POST /operator/v1/credentials. */
export const CredentialRequestSchema = v.strictObject({
  account: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 letters, digits, dots, underscores or hyphens, starting with a letter or digit')),
  ),
  label: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(CredentialLimits.labelMax, 'must be at most 80 characters')),
  scopes: v.pipe(v.array(v.picklist(SCOPES, `must be one of ${SCOPES.join(', ')}`)), v.minLength(1, 'must list at least one scope'), v.maxLength(SCOPES.length, 'lists at most 12 scopes')),
  documentRef: v.optional(v.nullable(v.pipe(v.string(), v.regex(Patterns.documentRef, 'must be a documentRef (sdoc_ and 48 lowercase hex)')))),
  requestBudget: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(10_000, 'must be at most 10000'))),
  expiresInDays: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(90, 'must be at most 90'))),
});

/** Body of POST /operator/v1/activation. */
export const ActivationRequestSchema = v.strictObject({
  search: v.optional(v.boolean()),
  reviews: v.optional(v.boolean()),
  proposals: v.optional(v.boolean()),
});

/** POST /operator/v1/credentials: 201 with the token, shown this once. */
export const createCredential = defineOperation({
  operationId: 'createCredential',
  method: 'POST',
  path: '/operator/v1/credentials',
  audience: 'operator',
  tag: 'operator',
  summary: 'Create a credential (operator)',
  description: 'Creates a bearer token for an account, shown this once.',
  auth: 'operator',
  charge: 'never',
  input: { body: { schema: CredentialRequestSchema, component: 'CredentialRequest' } },
  responses: {
    201: { description: 'The new credential and its token.', json: OpaqueEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: bad body.' },
    404: { description: 'NOT_FOUND: the documentRef names no document of the account.' },
  },
  async run(ctx, input) {
    const body = parseOrThrow(CredentialRequestSchema, input.body, 'credential request');
    const { token, credential: c } = await ctx.engine.credentials.create({
      accountId: body.account ?? (body.documentRef ? undefined : ctx.settings.localAccount),
      label: body.label,
      scopes: body.scopes,
      documentRef: body.documentRef,
      requestBudget: body.requestBudget,
      expiresInDays: body.expiresInDays,
    });
    const data = {
      token,
      credentialRef: c.credentialRef,
      displayPrefix: displayPrefix(c.credentialRef),
      expiresAt: isoTimestamp(c.expiresAt),
      label: c.label,
      scopes: c.scopes,
      accountId: c.accountId,
      documentRef: c.documentRef,
      spaceRef: c.spaceRef,
      requestBudget: c.requestBudget,
      createdAt: isoTimestamp(c.createdAt),
    };
    return ok(ctx, 201, JSON.stringify(data), { headers: { 'cache-control': 'no-store' } });
  },
});

/** POST /operator/v1/activation: change switches; 200 with the whole (effective) state. */
export const setActivation = defineOperation({
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
  async run(ctx, input) {
    const body = parseOrThrow(ActivationRequestSchema, input.body, 'activation request');
    const partial: { search?: boolean; reviews?: boolean; proposals?: boolean } = {};
    if (body.search !== undefined) partial.search = body.search;
    if (body.reviews !== undefined) partial.reviews = body.reviews;
    if (body.proposals !== undefined) partial.proposals = body.proposals;
    await ctx.engine.activation.set(partial);
    return ok(ctx, 200, JSON.stringify(await ctx.activation()));
  },
});

/** GET /operator/v1/activation: the whole (effective) state. */
export const readActivation = defineOperation({
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
  async run(ctx) {
    return ok(ctx, 200, JSON.stringify(await ctx.activation()));
  },
});

/** The operator operations (not published in /openapi.json). */
export const operatorOperations = [createCredential, readActivation, setActivation];
