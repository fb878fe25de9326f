/**
 * POST /api/v1/proposals. Standalone submission is blocked: a well-formed request answers 409
 * AGENT_RUN_REQUIRED (requiredAction submit-through-research-job), a malformed one 400, and when the
 * operator blocks the surface 503. None of these charges the request budget (decisions.md).
 * @module
 */
import * as v from 'valibot';
import { ServiceError, invalid, notFound, type FieldError } from '../errors.ts';
import { requireIdempotencyKey } from '../idempotency/idempotency.ts';
import { parseOrThrow } from '../validation.ts';
import type { Operation } from './context.ts';
import { ProposalRequestSchema } from './response-schemas.ts';

type ProposalRequest = v.InferOutput<typeof ProposalRequestSchema>;

const URI_SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/** An absolute URI; with `identifier`, only http, https or urn (the contract's identifier rule). */
function uriProblem(value: string, identifier: boolean): string | null {
  const scheme = URI_SCHEME.exec(value)?.[1]?.toLowerCase();
  if (!scheme) return 'must be an absolute URI';
  if (identifier && scheme !== 'http' && scheme !== 'https' && scheme !== 'urn') return 'must be an HTTP, HTTPS or URN URI';
  if (scheme === 'urn') return /^urn:[a-z0-9][a-z0-9-]{0,31}:\S+$/i.test(value) ? null : 'is not a valid URN';
  if (/\s/.test(value) || !URL.canParse(value)) return 'is not a valid URI';
  if ((scheme === 'http' || scheme === 'https') && !/^https?:\/\/[^/?#]+/i.test(value)) return 'needs a host';
  return null;
}

/**
 * What the schema cannot say: keys are unique per array and every reference names a key of the right
 * array; URIs are absolute (identifiers HTTP, HTTPS or URN).
 */
export function proposalProblems(p: ProposalRequest): FieldError[] {
  const errors: FieldError[] = [];
  const keysOf = (list: readonly { key: string }[], name: string) => {
    const keys = new Set<string>();
    list.forEach((item, i) => {
      if (keys.has(item.key)) errors.push({ field: `${name}.${i}.key`, message: 'duplicates an earlier key' });
      keys.add(item.key);
    });
    return keys;
  };
  const entities = keysOf(p.entities, 'entities');
  const facts = keysOf(p.facts, 'facts');
  keysOf(p.evidence, 'evidence');
  const inquiries = keysOf(p.inquiries, 'inquiries');
  p.entities.forEach((e, i) =>
    e.identifiers.forEach((id, j) => {
      const problem = uriProblem(id, true);
      if (problem) errors.push({ field: `entities.${i}.identifiers.${j}`, message: problem });
    }),
  );
  p.facts.forEach((f, i) => {
    if (!entities.has(f.subject)) errors.push({ field: `facts.${i}.subject`, message: 'names no entity of this proposal' });
    const o = f.object;
    if (o.kind === 'entity' && !entities.has(o.entityKey)) errors.push({ field: `facts.${i}.object.entityKey`, message: 'names no entity of this proposal' });
    if (o.kind === 'uri') {
      const problem = uriProblem(o.uri, false);
      if (problem) errors.push({ field: `facts.${i}.object.uri`, message: problem });
    }
    if (o.kind === 'integer' && !/^-?(0|[1-9][0-9]*)$/.test(o.value)) errors.push({ field: `facts.${i}.object.value`, message: 'must be an integer string' });
    if (o.kind === 'duration' && !/^-?P(?!$)(\d+(\.\d+)?Y)?(\d+(\.\d+)?M)?(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?(T(?=\d)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$/.test(o.iso8601)) {
      errors.push({ field: `facts.${i}.object.iso8601`, message: 'must be an ISO 8601 duration, e.g. P3Y6M or PT15M' });
    }
  });
  p.evidence.forEach((e, i) => {
    if (!facts.has(e.factKey)) errors.push({ field: `evidence.${i}.factKey`, message: 'names no fact of this proposal' });
    const s = e.source;
    if (s.kind === 'entity' && !entities.has(s.entityKey)) errors.push({ field: `evidence.${i}.source.entityKey`, message: 'names no entity of this proposal' });
    if (s.kind === 'uri') {
      const problem = uriProblem(s.uri, false);
      if (problem) errors.push({ field: `evidence.${i}.source.uri`, message: problem });
    }
  });
  p.inquiries.forEach((q, i) =>
    q.parentKeys.forEach((k, j) => {
      if (!inquiries.has(k) || k === q.key) errors.push({ field: `inquiries.${i}.parentKeys.${j}`, message: 'names no other inquiry of this proposal' });
    }),
  );
  return errors.slice(0, 32);
}

/** POST /api/v1/proposals */
export const submitProposal: Operation = {
  auth: 'bearer',
  allScopes: ['knowledge:propose'],
  activation: 'proposals',
  charge: 'never',
  body: 'json',
  run(ctx) {
    requireIdempotencyKey(ctx.request.headers['idempotency-key']);
    const proposal = parseOrThrow(ProposalRequestSchema, ctx.body, 'proposal request');
    const problems = proposalProblems(proposal);
    if (problems.length) throw invalid(`The proposal is not consistent: ${problems[0]!.field} ${problems[0]!.message}.`, problems);
    const bound = ctx.credential!.spaceRef;
    // Exact-space boundary: a document-bound credential only reaches its own space (404, never 403).
    if (proposal.spaceRef !== undefined && bound !== null && proposal.spaceRef !== bound) throw notFound('The space');
    throw new ServiceError(
      'AGENT_RUN_REQUIRED',
      'Standalone proposal submission is blocked: a knowledge proposal must come from a live research-job agent run (hosted job creation is retired). No request budget was charged.',
      { requiredAction: 'submit-through-research-job', retryable: false },
    );
  },
};
