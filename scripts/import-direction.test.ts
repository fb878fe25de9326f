/**
 * Holds the dependency direction of the design (docs/architecture.md, Layout): app → transports → src/api → src domains → ports ←
 * adapters. Reads every import of every source file; fails on an edge against the direction or on a
 * cycle. The rooms: src/ (the engine) imports only itself; adapters/ only src/; transports/ (listeners
 * and the transport conformance suite) only src/; app/ (the dev server's composition and the kw CLI)
 * may import everything, and nothing but the build and benchmark scripts imports app/.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '..');
const layers = ['src', 'adapters', 'transports', 'app', 'fixtures', 'bench', 'scripts'] as const;
type Layer = (typeof layers)[number];

/** Which layers each layer may import (besides packages). */
const allowed: Record<Layer, Layer[]> = {
  src: ['src'],
  adapters: ['src', 'adapters'],
  transports: ['src', 'transports'],
  app: [...layers],
  fixtures: ['src', 'adapters', 'transports', 'fixtures'],
  bench: [...layers],
  scripts: [...layers],
};

/** node:* built-ins allowed inside src/, with the reason. */
const srcNodeExceptions = new Map([['src/hash.ts', 'node:crypto is loaded dynamically only on Node, for a 10x faster SHA-256']]);

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
}

const files: string[] = [];
for (const l of layers) {
  try {
    walk(join(root, l), files);
  } catch {
    /* layer not present yet */
  }
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push((m[1] ?? m[2])!);
  return out;
}

const layerOf = (rel: string) => rel.split('/')[0] as Layer;
const isTest = (rel: string) => rel.endsWith('.test.ts');

test('every import follows the layer direction', () => {
  const violations: string[] = [];
  for (const file of files) {
    const rel = relative(root, file);
    const from = layerOf(rel);
    for (const spec of importsOf(file)) {
      if (spec.startsWith('node:')) {
        if (from === 'src' && !isTest(rel) && !srcNodeExceptions.has(rel)) violations.push(`${rel} imports ${spec}: src/ stays free of Node-only modules`);
        continue;
      }
      if (!spec.startsWith('.')) continue;
      const target = relative(root, resolve(dirname(file), spec));
      if (target === 'package.json' && (from === 'app' || from === 'scripts')) continue; // the version kw prints
      const to = layerOf(target);
      if (!(layers as readonly string[]).includes(to)) {
        violations.push(`${rel} imports ${target}: outside the source folders`);
        continue;
      }
      // Tests may reach any layer to build what they test, except app/: only app/ itself, the build
      // and the benchmarks depend on the dev server's composition.
      if (to === 'app' && !['app', 'bench', 'scripts'].includes(from)) violations.push(`${rel} imports ${target}: nothing below app/ may depend on it`);
      if (isTest(rel)) continue;
      if (!allowed[from].includes(to)) violations.push(`${rel} imports ${target}: ${from}/ must not depend on ${to}/`);
      // src/client/ is derived from the operation registry (typed inputs and results), so it reads src/api/.
      if (from === 'src' && !rel.startsWith('src/api/') && !rel.startsWith('src/client/') && rel !== 'src/index.ts' && target.startsWith('src/api/') && target !== 'src/api/types.ts') {
        violations.push(`${rel} imports ${target}: domains must not depend on the API layer (only the public entry src/index.ts re-exports it)`);
      }
    }
  }
  assert.equal(violations, []);
});

test('the rooms exist: the listener in transports/http, the transport suite in transports/conformance, the composition in app', () => {
  const rooms = new Set(files.map((f) => dirname(relative(root, f))));
  for (const room of ['transports/http', 'transports/conformance', 'transports/inproc', 'app', 'adapters/memory', 'adapters/lowdb']) assert.ok(rooms.has(room), `${room}/ holds source files`);
  const composition = files.map((f) => relative(root, f)).filter((f) => f.startsWith('transports/') && /(serve|cli)(\.test)?\.ts$/.test(f));
  assert.equal(composition, [], 'the dev server and the CLI live in app/');
  for (const room of ['adapters/worker-proxy', 'adapters/conformance', 'adapters/capture']) assert.ok(rooms.has(room), `${room}/ holds source files`);
  const rels = files.map((f) => relative(root, f));
  assert.ok(rels.includes('app/demo-seed.ts'), 'the demo seed ships with the CLI, so it lives in app/');
  assert.not.ok(rels.includes('adapters/conformance.ts'), 'the storage conformance suite is one folder, adapters/conformance/');
});

test('test kits follow one naming convention: <subject>-kit.ts', () => {
  const odd = files
    .map((f) => relative(root, f))
    .filter((f) => /(^|\/)(test-kit|kit)\.ts$|\.test-support\.ts$|-kit\.test-support\.ts$/.test(f));
  assert.equal(odd, []);
});

test('there are no import cycles among non-test modules', () => {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const rel = relative(root, file);
    if (isTest(rel)) continue;
    graph.set(
      rel,
      importsOf(file)
        .filter((s) => s.startsWith('.'))
        .map((s) => relative(root, resolve(dirname(file), s))),
    );
  }
  const state = new Map<string, 1 | 2>();
  const cycles: string[] = [];
  const visit = (node: string, path: string[]) => {
    if (state.get(node) === 2) return;
    if (state.get(node) === 1) {
      cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
      return;
    }
    state.set(node, 1);
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, 2);
  };
  for (const node of graph.keys()) visit(node, []);
  assert.equal(cycles, []);
});

test.run();
