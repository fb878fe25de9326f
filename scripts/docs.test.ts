/**
 * The README and docs/ stay inside the repository: every Markdown link is relative and lands on a
 * file that exists here (no other site, nothing above the repository root).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiText, unlinkExternal } from './docs.ts';

const root = resolve(import.meta.dirname, '..');

function markdownUnder(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) markdownUnder(path, out);
    else if (name.endsWith('.md')) out.push(path);
  }
  return out;
}

const LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)|<a\s[^>]*href="([^"]+)"/g;

test('every link of README.md and docs/ points at a file of this repository', () => {
  const files = [join(root, 'README.md'), ...markdownUnder(join(root, 'docs'), [])];
  assert.ok(files.length > 2);
  const bad: string[] = [];
  for (const file of files) {
    // Code blocks show URLs of a running server; they are not links.
    const text = readFileSync(file, 'utf8').replace(/```[^]*?```/g, '');
    for (const m of text.matchAll(LINK)) {
      const target = (m[1] ?? m[2])!;
      const where = `${relative(root, file)}: ${target}`;
      if (target.startsWith('#')) continue;
      if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(target)) {
        bad.push(`${where} leaves the repository`);
        continue;
      }
      const path = resolve(dirname(file), target.split('#')[0]!);
      if (relative(root, path).startsWith('..')) bad.push(`${where} points above the repository`);
      else if (!existsSync(path)) bad.push(`${where} does not exist`);
    }
  }
  assert.equal(bad, []);
});

test("the README's Layout section names exactly the repository's top-level folders", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /## Layout\n+```\n([^]*?)```/.exec(readme);
  assert.ok(block, 'README.md has a Layout section with a tree');
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
