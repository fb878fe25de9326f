/**
 * The generated documentation: docs/openapi.json is current, the generated reference links nowhere
 * outside, and docs/architecture.md's Layout names the repository's folders. (The links of the
 * hand-written Markdown are checked by scripts/readme.test.ts.)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiText, unlinkExternal } from './docs.ts';

const root = resolve(import.meta.dirname, '..');

test("docs/architecture.md's Layout section names exactly the repository's top-level folders", () => {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const block = /## Layout\n+```\n([^]*?)```/.exec(text);
  assert.ok(block, 'docs/architecture.md has a Layout section with a tree');
  const named = [...block![1]!.matchAll(/^([a-z][a-z0-9_-]*)\/\s/gm)].map((m) => m[1]!).sort();
  const ignored = new Set(['node_modules', 'dist', 'coverage', 'scratch', 'test-artifacts']);
  const present = readdirSync(root)
    .filter((name) => !name.startsWith('.') && !ignored.has(name) && statSync(join(root, name)).isDirectory())
    .sort();
  assert.equal(named, present);
});

test('docs/openapi.json is the OpenAPI document the server publishes (npm run docs rewrites it)', () => {
  assert.ok(readFileSync(join(root, 'docs/openapi.json'), 'utf8') === openApiText(), 'docs/openapi.json is stale: run npm run docs');
});

test('links to other sites in the generated reference are reduced to their text', () => {
  assert.is(unlinkExternal('see [MDN Reference](https://developer.mozilla.org/x) and [Engine](Engine.md)'), 'see MDN Reference and [Engine](Engine.md)');
  assert.is(unlinkExternal('[a](//cdn.example/x)'), 'a');
});

test.run();
