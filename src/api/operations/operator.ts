/**
 * The operator API under /operator/v1 (docs/http-api.md): create
 * credentials and sign-in links, switch activation. Authenticated with `Authorization: Bearer <operatorKey>`, never
 * charged, and not part of the public OpenAPI document.
 * @module
 */
import { DEFAULT_LOCAL_ACCOUNT } from '../../actor.ts';
import { ACTIVATION_SURFACES, type ActivationState } from '../../auth/activation.ts';
import { ActivationRequestSchema, CredentialRequestSchema, SignInLinkRequestSchema } from '../../auth/credential-schema.ts';
import { isoTimestamp } from '../../clock.ts';
import { displayPrefix } from '../../auth/tokens.ts';
import { parseOrThrow } from '../../validation.ts';
import { ok } from '../envelope.ts';
import { bind } from '../bind.ts';
import { contract } from '../../contract/operations.ts';

/** POST /operator/v1/credentials: 201 with the token, shown this once (an exact repeat under its Idempotency-Key: token null). */
const createCredential = bind(contract.createCredential, async (ctx, input) => {
  const body = parseOrThrow(CredentialRequestSchema, input.body, 'credential request');
  const request = {
    accountId: body.account ?? (body.documentRef ? undefined : ctx.settings.localAccount),
    label: body.label,
    scopes: body.scopes,
    documentRef: body.documentRef,
    requestBudget: body.requestBudget,
    expiresInDays: body.expiresInDays,
  };
  const key = input.headers.idempotencyKey;
  const { token, credential: c, receipt } = key === undefined ? { ...(await ctx.engine.credentials.create(request)), receipt: undefined } : await ctx.engine.credentials.createOnce(request, key);
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
  return ok(ctx, 201, JSON.stringify(data), receipt ? { receipt, headers: { 'cache-control': 'no-store' } } : { headers: { 'cache-control': 'no-store' } });
});

/** POST /operator/v1/sign-in-links: 201 with a one-time link into the browser app (no body: the local person's account). */
const createSignInLink = bind(contract.createSignInLink, async (ctx, input) => {
  const body = input.body === undefined ? {} : parseOrThrow(SignInLinkRequestSchema, input.body, 'sign-in link request');
  const link = await ctx.engine.sessions.createLink(body.account ?? ctx.settings.localAccount ?? DEFAULT_LOCAL_ACCOUNT);
  const data = { url: ctx.engine.deps.links.signIn(link.secret), expiresAt: isoTimestamp(link.expiresAt) };
  return ok(ctx, 201, JSON.stringify(data), { headers: { 'cache-control': 'no-store' } });
});

/** POST /operator/v1/activation: change switches; 200 with the whole (effective) state. */
const setActivation = bind(contract.setActivation, async (ctx, input) => {
  const body = parseOrThrow(ActivationRequestSchema, input.body, 'activation request');
  const partial: Partial<ActivationState> = {};
  for (const surface of ACTIVATION_SURFACES) {
    const value = body[surface];
    if (value !== undefined) partial[surface] = value;
  }
  await ctx.engine.activation.set(partial);
  return ok(ctx, 200, JSON.stringify(await ctx.activation()));
});

/** GET /operator/v1/activation: the whole (effective) state. */
const readActivation = bind(contract.getActivation, async (ctx) => {
  return ok(ctx, 200, JSON.stringify(await ctx.activation()));
});

/** The bindings of the operator operations (not published in /openapi.json). */
export const operatorBindings = [createCredential, createSignInLink, readActivation, setActivation];
