/**
 * markdown-it is used below its public API (src/blocks/inline-markdown-parser.ts replaces inline rules
 * and reads the inline parse state), which its semver does not cover: package.json must name one exact
 * version, the one installed and locked, and only that module may import markdown-it outside tests.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '..');
const readJson = (path: string): Record<string, unknown> => JSON.parse(readFileSync(join(root, path), 'utf8')) as Record<string, unknown>;

/** The one module allowed to import markdown-it (its module comment states the boundary). */
const BOUNDARY = 'src/blocks/inline-markdown-parser.ts';

/** Whether an npm dependency specifier names exactly one version (no range, tag, URL or prerelease range). */
function isExactVersion(spec: string): boolean {
  return /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(spec);
}

test('isExactVersion accepts only one exact version', () => {
  for (const spec of ['14.3.3', '1.0.0', '2.0.0-rc.1']) assert.ok(isExactVersion(spec), spec);
  for (const spec of ['^14.1.0', '~14.3.3', '14.x', '14', '>=14.3.3', '14.3.3 || 15.0.0', '*', 'latest', '', 'v14.3.3', '=14.3.3']) {
    assert.not.ok(isExactVersion(spec), spec);
  }
});

test('package.json pins markdown-it to the exact version installed and locked', () => {
  const deps = readJson('package.json').dependencies as Record<string, string>;
  const spec = deps['markdown-it'];
  assert.type(spec, 'string', 'markdown-it is a runtime dependency');
  assert.ok(isExactVersion(spec!), `package.json allows markdown-it "${spec}": pin one exact version (npm install markdown-it@<version> --save-exact)`);
  const installed = readJson('node_modules/markdown-it/package.json').version;
  assert.is(spec, installed, 'the pinned version is the installed one');
  const lock = readJson('package-lock.json') as { packages: Record<string, { version?: string; dependencies?: Record<string, string> }> };
  assert.is(lock.packages['']!.dependencies!['markdown-it'], spec, 'package-lock.json records the same pin');
  assert.is(lock.packages['node_modules/markdown-it']!.version, spec, 'package-lock.json locks that version');
});

function sources(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

test('only the boundary module imports markdown-it outside tests', () => {
  const importers: string[] = [];
  for (const dir of ['src', 'adapters', 'transports', 'app', 'fixtures', 'bench', 'scripts']) {
    for (const file of sources(join(root, dir), [])) {
      if (/\bfrom\s+['"]markdown-it(?:\/[^'"]*)?['"]|import\(\s*['"]markdown-it/.test(readFileSync(file, 'utf8'))) importers.push(relative(root, file));
    }
  }
  assert.equal(importers, [BOUNDARY]);
  assert.match(readFileSync(join(root, BOUNDARY), 'utf8'), 'The markdown-it boundary', 'its module comment states the boundary');
});

test.run();
