/**
 * The package as a user gets it: `npm pack` (prepack runs the build), the tarball installed without
 * the network into an empty app, and there: the README quick start under plain node with memory and
 * lowdb storage, a strict TypeScript consumer, and the installed `kw` serving the demo token.
 * @remarks Offline: the app's dependencies come from the npm cache that `npm ci` filled (see
 * scripts/pack-app.ts). When the install still cannot work offline the tests say why and stop.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { installOffline, pack, type Packed } from './pack-app.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const test = suite('the packed package in an empty app');

let work = '';
let app = '';
let packed: Packed | null = null;
let skip: string | null = null;
let typecheck: Promise<{ ok: boolean; output: string }> | null = null;

/** The README's quick start: the code block whose first line names quick-start.mjs. */
async function quickStart(): Promise<string> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const block = /```js\n(\/\/ quick-start\.mjs[^\n]*\n[^]*?)```/.exec(readme);
  if (!block) throw new Error('README.md has no ```js block starting with "// quick-start.mjs"');
  return block[1]!;
}

const CONSUMER = `import { createEngine, createApiHandler, isServiceError, type Engine, type DocumentView, type Storage } from 'knowledge-workspace';
import { memoryStorage } from 'knowledge-workspace/adapters/memory';
import { lowdbStorage } from 'knowledge-workspace/adapters/lowdb';
import { createFetch } from 'knowledge-workspace/transports/inproc';
import { listen, type Listening } from 'knowledge-workspace/transports/http';
import type { StorageHarness } from 'knowledge-workspace/testing';

const storage: Storage = process.argv[2] === 'lowdb' ? await lowdbStorage({ dir: './typed-data' }) : memoryStorage();
const engine: Engine = createEngine({ storage });
const actor = { accountId: 'me', credentialRef: null, documentRef: null };
const { document } = await engine.documents.create(actor, { idempotencyKey: 'create-typed-0001', body: { v: 1, title: 'Typed' } });
const view: DocumentView = document;
try {
  await engine.documents.mutate(actor, view.documentRef, { idempotencyKey: 'mutate-typed-0001', ifRevision: 'stale', body: {} });
} catch (error) {
  if (isServiceError(error)) console.log(error.code, error.fieldErrors?.[0]?.field);
}
const answer: Response = await createFetch(createApiHandler({ engine }))('http://kw.local/api/v1/auth');
const server: Listening = await listen(createApiHandler({ engine }), { port: 0 });
await server.close();
const harness: StorageHarness = { storage, teardown: () => engine.close() };
console.log(answer.status, typeof harness.teardown);
`;

const CONFORMANCE = `import { storageConformance } from 'knowledge-workspace/testing';
import { memoryStorage } from 'knowledge-workspace/adapters/memory';

storageConformance('memory, installed', async () => {
  const storage = memoryStorage();
  return { storage, teardown: async () => { await storage.close().catch(() => {}); } };
});
`;

const STRICT_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    lib: ['ES2023', 'DOM'],
    // The consumer's own @types/node; this repository's copy stands in for it.
    typeRoots: [join(root, 'node_modules/@types')],
    types: ['node'],
  },
  files: ['consumer.ts'],
};

test.before(async () => {
  work = await mkdtemp(join(tmpdir(), 'kw-pack-'));
  app = join(work, 'app');
  await mkdir(app);
  packed = await pack(work);
  try {
    await installOffline(app, packed.tarball, ['fast-check', 'uvu']);
  } catch (error) {
    skip = `npm could not install the tarball offline (${String((error as { stderr?: string }).stderr ?? error).trim().split('\n').slice(-3).join(' ')})`;
    console.log(`\n  skipped: ${skip}`);
    return;
  }
  // The type check is the slow part: it runs while the other tests do.
  await writeFile(join(app, 'consumer.ts'), CONSUMER);
  await writeFile(join(app, 'tsconfig.json'), JSON.stringify(STRICT_TSCONFIG, null, 2));
  typecheck = run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', app], { cwd: app }).then(
    () => ({ ok: true, output: '' }),
    (error: { stdout?: string; message: string }) => ({ ok: false, output: error.stdout || error.message }),
  );
});

test.after(async () => {
  await typecheck;
  if (work) await rm(work, { recursive: true, force: true });
});

test('the tarball holds the build, docs, README and manifest: no sources, tests, benchmarks or CI files', () => {
  const files = packed!.files;
  const strays = files.filter((f) => !/^(dist|docs)\//.test(f) && f !== 'README.md' && f !== 'package.json' && f !== 'LICENSE');
  assert.equal(strays, []);
  // src/schema-kit.ts is engine code (valibot helpers of the schemas), not a test kit.
  assert.equal(files.filter((f) => /\.test\.|(?<!\/schema)-kit\.|(^|\/)(bench|scripts|fixtures|app|\.ci)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts'))), []);
  for (const f of ['dist/kw.mjs', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/adapters/conformance/index.js', 'dist/transports/http/index.d.ts']) {
    assert.ok(files.includes(f), `${f} is packed`);
  }
});

test('every module of the installed package imports only node built-ins, its dependencies and (the conformance suite) its optional peers', async () => {
  if (skip) return;
  const installed = join(app, 'node_modules/knowledge-workspace');
  const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; peerDependencies: Record<string, string> };
  const allowed = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)]);
  const strays: string[] = [];
  for (const file of packed!.files.filter((f) => f.endsWith('.js') || f.endsWith('.mjs'))) {
    const text = await readFile(join(installed, file), 'utf8');
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"./][^'"]*)['"]|import\(\s*['"]([^'"./][^'"]*)['"]\s*\)/g)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.includes('${')) continue; // text of generated code inside a template (pdf.js), not an import
      const name = spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
      if (!spec.startsWith('node:') && !allowed.has(name)) strays.push(`${file} imports ${spec}`);
    }
  }
  assert.equal(strays, []);
});

test('plain node runs the README quick start with memory and with lowdb storage', async () => {
  if (skip) return;
  await writeFile(join(app, 'quick-start.mjs'), await quickStart());
  for (const args of [[], ['lowdb']]) {
    const { stdout } = await run(process.execPath, ['quick-start.mjs', ...args], { cwd: app });
    assert.ok(stdout.includes('- [x] Write the tests'), stdout);
    assert.ok(stdout.trim().endsWith('PRECONDITION_FAILED'), stdout);
  }
});

test("an embedder's adapter test runs the installed storage conformance suite (uvu and fast-check installed as its peers)", async () => {
  if (skip) return;
  await writeFile(join(app, 'conformance.mjs'), CONFORMANCE);
  const { stdout } = await run(process.execPath, ['conformance.mjs'], { cwd: app });
  const plain = stdout.replace(/\x1b\[[0-9;]*m/g, '');
  const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1]);
  assert.ok(total > 10, plain);
  assert.is(Number(/Passed:\s+(\d+)/.exec(plain)?.[1]), total, plain);
});

test('the installed kw prints its version and serves: serve --port 0 --json, GET /api/v1/auth with the demo token', async () => {
  if (skip) return;
  const kw = join(app, 'node_modules/.bin/kw');
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
  assert.is((await run(kw, ['--version'], { cwd: app })).stdout.trim(), manifest.version);
  assert.match((await run(kw, ['serve', '--help'], { cwd: app })).stdout, /^Usage: npx kw serve \[options\]/);
  const usage = await run(kw, ['serve', '--nope'], { cwd: app }).then(
    (): { code: number; stdout: string; stderr: string } => assert.unreachable('a usage error exits 2') as never,
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  assert.equal([usage.code, usage.stdout, usage.stderr], [2, '', 'kw: unknown option --nope (see npx kw serve --help)\n']);
  const child = spawn(kw, ['serve', '--port', '0', '--json', '--seed', 'demo', '--quiet'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  try {
    const first = await Promise.race([
      new Promise<string>((done) => createInterface({ input: child.stdout }).once('line', done)),
      exited.then((code) => Promise.reject(new Error(`kw exited with ${code}: ${stderr}`))),
      new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`no JSON line within 10 s: ${stderr}`)), 10_000)),
    ]);
    const banner = JSON.parse(first) as { url: string; demo: { token: string } };
    assert.match(banner.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${banner.url}/api/v1/auth`, { headers: { authorization: `Bearer ${banner.demo.token}` } });
    assert.is(res.status, 200);
    assert.is(((await res.json()) as { data: { label: string } }).data.label, 'Demo agent');
    child.kill('SIGTERM');
    assert.is(await exited, 0, stderr);
  } finally {
    child.kill('SIGKILL');
  }
});

test('a strict TypeScript consumer (NodeNext, noUncheckedIndexedAccess, exactOptionalPropertyTypes) type-checks', async () => {
  if (skip) return;
  const result = await typecheck!;
  assert.ok(result.ok, result.output);
});

test.run();
