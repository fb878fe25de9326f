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
      // src/client/ is derived from the contract (src/contract), never from the server's src/api/.
      if (from === 'src' && !rel.startsWith('src/api/') && rel !== 'src/index.ts' && target.startsWith('src/api/') && target !== 'src/api/types.ts') {
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

/** Every non-test module `start` reaches through relative imports, and the packages they import. */
function closure(start: readonly string[]): { modules: Set<string>; packages: Map<string, string> } {
  const modules = new Set<string>();
  const packages = new Map<string, string>();
  const queue = [...start];
  while (queue.length) {
    const rel = queue.pop()!;
    if (modules.has(rel) || isTest(rel)) continue;
    modules.add(rel);
    for (const spec of importsOf(join(root, rel))) {
      if (spec.startsWith('.')) queue.push(relative(root, resolve(dirname(join(root, rel)), spec)));
      else if (!packages.has(spec)) packages.set(spec, rel);
    }
  }
  return { modules, packages };
}

const rels = files.map((f) => relative(root, f)).filter((f) => !isTest(f));

/** The modules the contract may stand on: schema modules and the pure facts they use (ids, limits, errors, states). */
const SHARED_SCHEMA_MODULE =
  /^src\/(ids|values|schema-builders|limits|errors|validation|text|canonical-json)\.ts$|^src\/[a-z-]+\/([a-z-]+-)?schemas?\.ts$|^src\/(jobs|knowledge)\/states\.ts$|^src\/jobs\/event-kinds\.ts$|^src\/blocks\/model\.ts$|^src\/knowledge\/duration\.ts$|^src\/auth\/scopes\.ts$|^src\/library\/capture-port\.ts$/;

test('src/contract/ imports only valibot and shared schema modules: no src/api, no domain service', () => {
  const { modules, packages } = closure(rels.filter((f) => f.startsWith('src/contract/')));
  const outside = [...modules].filter((m) => !m.startsWith('src/contract/') && !SHARED_SCHEMA_MODULE.test(m));
  assert.equal(outside, [], 'every module the contract reaches is a shared schema module');
  assert.ok(![...modules].some((m) => m.startsWith('src/api/')), 'the contract never reaches src/api/');
  const pkgs = [...packages].filter(([name, by]) => name !== 'valibot' && !(name === '@valibot/to-json-schema' && by === 'src/contract/openapi.ts'));
  assert.equal(pkgs, [], 'valibot only (and the JSON Schema converter for the OpenAPI generator)');
});

test('the client, the MCP tools and /openapi.json read the contract, never the server bindings', () => {
  const server = (m: string) => m === 'src/api/bindings.ts' || m === 'src/api/bind.ts' || m.startsWith('src/api/operations/') || m === 'src/api/handler.ts';
  const client = closure(rels.filter((f) => f.startsWith('src/client/')));
  assert.equal([...client.modules].filter((m) => m.startsWith('src/api/')), [], 'src/client/ reaches nothing of src/api/');
  assert.equal([...client.packages.keys()].filter((p) => p !== 'ky' && p !== 'valibot'), [], 'src/client/ uses ky and valibot only');
  const mcp = closure(rels.filter((f) => f.startsWith('transports/mcp/')));
  assert.ok(mcp.modules.has('transports/mcp/catalog.ts'));
  assert.equal([...mcp.modules].filter(server), [], 'the MCP catalog reaches no server binding');
  const openapi = closure(['src/api/openapi.ts']);
  assert.equal([...openapi.modules].filter((m) => !m.startsWith('src/contract/') && m !== 'src/api/openapi.ts' && !SHARED_SCHEMA_MODULE.test(m)), [], '/openapi.json is generated from the contract alone');
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

/**
 * The edges (transports/: http, inproc, worker, mcp, sync, web) reach the engine through its public
 * type and the contract only: never `engineInternals` or `engine.deps` (its storage, clock, ids), and
 * never the storage port or the engine's dependencies (src/ports.ts, src/deps.ts) or a domain's
 * storage records: what an edge needs is a public engine service. Test kits and the black-box
 * conformance suite build fixtures and are left out.
 */
/** Never imported by an edge. */
const EDGE_FORBIDDEN = ['src/ports.ts', 'src/deps.ts'];
/** The modules holding a domain's storage records: an edge may name their types (what public services return), never their values (collections, keys). */
const EDGE_TYPES_ONLY = ['src/jobs/store.ts', 'src/knowledge/records.ts', 'src/live/leases.ts', 'src/auth/credentials.ts', 'src/auth/sessions.ts'];
const STATEMENT = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^'"]*?from\s*['"]([^'"]+)['"]/g;

test('edges use the public engine: no engineInternals, no engine.deps, no storage port, no storage records', () => {
  const edges = rels.filter((f) => f.startsWith('transports/') && !isTest(f) && !f.endsWith('-kit.ts') && !f.startsWith('transports/conformance/'));
  assert.ok(edges.length > 30, `only ${edges.length} edge files found`);
  const inside = /\bengineInternals\b|\.deps\b/;
  assert.equal(edges.filter((f) => inside.test(readFileSync(join(root, f), 'utf8'))), [], 'an edge reaches inside the engine');
  const reaching: string[] = [];
  for (const f of edges) {
    for (const m of readFileSync(join(root, f), 'utf8').matchAll(STATEMENT)) {
      const spec = m[2]!;
      if (!spec.startsWith('.')) continue;
      const target = relative(root, resolve(dirname(join(root, f)), spec));
      if (EDGE_FORBIDDEN.includes(target) || (EDGE_TYPES_ONLY.includes(target) && m[1] === undefined)) reaching.push(`${f} imports ${target}`);
    }
  }
  assert.equal(reaching, [], "an edge imports the storage port, the engine's deps or a domain's storage records");
});

test.run();
