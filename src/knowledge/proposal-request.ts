/**
 * Validation of a knowledge proposal request beyond its schema: unique keys per array, references
 * that name a key of the right array, inquiry parents without cycles, and URIs checked and
 * canonicalized by URI libraries (see `uri.ts`).
 * @module
 */
import { invalid, type FieldError } from '../errors.ts';
import { parseOrThrow } from '../validation.ts';
import { ProposalRequestSchema, type ProposalRequest } from './proposal-schema.ts';
import { canonicalUri } from './uri.ts';
import { isIsoDuration } from './duration.ts';

/** Keys of one array, reporting each duplicate at its place. */
function keysOf(list: readonly { key: string }[], name: string, errors: FieldError[]): Set<string> {
  const keys = new Set<string>();
  list.forEach((item, i) => {
    if (keys.has(item.key)) errors.push({ field: `${name}.${i}.key`, message: `duplicates an earlier key of ${name}` });
    keys.add(item.key);
  });
  return keys;
}

/** Inquiries whose parent chain leads back to themselves. */
function cyclicInquiries(p: ProposalRequest): Set<number> {
  const index = new Map(p.inquiries.map((q, i) => [q.key, i]));
  const state = new Uint8Array(p.inquiries.length); // 0 new, 1 on stack, 2 done
  const cyclic = new Set<number>();
  const visit = (i: number): boolean => {
    if (state[i] === 1) return true;
    if (state[i] === 2) return false;
    state[i] = 1;
    let found = false;
    for (const k of p.inquiries[i]!.parentKeys) {
      const j = index.get(k);
      if (j !== undefined && j !== i && visit(j)) found = true;
    }
    state[i] = 2;
    if (found) cyclic.add(i);
    return found;
  };
  p.inquiries.forEach((_, i) => visit(i));
  return cyclic;
}

/**
 * Check what the schema cannot say and return the canonical request (URIs in canonical form).
 * @returns the canonical request and the problems; the request is only meaningful when there are none.
 */
export function checkProposal(p: ProposalRequest): { canonical: ProposalRequest; problems: FieldError[] } {
  const errors: FieldError[] = [];
  const entities = keysOf(p.entities, 'entities', errors);
  const facts = keysOf(p.facts, 'facts', errors);
  keysOf(p.evidence, 'evidence', errors);
  const inquiries = keysOf(p.inquiries, 'inquiries', errors);
  const uri = (value: string, identifier: boolean, field: string): string => {
    const r = canonicalUri(value, identifier);
    if (!r.ok) {
      errors.push({ field, message: r.problem });
      return value;
    }
    return r.uri;
  };
  const canonical: ProposalRequest = {
    ...p,
    entities: p.entities.map((e, i) => {
      const seen = new Set<string>();
      const identifiers = e.identifiers.map((id, j) => {
        const c = uri(id, true, `entities.${i}.identifiers.${j}`);
        if (seen.has(c)) errors.push({ field: `entities.${i}.identifiers.${j}`, message: 'names the same URI as an earlier identifier (after canonicalization)' });
        seen.add(c);
        return c;
      });
      if (new Set(e.concepts).size !== e.concepts.length) errors.push({ field: `entities.${i}.concepts`, message: 'must not repeat a concept' });
      return { ...e, identifiers };
    }),
    facts: p.facts.map((f, i) => {
      if (!entities.has(f.subject)) errors.push({ field: `facts.${i}.subject`, message: 'names no entity key of this proposal' });
      const o = f.object;
      if (o.kind === 'duration' && !isIsoDuration(o.iso8601)) {
        errors.push({ field: `facts.${i}.object.iso8601`, message: 'must be an ISO 8601 duration: weeks alone (PnW), and only the last component may have a fraction' });
      }
      if (o.kind === 'entity' && !entities.has(o.entityKey)) errors.push({ field: `facts.${i}.object.entityKey`, message: 'names no entity key of this proposal' });
      if (o.kind === 'uri') return { ...f, object: { kind: 'uri' as const, uri: uri(o.uri, false, `facts.${i}.object.uri`) } };
      return f;
    }),
    evidence: p.evidence.map((e, i) => {
      if (!facts.has(e.factKey)) errors.push({ field: `evidence.${i}.factKey`, message: 'names no fact key of this proposal' });
      const s = e.source;
      if (s.kind === 'entity' && !entities.has(s.entityKey)) errors.push({ field: `evidence.${i}.source.entityKey`, message: 'names no entity key of this proposal' });
      if (s.kind === 'uri') return { ...e, source: { kind: 'uri' as const, uri: uri(s.uri, false, `evidence.${i}.source.uri`) } };
      return e;
    }),
  };
  p.inquiries.forEach((q, i) => {
    const seen = new Set<string>();
    q.parentKeys.forEach((k, j) => {
      const field = `inquiries.${i}.parentKeys.${j}`;
      if (k === q.key) errors.push({ field, message: 'names the inquiry itself' });
      else if (!inquiries.has(k)) errors.push({ field, message: 'names no inquiry key of this proposal' });
      else if (seen.has(k)) errors.push({ field, message: 'repeats an earlier parent key' });
      seen.add(k);
    });
  });
  for (const i of cyclicInquiries(p)) errors.push({ field: `inquiries.${i}.parentKeys`, message: 'forms a cycle of parent inquiries' });
  return { canonical, problems: errors };
}

/**
 * Parse a ProposalRequest: the schema, then the cross-reference and URI rules.
 * @returns the canonical request (identifiers and URIs canonicalized).
 * @throws INVALID_REQUEST with a fieldError at each offending place (at most 32).
 */
export function parseProposalRequest(input: unknown): ProposalRequest {
  const proposal = parseOrThrow(ProposalRequestSchema, input, 'proposal request');
  const { canonical, problems } = checkProposal(proposal);
  if (problems.length) throw invalid(`The proposal is not consistent: ${problems[0]!.field} ${problems[0]!.message}.`, problems);
  return canonical;
}
