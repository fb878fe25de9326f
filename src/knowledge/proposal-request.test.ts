/**
 * ProposalRequest validation: every bound, enum and grammar of the schema, the cross-reference and
 * URI rules, canonical URIs, and fast-check-generated invalid requests (all 400 with a fieldError).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { isServiceError } from '../errors.ts';
import { sampleProposal } from '../../fixtures/knowledge-kit.ts';
import { parseProposalRequest } from './proposal-request.ts';
import { isIsoDuration } from './duration.ts';

type Mutable = ReturnType<typeof sampleProposal> & Record<string, unknown>;

function fieldsOf(input: unknown): string[] {
  try {
    parseProposalRequest(input);
  } catch (e) {
    if (isServiceError(e) && e.code === 'INVALID_REQUEST') return (e.fieldErrors ?? []).map((f) => f.field);
    throw e;
  }
  return [];
}

function withChange(change: (p: any) => void): unknown {
  const p = structuredClone(sampleProposal()) as Mutable;
  change(p);
  return p;
}

test('the sample proposal is valid and its URIs come back canonical', () => {
  const p = parseProposalRequest(sampleProposal());
  assert.equal(p.entities[0]!.identifiers, ['https://example.org/wiki/Subject', 'urn:isbn:0-486-27557-4']);
  assert.is(p.facts.length, 8);
});

const cases: [string, (p: any) => void, string][] = [
  ['v must be 2', (p) => (p.v = 1), 'v'],
  ['unknown top-level field', (p) => (p.extra = 1), 'extra'],
  ['entities over 32', (p) => (p.entities = Array.from({ length: 33 }, (_, i) => ({ ...p.entities[1], key: `e${i}` }))), 'entities'],
  ['facts over 128', (p) => (p.facts = Array.from({ length: 129 }, (_, i) => ({ ...p.facts[0], key: `f${i}` }))), 'facts'],
  ['evidence over 128', (p) => (p.evidence = Array.from({ length: 129 }, (_, i) => ({ ...p.evidence[0], key: `e${i}` }))), 'evidence'],
  ['inquiries over 32', (p) => (p.inquiries = Array.from({ length: 33 }, (_, i) => ({ ...p.inquiries[0], key: `q${i}` }))), 'inquiries'],
  ['identifiers over 4', (p) => (p.entities[0].identifiers = ['https://a.org/1', 'https://a.org/2', 'https://a.org/3', 'https://a.org/4', 'https://a.org/5']), 'entities.0.identifiers'],
  ['no concept', (p) => (p.entities[0].concepts = []), 'entities.0.concepts'],
  ['five concepts', (p) => (p.entities[0].concepts = ['person', 'agent', 'work', 'place', 'event']), 'entities.0.concepts'],
  ['repeated concept', (p) => (p.entities[0].concepts = ['person', 'person']), 'entities.0.concepts'],
  ['unknown concept', (p) => (p.entities[0].concepts = ['robot']), 'entities.0.concepts.0'],
  ['parentKeys over 16', (p) => (p.inquiries[1].parentKeys = Array.from({ length: 17 }, () => 'q.root')), 'inquiries.1.parentKeys'],
  ['key with uppercase', (p) => (p.entities[0].key = 'Subject'), 'entities.0.key'],
  ['key starting with a digit', (p) => (p.entities[0].key = '1subject'), 'entities.0.key'],
  ['key with double separator', (p) => (p.entities[0].key = 'a..b'), 'entities.0.key'],
  ['key over 96 characters', (p) => (p.entities[0].key = `a${'b'.repeat(96)}`), 'entities.0.key'],
  ['answerForm not a key', (p) => (p.inquiries[0].answerForm = 'Short Answer'), 'inquiries.0.answerForm'],
  ['bad predicate', (p) => (p.facts[0].predicate = 'likes'), 'facts.0.predicate'],
  ['bad stance', (p) => (p.facts[0].stance = 'maybe'), 'facts.0.stance'],
  ['bad bearing', (p) => (p.evidence[0].bearing = 'vibes'), 'evidence.0.bearing'],
  ['bad object kind', (p) => (p.facts[0].object = { kind: 'date', value: '2020' }), 'facts.0.object.kind'],
  ['decimal trailing zero', (p) => (p.facts[3].object.value = '226.030'), 'facts.3.object.value'],
  ['decimal leading zero', (p) => (p.facts[3].object.value = '0226.03'), 'facts.3.object.value'],
  ['decimal bare dot', (p) => (p.facts[3].object.value = '226.'), 'facts.3.object.value'],
  ['decimal over 1024', (p) => (p.facts[3].object.value = '1'.repeat(1025)), 'facts.3.object.value'],
  ['integer with fraction', (p) => (p.facts[2].object.value = '2.5'), 'facts.2.object.value'],
  ['integer with plus', (p) => (p.facts[2].object.value = '+2'), 'facts.2.object.value'],
  ['integer over 1024', (p) => (p.facts[2].object.value = '9'.repeat(1025)), 'facts.2.object.value'],
  ['duration without component', (p) => (p.facts[4].object.iso8601 = 'PT'), 'facts.4.object.iso8601'],
  ['duration with weeks and days', (p) => (p.facts[4].object.iso8601 = 'P1W2D'), 'facts.4.object.iso8601'],
  ['duration fraction not last', (p) => (p.facts[4].object.iso8601 = 'P1.5Y2M'), 'facts.4.object.iso8601'],
  ['duration negative', (p) => (p.facts[4].object.iso8601 = '-P1Y'), 'facts.4.object.iso8601'],
  ['text language uppercase', (p) => (p.facts[1].object.language = 'EN'), 'facts.1.object.language'],
  ['entity language with long subtag', (p) => (p.entities[0].language = 'en-abcdefghi'), 'entities.0.language'],
  ['boolean as string', (p) => (p.facts[5].object.value = 'true'), 'facts.5.object.value'],
  ['object missing kind', (p) => (p.facts[0].object = { entityKey: 'radium' }), 'facts.0.object.kind'],
  ['object extra field', (p) => (p.facts[6].object.extra = 1), 'facts.6.object.extra'],
  ['dangling fact subject', (p) => (p.facts[0].subject = 'nobody'), 'facts.0.subject'],
  ['dangling entity object', (p) => (p.facts[0].object.entityKey = 'nobody'), 'facts.0.object.entityKey'],
  ['dangling evidence factKey', (p) => (p.evidence[0].factKey = 'f.none'), 'evidence.0.factKey'],
  ['dangling evidence entityKey', (p) => (p.evidence[1].source.entityKey = 'nobody'), 'evidence.1.source.entityKey'],
  ['dangling parent key', (p) => (p.inquiries[1].parentKeys = ['q.none']), 'inquiries.1.parentKeys.0'],
  ['self parent', (p) => (p.inquiries[0].parentKeys = ['q.root']), 'inquiries.0.parentKeys.0'],
  ['parent cycle', (p) => (p.inquiries[0].parentKeys = ['q.child']), 'inquiries.0.parentKeys'],
  ['duplicate entity key', (p) => (p.entities[1].key = 'subject'), 'entities.1.key'],
  ['duplicate fact key', (p) => (p.facts[1].key = 'f.discovered'), 'facts.1.key'],
  ['duplicate evidence key', (p) => (p.evidence[1].key = 'e.1'), 'evidence.1.key'],
  ['duplicate inquiry key', (p) => (p.inquiries[1].key = 'q.root'), 'inquiries.1.key'],
  ['identifier not http/https/urn', (p) => (p.entities[0].identifiers = ['ftp://example.org/x']), 'entities.0.identifiers.0'],
  ['identifier relative', (p) => (p.entities[0].identifiers = ['/wiki/x']), 'entities.0.identifiers.0'],
  ['identifier with space', (p) => (p.entities[0].identifiers = ['https://exa mple.org/']), 'entities.0.identifiers.0'],
  ['identifier http without host', (p) => (p.entities[0].identifiers = ['http:///x']), 'entities.0.identifiers.0'],
  ['identifier bad URN', (p) => (p.entities[0].identifiers = ['urn:isbn']), 'entities.0.identifiers.0'],
  ['identifier bad UUID URN', (p) => (p.entities[0].identifiers = ['urn:uuid:not-a-uuid']), 'entities.0.identifiers.0'],
  ['identifiers equal after canonicalization', (p) => (p.entities[0].identifiers = ['https://example.org/a', 'HTTPS://EXAMPLE.org:443/a']), 'entities.0.identifiers.1'],
  ['fact uri javascript', (p) => (p.facts[7].object.uri = 'javascript:alert(1)'), 'facts.7.object.uri'],
  ['evidence uri relative', (p) => (p.evidence[0].source.uri = 'source.html'), 'evidence.0.source.uri'],
  ['empty name', (p) => (p.entities[0].name = ''), 'entities.0.name'],
  ['empty question', (p) => (p.inquiries[0].question = ''), 'inquiries.0.question'],
  ['description not string or null', (p) => (p.entities[0].description = 5), 'entities.0.description'],
  ['bad spaceRef', (p) => (p.spaceRef = 'ksp_x'), 'spaceRef'],
];

for (const [name, change, field] of cases) {
  test(`400 at ${field}: ${name}`, () => {
    const fields = fieldsOf(withChange(change));
    assert.ok(fields.includes(field), `expected a fieldError at ${field}, got ${JSON.stringify(fields)}`);
  });
}

test('ISO 8601 durations: accepted and refused forms', () => {
  for (const ok of ['P1Y', 'P3Y6M4DT12H30M5S', 'PT15M', 'P2W', 'PT0.5S', 'P1DT1,5H', 'P0D']) assert.ok(isIsoDuration(ok), ok);
  for (const bad of ['P', 'PT', 'P1YT', '1Y', 'P1S', 'PT1D', 'P1.5YT1H', 'P-1Y', 'p1y', 'P1W1D']) assert.not.ok(isIsoDuration(bad), bad);
});

/** Arbitrary ways to break one part of a valid request; each names where the fieldError must be. */
const breakers = fc.oneof(
  fc.record({ i: fc.nat(1), key: fc.string().filter((s) => !/^[a-z][a-z0-9]*([._:-][a-z0-9]+)*$/.test(s) || s.length > 96) }).map(({ i, key }) => ({ at: `entities.${i}.key`, apply: (p: any) => (p.entities[i].key = key) })),
  fc.string().filter((s) => !['about', 'authored-by', 'cites', 'created-by', 'derived-from', 'description', 'identifier', 'located-in', 'name', 'object', 'part-of', 'related-to', 'same-as'].includes(s)).map((s) => ({ at: 'facts.0.predicate', apply: (p: any) => (p.facts[0].predicate = s) })),
  fc.string().filter((s) => !/^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/.test(s)).map((s) => ({ at: 'facts.3.object.value', apply: (p: any) => (p.facts[3].object.value = s) })),
  fc.string().filter((s) => !/^-?(0|[1-9][0-9]*)$/.test(s)).map((s) => ({ at: 'facts.2.object.value', apply: (p: any) => (p.facts[2].object.value = s) })),
  fc.string().filter((s) => !isIsoDuration(s)).map((s) => ({ at: 'facts.4.object.iso8601', apply: (p: any) => (p.facts[4].object.iso8601 = s) })),
  fc.string().filter((s) => !/^(und|[a-z]{2,3}(-[a-z0-9]{2,8})*)$/.test(s) || s.length > 64).map((s) => ({ at: 'entities.0.language', apply: (p: any) => (p.entities[0].language = s) })),
  fc.string({ minLength: 1 }).filter((s) => s !== 'subject' && s !== 'radium').map((s) => ({ at: 'facts.1.subject', apply: (p: any) => (p.facts[1].subject = s) })),
  fc.string({ minLength: 1 }).filter((s) => !s.startsWith('f.')).map((s) => ({ at: 'evidence.0.factKey', apply: (p: any) => (p.evidence[0].factKey = s) })),
  fc.oneof(fc.constant('mailto:a@b.c'), fc.string(), fc.webUrl().map((u) => u.replace(/^https?/, 'gopher'))).map((s) => ({ at: 'entities.1.identifiers.0', apply: (p: any) => (p.entities[1].identifiers = [s]) })),
  fc.integer({ min: 129, max: 200 }).map((n) => ({ at: 'facts', apply: (p: any) => (p.facts = Array.from({ length: n }, (_, i) => ({ ...p.facts[5], key: `k${i}` }))) })),
  fc.constantFrom('entities', 'facts', 'evidence', 'inquiries').map((name) => ({ at: name, apply: (p: any) => (p[name] = 'not an array') })),
  fc.anything().filter((x) => typeof x !== 'boolean').map((x) => ({ at: 'facts.5.object.value', apply: (p: any) => (p.facts[5].object.value = x) })),
);

test('fast-check: every generated invalid request is 400 with a fieldError at the broken place', () => {
  fc.assert(
    fc.property(breakers, (b) => {
      const fields = fieldsOf(withChange(b.apply));
      return fields.some((f) => f === b.at || f.startsWith(`${b.at}.`));
    }),
    { numRuns: 400, seed: 20261126 },
  );
});

test.run();
