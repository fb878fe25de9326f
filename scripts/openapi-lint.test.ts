/**
 * The published OpenAPI document through third-party linters (issue 29 item 9), run as dev
 * dependencies, offline: Redocly's `recommended` ruleset (no error, no warning), Spectral's
 * `spectral:oas` (no error) and the OWASP ruleset's API4 limit rules (every string, array and integer
 * bounded: no result at all). Also the bounds module's regular-expression arithmetic.
 */
import { Document, Spectral, type RulesetDefinition } from '@stoplight/spectral-core';
import ParsersModule from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import owaspModule from '@stoplight/spectral-owasp-ruleset';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { regexMaxLength } from '../src/contract/openapi-bounds.ts';
import { buildOpenApi, openApiJson } from '../src/contract/openapi.ts';

// Both packages are CommonJS; under ESM their exports arrive on `default`.
const Parsers = ((ParsersModule as { Json?: unknown }).Json ? ParsersModule : (ParsersModule as unknown as { default: typeof ParsersModule }).default) as typeof ParsersModule;
const owasp = ((owaspModule as { rules?: unknown }).rules ? owaspModule : (owaspModule as unknown as { default: unknown }).default) as RulesetDefinition;

const text = JSON.stringify(JSON.parse(openApiJson()), null, 2);

async function spectral(ruleset: RulesetDefinition) {
  const linter = new Spectral();
  linter.setRuleset(ruleset);
  return linter.run(new Document(text, Parsers.Json, '/openapi.json'));
}

const LIMIT_RULES = ['owasp:api4:2023-string-limit', 'owasp:api4:2023-integer-format', 'owasp:api4:2023-integer-limit', 'owasp:api4:2023-array-limit', 'owasp:api4:2023-rate-limit', 'owasp:api4:2023-rate-limit-retry-after'];
// Not owasp:api4:2023-rate-limit-responses-429: the two operations without a credential (public
// artifacts, /openapi.json) have no budget and never answer 429; declaring one would be untrue.

test('Redocly recommended: no error and no warning (servers, tag descriptions, no unused component)', async () => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: text, absoluteRef: '/openapi.json', config });
  assert.equal(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`), []);
});

test('Spectral spectral:oas: no error', async () => {
  const errors = (await spectral(oas as RulesetDefinition)).filter((r) => r.severity === 0);
  assert.equal(errors.map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`), []);
});

test('OWASP API4 rules: every string, integer and array of the document is bounded, and every 2XX/4XX answer declares its rate limit (no result)', async () => {
  const found = (await spectral(owasp)).filter((r) => LIMIT_RULES.includes(String(r.code)));
  assert.equal(found.slice(0, 20).map((r) => `${r.code} ${r.path.join('.')}`), []);
  // The rules did run: the same ruleset finds its other rules' results in this document.
  assert.ok((await spectral(owasp)).length > 0, 'the OWASP ruleset ran');
});

test('the document names its server, describes every tag, and bounds the values the issue named (cursor, Service-If-Revision, If-None-Match, the 10,000-block outline)', () => {
  const doc = buildOpenApi() as any;
  assert.equal(doc.servers.map((s: { url: string }) => s.url), ['/']);
  for (const tag of doc.tags) assert.ok(typeof tag.description === 'string' && tag.description.length > 10, tag.name);
  const params = Object.values(doc.paths).flatMap((item: any) => Object.values(item).flatMap((op: any) => op.parameters ?? []));
  for (const name of ['cursor', 'Service-If-Revision', 'If-None-Match']) {
    const found = params.filter((p: any) => p.name === name);
    assert.ok(found.length > 0, name);
    for (const p of found) assert.type(p.schema.maxLength, 'number', name);
  }
  assert.ok(JSON.stringify(doc).includes('"maxItems":10000'), 'the outline of at most 10,000 blocks');
});

test('regexMaxLength: the longest match of an anchored pattern, Infinity when unbounded or not understood', () => {
  assert.is(regexMaxLength('^sdoc_[a-f0-9]{48}$'), 53);
  assert.is(regexMaxLength('^[A-Za-z0-9_-]{16,128}$'), 128);
  assert.is(regexMaxLength('^(?:ab|c)?x{2,3}$'), 5);
  assert.is(regexMaxLength('^\\u0041[\\]x]$'), 2);
  assert.is(regexMaxLength('^a+$'), Infinity);
  assert.is(regexMaxLength('^a{2,}$'), Infinity);
  assert.is(regexMaxLength('^(?=a)a$'), Infinity);
  assert.is(regexMaxLength('^(a)\\1$'), Infinity);
});

test.run();
