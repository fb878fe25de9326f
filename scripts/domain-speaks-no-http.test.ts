/**
 * The domain speaks no HTTP: modules of src/ outside the edge (api/), the contract (contract/) and the
 * typed client (client/) name resources logically (documentRef, reviewRef, jobId, idempotencyKey);
 * links (under /api/v1, and the browser pages' /documents/, /reviews/, /k/) and wire header names (`Service-*`,
 * `Idempotency-Key`, `Retry-After`) are rendered by the edge when it answers. Comments may still
 * mention the wire names they explain; code may not.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '..');
const EDGE = new Set(['src/api', 'src/contract', 'src/client']);
/**
 * An /api/v1 path; a header name as HTTP writes it (`Service-Revision`, `X-Service-…`, `Idempotency-Key`,
 * `Retry-After`) or as a lowercase header key (`'service-if-revision'`). `service-rich-document` is a
 * format name of the contract, not a header.
 */
const WIRE = [
  /\/api\/v1\b/,
  // A browser page's path (the person's document and review pages, a public page): links are
  // rendered from the contract's paths by src/contract/links.ts, never spelled by a domain.
  /['"`]\/(?:documents|reviews|k)\//,
  /\}\/(?:documents|reviews|k)\/\$\{/,
  /\bService-[A-Z]/,
  /['"`](?:x-)?service-(?!rich-document['"`])[a-z-]+['"`]/,
  /\bIdempotency-Key\b|['"`]idempotency-key['"`]/,
  /\bRetry-After\b|['"`]retry-after['"`]/,
];

/** The code of a TypeScript source without its comments (block comments, whole-line and trailing ` // ` ones). */
function codeOf(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((line) => (/^\s*\/\//.test(line) ? '' : line.replace(/\s\/\/\s.*$/, '')))
    .join('\n');
}

/** The wire names in the code of `source`, one line each (`line: text`). */
function wireNamesIn(source: string): string[] {
  const found: string[] = [];
  codeOf(source)
    .split('\n')
    .forEach((line, i) => {
      if (WIRE.some((re) => re.test(line))) found.push(`${i + 1}: ${line.trim()}`);
    });
  return found;
}

function domainFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const rel = relative(root, path).split('\\').join('/');
    if (statSync(path).isDirectory()) {
      if (!EDGE.has(rel)) domainFiles(path, out);
    } else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('-kit.ts')) out.push(rel);
  }
  return out;
}

test('the check sees wire names in code and not in comments', () => {
  assert.equal(wireNamesIn("const href = `${baseUrl}/api/v1/reviews/${ref}`;"), ['1: const href = `${baseUrl}/api/v1/reviews/${ref}`;']);
  assert.equal(wireNamesIn("headers['service-revision'] = revision;").length, 1);
  assert.equal(wireNamesIn('const href = `${deps.baseUrl}/documents/${documentRef}`;').length, 1);
  assert.equal(wireNamesIn('return `/k/${ref.kind}/${ref.artifactId}`;').length, 1);
  assert.equal(wireNamesIn("const back = `/reviews/${reviewRef}`;").length, 1);
  assert.equal(wireNamesIn("return { 'Retry-After': '5' };").length, 1);
  assert.equal(wireNamesIn("const name = 'Service-Revision';").length, 1);
  assert.equal(wireNamesIn("format: 'service-rich-document', requiredAction: 'choose-new-idempotency-key'"), []);
  assert.equal(wireNamesIn('/** The Service-Revision (`/api/v1`). */\n// Idempotency-Key\nconst url = "http://x"; // Retry-After\nconst a = 1;'), []);
});

test('no domain module of src/ names an /api/v1 link, a page path or a wire header in its code', () => {
  const files = domainFiles(join(root, 'src'));
  assert.ok(files.length > 50, `only ${files.length} domain files found`);
  const offences = files.flatMap((file) => wireNamesIn(readFileSync(join(root, file), 'utf8')).map((hit) => `${file}:${hit}`));
  assert.equal(offences, [], `the domain names HTTP wire details:\n${offences.join('\n')}`);
});

test.run();
