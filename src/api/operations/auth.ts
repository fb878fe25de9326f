/**
 * GET /api/v1/auth: the principal of the bearer token.
 * @module
 */
import { contract } from '../../contract/operations.ts';
import { bind } from '../bind.ts';
import { ok } from '../envelope.ts';

/** The Principal, after charging this request (remainingBudget counts it). */
const readPrincipal = bind(contract.getAuth, (ctx) => {
  const principal = ctx.engine.credentials.principal(ctx.credential!, ctx.budget ?? undefined, ctx.engine.jobs.researchRuns(ctx.credential!.actor));
  return ok(ctx, 200, JSON.stringify(principal));
});

/** The bindings of the auth operations. */
export const authBindings = [readPrincipal];
