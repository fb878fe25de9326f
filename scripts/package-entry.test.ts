/**
 * The package manifest matches the code: every `exports` subpath points at the build of a source
 * entry, the `kw` bin at the bundle, and the runtime dependencies are exactly the packages the
 * public entries import (the optional peers only by the conformance suite). Static and fast; the
 * packed-and-installed check is scripts/package.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  files: string[];
  exports: Record<string, string | { types: string; import: string }>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/** `./dist/adapters/memory/index.js` → `adapters/memory/index.ts`. */
const sourceOf = (built: string) => built.replace(/^\.\/dist\//, '').replace(/\.d\.ts$|\.js$/, '.ts');
const entries = Object.entries(manifest.exports).filter((e): e is [string, { types: string; import: string }] => typeof e[1] !== 'string');

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
const builtins = new Set(builtinModules);
const packageName = (spec: string) => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');

/** The packages a source file's transitive relative imports reach, with the files importing each. */
function packagesReachedFrom(entry: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith('.')) visit(relative(root, resolve(dirname(join(root, file)), spec)));
      else if (!spec.startsWith('node:') && !builtins.has(spec)) {
        const name = packageName(spec);
        if (!out.has(name)) out.set(name, new Set());
        out.get(name)!.add(file);
      }
    }
  };
  visit(entry);
  return out;
}

test('every exports subpath has types and import conditions built from an existing source entry', () => {
  assert.ok(entries.length >= 6);
  const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  for (const [subpath, target] of entries) {
    assert.equal(Object.keys(target), ['types', 'import'], `${subpath}: types first, then import`);
    assert.match(target.import, /^\.\/dist\/.+\.js$/, subpath);
    assert.is(sourceOf(target.types), sourceOf(target.import), `${subpath}: .d.ts and .js of one module`);
    const source = sourceOf(target.import);
    assert.ok(existsSync(join(root, source)), `${subpath}: ${source} exists`);
    assert.ok(build.include.some((dir) => source.startsWith(`${dir}/`)), `${subpath}: tsconfig.build.json compiles ${source}`);
  }
  assert.equal(manifest.bin, { kw: './dist/kw.mjs' });
  assert.equal([...manifest.files].sort(), ['dist', 'docs']);
});

test('the runtime dependencies are exactly what the public entries import; test runners are optional peers of ./testing only', () => {
  const testing = sourceOf((manifest.exports['./testing'] as { import: string }).import);
  const runtime = new Map<string, Set<string>>();
  for (const [subpath, target] of entries) {
    for (const [name, files] of packagesReachedFrom(sourceOf(target.import))) {
      if (subpath === './testing' && !packagesReachedFrom(sourceOf((manifest.exports['.'] as { import: string }).import)).has(name)) {
        // reached only through the conformance suite: must be an optional peer
        assert.ok(manifest.peerDependenciesMeta?.[name]?.optional, `${name} (imported by ${[...files].join(', ')}) is an optional peer`);
        continue;
      }
      runtime.set(name, new Set([...(runtime.get(name) ?? []), ...files]));
    }
  }
  assert.equal([...runtime.keys()].sort(), Object.keys(manifest.dependencies).sort(), 'dependencies = packages the entries import');
  for (const peer of Object.keys(manifest.peerDependencies ?? {})) {
    assert.ok(manifest.peerDependenciesMeta?.[peer]?.optional, `${peer} is optional`);
    assert.ok(packagesReachedFrom(testing).has(peer), `${peer} is used by the conformance suite`);
    assert.ok(manifest.devDependencies[peer], `${peer} is installed for this repository's own tests`);
  }
});

test('the package root exports at most 50 names (values and types): what an embedder uses; the rest is on subpaths', () => {
  const file = join(root, 'src', 'index.ts');
  const program = ts.createProgram([file], { allowImportingTsExtensions: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true });
  const checker = program.getTypeChecker();
  const names = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)!)!).map((s) => s.name);
  assert.ok(names.length <= 50, `the root exports ${names.length} names: ${names.join(', ')}`);
  for (const name of ['createEngine', 'Engine', 'Storage', 'createApiHandler', 'isServiceError', 'Actor']) assert.ok(names.includes(name), `${name}, which the guides import from the root`);
});

test.run();
