/**
 * The package as a user gets it: `npm pack` (prepack runs the build), the tarball installed without
 * the network into an empty app, and there: the README quick start (TypeScript) type-checked strictly and
 * run under plain node (types stripped) with memory and lowdb storage, a strict TypeScript consumer, and
 * the installed `kw` serving the demo token and the prebuilt document editor (mounted in Chromium when
 * there is one), and `npx kw bench` run in-process and against the installed `kw serve`, its page
 * opened in Chromium.
 * @remarks Offline: the app's dependencies come from the npm cache that `npm ci` filled (see
 * scripts/pack-app.ts). When the install still cannot work offline the tests say why and stop.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chromiumAvailable, launchChromium } from './chromium-kit.ts';
import { installOffline, pack, type Packed } from './pack-app.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const test = suite('the packed package in an empty app');

let work = '';
let app = '';
let packed: Packed | null = null;
let skip: string | null = null;
let typecheck: Promise<{ ok: boolean; output: string }> | null = null;

/** The README's quick start: the code block whose first line names quick-start.ts. */
async function quickStart(): Promise<string> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const block = /```ts\n(\/\/ quick-start\.ts[^\n]*\n[^]*?)```/.exec(readme);
  if (!block) throw new Error('README.md has no ```ts block starting with "// quick-start.ts"');
  return block[1]!;
}

/**
 * Every TypeScript recipe of README.md and docs/: each ```ts block whose code starts with `import`
 * (after comment lines) is a whole program a user can paste, so it must type-check on its own
 * against the installed package. Named `recipes/<document>-<n>.ts`.
 */
async function recipes(): Promise<{ name: string; code: string }[]> {
  const documents = ['README.md', ...(await readdir(join(root, 'docs'))).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
  const out: { name: string; code: string }[] = [];
  for (const document of documents) {
    const text = await readFile(join(root, document), 'utf8');
    let n = 0;
    for (const block of text.matchAll(/^```ts\n([^]*?)^```/gm)) {
      const code = block[1]!;
      const firstCode = code.split('\n').find((line) => line.trim() !== '' && !line.trim().startsWith('//'));
      if (!firstCode?.startsWith('import ')) continue;
      out.push({ name: `recipes/${document.replace(/^docs\//, '').replace(/\.md$/, '')}-${++n}.ts`, code });
    }
  }
  return out;
}

/** Packages the recipes import besides this one (mounting in Express, Fastify and Hono), installed at this repository's locked versions. */
const RECIPE_PACKAGES = ['express', '@types/express', 'fastify', 'hono', '@hono/node-server'];

/** TypeScript to an ES module for plain node: types stripped, nothing else changed (as tsx runs it). */
const stripTypes = (source: string): string =>
  ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true } }).outputText;

const CONSUMER = `import { createEngine, createApiHandler, isServiceError, type Engine, type DocumentView, type Storage } from 'knowledge-workspace';
import { contract, buildOpenApi, type SuccessBodyOf } from 'knowledge-workspace/contract';
import { createClient } from 'knowledge-workspace/client';
import { memoryStorage } from 'knowledge-workspace/adapters/memory';
import { lowdbStorage } from 'knowledge-workspace/adapters/lowdb';
import { createFetch } from 'knowledge-workspace/transports/inproc';
import { listen, type Listening } from 'knowledge-workspace/transports/http';
import type { StorageHarness } from 'knowledge-workspace/testing';
import { documentTopic, isStorageConflict, StorageConflictError, type BatchOp, type DocumentHead } from 'knowledge-workspace/ports';

const storage: Storage = process.argv[2] === 'lowdb' ? await lowdbStorage({ dir: './typed-data' }) : memoryStorage();
const engine: Engine = createEngine({ storage });
const actor = { accountId: 'me', credentialRef: null, documentRef: null };
const { document } = await engine.documents.create(actor, { idempotencyKey: 'create-typed-0001', body: { v: 1, title: 'Typed' } });
const view: DocumentView = document;
// The read's type follows the format literal.
const md = await engine.documents.read(actor, view.documentRef, 'markdown');
const text: string = md.markdown;
const lossCount: number = md.lossCount;
const blocks = await engine.documents.read(actor, view.documentRef, 'blocks');
const firstId: string | undefined = blocks.blocks[0]?.id;
const rich = await engine.documents.read(actor, view.documentRef);
const title: string = rich.document.title;
// The contract and the OpenAPI helpers have their own entry; the client's types come from it.
const path: string = contract.createDocument.path;
const created: SuccessBodyOf<typeof contract.createDocument> = { data: view, meta: { apiVersion: '1', requestId: 'req_0123456789abcdef' } } as never;
const paths = (buildOpenApi() as { paths: Record<string, unknown> }).paths;
const client = createClient({ baseUrl: 'http://kw.local', fetch: createFetch(createApiHandler({ engine })) });
const principal = (await client.getAuth()).body?.data.label;
console.log(text.length, lossCount, firstId, title, path, typeof created, Object.keys(paths).length, principal);
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
// The storage port in full, for an adapter's author: a conflict of a batch is recognised by name.
const head: DocumentHead | null = await storage.getDocumentHead(view.documentRef);
const append: BatchOp = { kind: 'document.append', head: { ...head!, version: 1 }, update: new Uint8Array([0, 0]) };
try {
  await storage.commit([append]);
} catch (error) {
  console.log(isStorageConflict(error), error instanceof StorageConflictError, documentTopic(view.documentRef).length > 0);
}
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
  files: ['consumer.ts', 'quick-start.ts'],
};

/** The `--json` line of `kw serve`. */
interface Banner {
  url: string;
  signInUrl: string;
  demo: { token: string };
}

/** A running installed `kw serve`. */
interface KwServe {
  banner: Banner;
  stderr(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (a no-op once exited). */
  kill(): void;
}

/** Start the installed `kw serve --port 0 --json --seed demo --quiet` and read its JSON line. */
async function startKw(): Promise<KwServe> {
  const child = spawn(join(app, 'node_modules/.bin/kw'), ['serve', '--port', '0', '--json', '--seed', 'demo', '--quiet'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const kill = () => void child.kill('SIGKILL');
  try {
    const first = await Promise.race([
      new Promise<string>((done) => createInterface({ input: child.stdout }).once('line', done)),
      exited.then((code) => Promise.reject(new Error(`kw exited with ${code}: ${stderr}`))),
      new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`no JSON line within 60 s: ${stderr}`)), 60_000)),
    ]);
    return { banner: JSON.parse(first) as Banner, stderr: () => stderr, stop: () => (child.kill('SIGTERM'), exited), kill };
  } catch (error) {
    kill();
    throw error;
  }
}

/**
 * Sign in with `signInUrl` in headless Chromium, open the document page at `href` and wait for the
 * BlockNote editor to be ready; resolves with the page's script errors and failed requests ('' for none).
 */
async function editorMounts(signInUrl: string, href: string): Promise<string> {
  const browser = await launchChromium(join(work, 'chromium'));
  try {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('response', (r) => {
      if (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico') problems.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(signInUrl);
    await page.goto(href);
    await page.locator('#editor.bn-editor[data-state="ready"] .bn-block-content').first().waitFor({ timeout: 30_000 });
    return problems.join('\n');
  } finally {
    await browser.close();
  }
}

test.before(async () => {
  work = await mkdtemp(join(tmpdir(), 'kw-pack-'));
  app = join(work, 'app');
  await mkdir(app);
  packed = await pack(work);
  try {
    await installOffline(app, packed.tarball, ['fast-check', 'uvu', ...RECIPE_PACKAGES]);
  } catch (error) {
    skip = `npm could not install the tarball offline (${String((error as { stderr?: string }).stderr ?? error).trim().split('\n').slice(-3).join(' ')})`;
    console.log(`\n  skipped: ${skip}`);
    return;
  }
  // The type check is the slow part: it runs while the other tests do.
  await writeFile(join(app, 'consumer.ts'), CONSUMER);
  await writeFile(join(app, 'quick-start.ts'), await quickStart());
  await mkdir(join(app, 'recipes'));
  const docRecipes = await recipes();
  for (const r of docRecipes) await writeFile(join(app, r.name), r.code);
  const tsconfig = { ...STRICT_TSCONFIG, files: [...STRICT_TSCONFIG.files, ...docRecipes.map((r) => r.name)] };
  await writeFile(join(app, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
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
  assert.equal(files.filter((f) => /\.test\.|-kit\.|(^|\/)(bench|scripts|fixtures|app|\.ci)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts'))), []);
  for (const f of ['dist/kw.mjs', 'dist/editor/editor.js', 'dist/editor/editor.css', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/contract/index.js', 'dist/src/contract/index.d.ts', 'dist/adapters/conformance/index.js', 'dist/transports/http/index.d.ts']) {
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
  await writeFile(join(app, 'quick-start.mjs'), stripTypes(await quickStart()));
  for (const args of [[], ['lowdb']]) {
    const { stdout } = await run(process.execPath, ['quick-start.mjs', ...args], { cwd: app });
    assert.ok(stdout.includes('- [x] Write the tests'), stdout);
    assert.ok(stdout.trim().endsWith('PRECONDITION_FAILED'), stdout);
  }
});

test('plain node imports the contract entry: every operation as data, and the OpenAPI document from it', async () => {
  if (skip) return;
  const script = "const m = await import('knowledge-workspace/contract'); const doc = m.buildOpenApi(); console.log(Object.keys(m.contract).length, m.contract.getDocument.path, doc.openapi);";
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app });
  assert.match(stdout.trim(), /^\d+ \/api\/v1\/documents\/\{documentRef\} 3\.1\.0$/);
  const root = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('knowledge-workspace'); console.log(['listOperations', 'buildOpenApi', 'defineOperation', 'documentDataJson'].filter((n) => n in m).join(',') || 'none');"], { cwd: app });
  assert.is(root.stdout.trim(), 'none', 'the root exports no contract or OpenAPI helper');
  const ports = await run(process.execPath, ['--input-type=module', '-e', "const p = await import('knowledge-workspace/ports'); const e = new p.StorageConflictError('taken', 0); console.log(p.isStorageConflict(e), typeof p.documentTopic('d'), Object.isFrozen(p.freezeRecordValue({ a: 1 })));"], { cwd: app });
  assert.is(ports.stdout.trim(), 'true string true', 'the storage port subpath runs in plain node');
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
  const kwServe = await startKw();
  try {
    assert.match(kwServe.banner.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${kwServe.banner.url}/api/v1/auth`, { headers: { authorization: `Bearer ${kwServe.banner.demo.token}` } });
    assert.is(res.status, 200);
    assert.is(((await res.json()) as { data: { label: string } }).data.label, 'Demo agent');
    assert.is(await kwServe.stop(), 0, kwServe.stderr());
  } finally {
    kwServe.kill();
  }
});

test('the installed kw serves the prebuilt editor: editor.js and its chunks as JavaScript, editor.css as CSS, and (with Chromium) the document page mounts it', async () => {
  if (skip) return;
  const kwServe = await startKw();
  try {
    const { url, demo } = kwServe.banner;
    const asset = async (name: string) => {
      const res = await fetch(`${url}/assets/editor/${name}`);
      return { status: res.status, type: res.headers.get('content-type'), cache: res.headers.get('cache-control'), text: await res.text() };
    };
    const js = await asset('editor.js');
    assert.equal([js.status, js.type, js.cache], [200, 'text/javascript; charset=utf-8', 'no-cache']);
    const css = await asset('editor.css');
    assert.equal([css.status, css.type, css.cache], [200, 'text/css; charset=utf-8', 'no-cache']);
    assert.ok(css.text.includes('.bn-'), 'BlockNote styles');
    const chunks = [...new Set(js.text.match(/chunk-[A-Z0-9]+\.js/g) ?? [])];
    assert.ok(chunks.length > 0, 'editor.js imports its chunks');
    for (const chunk of chunks) {
      const got = await asset(chunk);
      assert.equal([chunk, got.status, got.type, got.cache], [chunk, 200, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable']);
    }
    if (chromiumAvailable('scripts/package.test.ts (the packed editor in Chromium)')) {
      const list = await fetch(`${url}/api/v1/documents`, { headers: { authorization: `Bearer ${demo.token}` } });
      const { data } = (await list.json()) as { data: { items: { browserHref: string }[] } };
      assert.is(await editorMounts(kwServe.banner.signInUrl, data.items[0]!.browserHref), '');
    }
    assert.is(await kwServe.stop(), 0, kwServe.stderr());
  } finally {
    kwServe.kill();
  }
});

/**
 * Open a `kw bench --html` page in headless Chromium from a file URL; resolves with every request it
 * made beyond itself, its script errors, and how many SVG charts it shows.
 */
async function benchPageInChromium(file: string): Promise<{ requests: string[]; errors: string[]; charts: number; title: string }> {
  const browser = await launchChromium(join(work, 'chromium'));
  try {
    const page = await browser.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    const self = pathToFileURL(file).href;
    page.on('request', (r) => {
      if (r.url() !== self) requests.push(r.url());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(self);
    const charts = await page.locator('figure svg polyline, figure svg rect').count();
    return { requests, errors, charts, title: await page.title() };
  } finally {
    await browser.close();
  }
}

test('npx kw bench in the app: a short edit run in-process and against an installed kw serve URL, the JSON result and the HTML page (in Chromium)', async () => {
  if (skip) return;
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  const bench = (args: string[]) => run(npx, ['--no-install', 'kw', 'bench', ...args], { cwd: app, maxBuffer: 16 * 1024 * 1024 });
  assert.match((await bench(['--help'])).stdout, /^Usage: npx kw bench \[WORKLOAD\] \[options\]/);
  const local = await bench(['edit', '--duration', '1', '--warmup', '0.5', '--clients', '2', '--baseline', '--json', 'local.json', '--html', 'local.html']);
  assert.match(local.stdout, /kw bench edit: in-process memory; closed model, 2 clients/);
  assert.match(local.stderr, /measuring/);
  const r = JSON.parse(await readFile(join(app, 'local.json'), 'utf8')) as { v: number; workload: string; throughput: number; operations: Record<string, unknown>; baseline: { kind: string; ratio: number } | null };
  assert.equal([r.v, r.workload, r.baseline?.kind], [1, 'edit', 'raw-yjs']);
  assert.ok(r.throughput > 0 && r.baseline!.ratio > 0 && 'edit' in r.operations);
  const kwServe = await startKw();
  try {
    const { url, demo } = kwServe.banner;
    const remote = await bench(['edit', '--url', url, '--token', demo.token, '--duration', '1', '--warmup', '0.5', '--clients', '2', '--json', 'remote.json', '--html', 'remote.html']);
    assert.match(remote.stdout, new RegExp(`kw bench edit: ${url.replace(/[.]/g, '\\.')}; closed model`));
    const h = JSON.parse(await readFile(join(app, 'remote.json'), 'utf8')) as { target: string; throughput: number; errors: Record<string, number> };
    assert.equal([h.target, h.errors], [url, {}]);
    assert.ok(h.throughput > 0);
    assert.is(await kwServe.stop(), 0, kwServe.stderr());
  } finally {
    kwServe.kill();
  }
  if (chromiumAvailable('scripts/package.test.ts (the kw bench page in Chromium)')) {
    for (const page of ['local.html', 'remote.html']) {
      const shown = await benchPageInChromium(join(app, page));
      assert.equal([shown.requests, shown.errors], [[], []], page);
      assert.ok(shown.charts >= 3, `${page}: ${shown.charts} chart marks`);
      assert.match(shown.title, /^kw bench edit: /);
    }
  }
});

test('the docs hold a whole-program recipe for mounting in Express, Fastify and Hono, the browser app, co-editing, MCP and the worker', async () => {
  const all = (await recipes()).map((r) => r.code).join('\n');
  for (const [what, pattern] of [
    ['Express', /from 'express'/],
    ['Fastify', /from 'fastify'/],
    ['Hono', /from 'hono'/],
    ['the browser app', /createBrowserApp\(/],
    ['co-editing', /attachSync\(/],
    ['MCP', /mountMcp\(/],
    ['the worker', /from 'knowledge-workspace\/transports\/worker'/],
  ] as const) {
    assert.match(all, pattern, `a recipe for ${what}`);
  }
});

test('a strict TypeScript consumer, the README quick start and every recipe of README.md and docs/ (NodeNext, noUncheckedIndexedAccess, exactOptionalPropertyTypes) type-check', async () => {
  if (skip) return;
  const result = await typecheck!;
  assert.ok(result.ok, result.output);
});

test.run();
