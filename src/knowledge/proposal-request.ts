/**
 * Validation of a knowledge proposal request beyond its schema: unique keys, references that name a
 * key of the right array, URIs that are absolute (identifiers HTTP, HTTPS or URN).
 * @module
 */
import { invalid, type FieldError } from '../errors.ts';
import { parseOrThrow } from '../validation.ts';
import { ProposalRequestSchema, type ProposalRequest } from './proposal-schema.ts';

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

/**
 * Parse a ProposalRequest: the schema, then the cross-reference rules.
 * @throws INVALID_REQUEST with a fieldError at each offending place.
 */
export function parseProposalRequest(input: unknown): ProposalRequest {
  const proposal = parseOrThrow(ProposalRequestSchema, input, 'proposal request');
  const problems = proposalProblems(proposal);
  if (problems.length) throw invalid(`The proposal is not consistent: ${problems[0]!.field} ${problems[0]!.message}.`, problems);
  return proposal;
}
