/**
 * GET /api/v1/auth: the principal of the bearer token.
 * @module
 */
import { ok } from '../envelope.ts';
import { defineOperation } from '../registry/operation.ts';
import { PrincipalEnvelopeSchema } from '../response-schemas.ts';

/** The Principal, after charging this request (remainingBudget counts it). */
export const readPrincipal = defineOperation({
  operationId: 'getAuth',
  method: 'GET',
  path: '/api/v1/auth',
  audience: 'public',
  tag: 'auth',
  summary: 'Read the principal of the bearer token',
  description: 'The principal, its remaining request budget and budgets. A document-bound credential also receives its documentRef and browserHref.',
  auth: 'bearer',
  charge: 'before',
  researchBudget: true,
  input: {},
  responses: {
    200: { description: 'The principal.', json: PrincipalEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: X-Request-Id is malformed.' },
  },
  run(ctx) {
    const principal = ctx.engine.credentials.principal(ctx.credential!, ctx.budget ?? undefined, ctx.engine.jobs.researchRuns(ctx.credential!.actor));
    return ok(ctx, 200, JSON.stringify(principal));
  },
});

/** The auth operations. */
export const authOperations = [readPrincipal];
