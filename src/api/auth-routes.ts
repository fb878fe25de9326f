/**
 * GET /api/v1/auth: the principal of the bearer token.
 * @module
 */
import type { Operation } from './context.ts';
import { ok } from './envelope.ts';

/** The Principal, after charging this request (remainingBudget counts it). */
export const readPrincipal: Operation = {
  auth: 'bearer',
  charge: 'before',
  run(ctx) {
    const principal = ctx.engine.credentials.principal(ctx.credential!, ctx.budget ?? undefined);
    return ok(ctx, 200, JSON.stringify(principal));
  },
};
