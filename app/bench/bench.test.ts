import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freshDatabase, serverUnavailableReason } from '../../adapters/postgres/postgres-kit.ts';
import { main, type CliIO } from '../cli.ts';
import { startProcesses } from '../postgres-cluster-kit.ts';
import { compareResults, noiseOf } from './compare.ts';
import { parseBenchArgs } from './options.ts';
import type { BenchResult } from './result.ts';
import { runWorkload, type RunSettings } from './runner.ts';
import type { Answer, BenchTarget } from './targets.ts';
import { BUILT_IN, documentPicker, mixPicker, parseWorkload, seededRandom, zipfian } from './workloads.ts';

const root = resolve(import.meta.dirname, '../..');

function captureIO() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (l) => out.push(l), err: (l) => err.push(l) };
  return { io, out, err };
}

test('usage errors of kw bench: one line on stderr naming the problem, exit 2', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-test-'));
  const badFile = join(dir, 'bad.json');
  await writeFile(badFile, JSON.stringify({ v: 1, mix: { read: 1, fly: 2 } }));
  const zeroFile = join(dir, 'zero.json');
  await writeFile(zeroFile, JSON.stringify({ v: 1, mix: { read: 0 } }));
  const cases: [string[], RegExp][] = [
    [['bench', 'frobnicate'], /unknown workload "frobnicate": one of edit, read, mixed, read-mostly, structure, append, hot/],
    [['bench', 'edit', 'read'], /one workload at a time/],
    [['bench', '--clients', '0'], /--clients must be an integer from 1 to 1000, not "0"/],
    [['bench', '--clients', 'many'], /--clients must be an integer/],
    [['bench', '--rate', '-5'], /--rate must be a number/],
    [['bench', '--duration', 'ten'], /--duration must be a number/],
    [['bench', '--distribution', 'pareto'], /--distribution must be one of uniform, zipfian, partitioned, not "pareto"/],
    [['bench', '--storage', 'sqlite'], /--storage must be one of memory, lowdb, postgres/],
    [['bench', '--url', 'http://127.0.0.1:1'], /--url needs --token TOKEN \(or the environment variable KW_TOKEN\)/],
    [['bench', '--url', 'ftp://x', '--token', 't'], /--url must be http:\/\/ or https:\/\//],
    [['bench', '--url', 'not a url', '--token', 't'], /is not a URL/],
    [['bench', '--url', 'http://127.0.0.1:1', '--token', 't', '--storage', 'memory'], /--url and --storage exclude each other/],
    [['bench', '--token', 't'], /--token needs --url/],
    [['bench', '--data', 'x'], /--data needs --storage lowdb/],
    [['bench', '--storage', 'postgres'], /--storage postgres needs --database-url/],
    [['bench', '--frobnicate'], /unknown option --frobnicate/],
    [['bench', '--json'], /--json <value>' argument missing/],
    [['bench', 'hot', '--documents', '4'], /hot workload puts every client on one document/],
    [['bench', 'coedit', '--rate', '10'], /--rate does not apply to coedit \(its agents run closed/],
    [['bench', 'coedit', '--baseline'], /--baseline does not apply to coedit/],
    [['bench', 'coedit', '--documents', '3'], /--documents does not apply to coedit/],
    [['bench', 'coedit', '--editors', '0'], /--editors must be an integer from 1 to 100/],
    [['bench', 'edit', '--editors', '2'], /--editors is for the coedit workload/],
    [['bench', badFile], /bad\.json: mix: Invalid key: Expected never but received "fly"|bad\.json: mix/],
    [['bench', zeroFile], /at least one operation with a weight above 0/],
    [['bench', join(dir, 'missing.json')], /cannot read the workload file .*missing\.json: ENOENT/],
    [['bench', 'compare', 'a.json'], /compare takes two result files/],
    [['bench', 'compare', join(dir, 'missing.json'), badFile], /cannot read .*missing\.json/],
    [['bench', 'compare', badFile, badFile], /is not a kw bench result/],
  ];
  try {
    for (const [argv, expected] of cases) {
      const { io, out, err } = captureIO();
      assert.is(await main(argv, { ...io }), 2, argv.join(' '));
      assert.is(out.length, 0, argv.join(' '));
      assert.is(err.length, 1, `one line for ${argv.join(' ')}: ${err.join(' | ')}`);
      assert.match(err[0]!, expected);
      assert.match(err[0]!, /\(see .* bench --help\)$/);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  // KW_TOKEN stands in for --token; DATABASE_URL for --database-url.
  assert.equal(parseBenchArgs(['--url', 'http://127.0.0.1:9/'], { KW_TOKEN: 'tok' }).target, { kind: 'http', url: 'http://127.0.0.1:9', token: 'tok' });
  assert.equal(parseBenchArgs(['--storage', 'postgres'], { DATABASE_URL: 'postgres://x/y' }).target, { kind: 'postgres', databaseUrl: 'postgres://x/y' });
  const defaults = parseBenchArgs([], {});
  assert.equal([defaults.workload, defaults.target, defaults.clients, defaults.rate, defaults.durationS, defaults.warmupS], ['edit', { kind: 'memory' }, 8, null, 10, 2]);
});

test('kw bench --help lists every workload and option', async () => {
  const { io, out } = captureIO();
  assert.is(await main(['bench', '--help'], io), 0);
  const text = out.join('\n');
  for (const w of [...Object.keys(BUILT_IN), '--url', '--token', '--storage', '--data', '--database-url', '--clients', '--rate', '--duration', '--warmup', '--documents', '--editors', '--blocks', '--distribution', '--json', '--html', '--baseline', '--keep', 'compare']) {
    assert.ok(text.includes(w), w);
  }
  const top = captureIO();
  assert.is(await main(['--help'], top.io), 0);
  assert.match(top.out.join('\n'), /bench\s+benchmark mutation throughput/);
});

test('the zipfian sampler follows Zipf (theta 0.99): P(rank k) ∝ 1/k^0.99', () => {
  const n = 100;
  const draws = 200_000;
  const sample = zipfian(n, 0.99, seededRandom(7));
  const counts = new Array<number>(n).fill(0);
  for (let i = 0; i < draws; i++) {
    const k = sample();
    assert.ok(k >= 0 && k < n && Number.isInteger(k));
    counts[k]!++;
  }
  let zeta = 0;
  for (let i = 1; i <= n; i++) zeta += 1 / i ** 0.99;
  // The two ranks the generator computes exactly, and the head's share overall.
  for (const k of [0, 1]) {
    const expected = draws / (k + 1) ** 0.99 / zeta;
    assert.ok(Math.abs(counts[k]! - expected) < expected * 0.03, `rank ${k}: ${counts[k]} vs ${expected.toFixed(0)}`);
  }
  const head = counts.slice(0, 10).reduce((s, c) => s + c, 0) / draws;
  let headExpected = 0;
  for (let i = 1; i <= 10; i++) headExpected += 1 / i ** 0.99 / zeta;
  assert.ok(Math.abs(head - headExpected) < 0.03, `top 10: ${head} vs ${headExpected}`);
  assert.ok(counts[n - 1]! > 0 && counts[n - 1]! < counts[0]! / 20, 'the tail is drawn, rarely');
  assert.is(zipfian(1)(), 0);
});

test('document pickers: uniform covers all, partitioned keeps each client to its own documents', () => {
  const random = seededRandom(3);
  const uniform = documentPicker('uniform', 10, 4, random);
  const seen = new Set<number>();
  for (let i = 0; i < 1000; i++) seen.add(uniform(0));
  assert.is(seen.size, 10);
  const part = documentPicker('partitioned', 10, 4, random);
  for (let client = 0; client < 4; client++) {
    const mine = new Set<number>();
    for (let i = 0; i < 400; i++) mine.add(part(client));
    assert.equal([...mine].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].filter((d) => d % 4 === client), `client ${client}`);
  }
  const shared = documentPicker('partitioned', 2, 4, random);
  assert.equal([0, 1, 2, 3].map(shared), [0, 1, 0, 1]);
  const pick = mixPicker({ read: 95, edit: 5 }, seededRandom(11));
  let reads = 0;
  for (let i = 0; i < 20_000; i++) if (pick() === 'read') reads++;
  assert.ok(Math.abs(reads / 20_000 - 0.95) < 0.01, `${reads}`);
});

/** A target whose every operation takes `serviceMs` and succeeds, one at a time (a single server). */
function slowTarget(serviceMs: number): BenchTarget & { sent: number[] } {
  let busyUntil = 0;
  let version = 1;
  const sent: number[] = [];
  const answer = async (): Promise<Answer> => {
    const now = performance.now();
    sent.push(now);
    busyUntil = Math.max(busyUntil, now) + serviceMs;
    await new Promise((done) => setTimeout(done, busyUntil - now));
    return { status: 200, bytes: 10, revision: String(++version), created: ['b'] };
  };
  return {
    label: 'slow',
    kind: 'memory',
    persistent: false,
    sent,
    preflight: async () => ({ notes: [] }),
    createDocument: async () => ({ status: 201, bytes: 0, ref: 'd', revision: '1' }),
    read: answer,
    mutate: answer,
    close: async () => [],
  };
}

const settings = (over: Partial<RunSettings>): RunSettings => ({
  workload: BUILT_IN.edit!,
  clients: 1,
  rate: null,
  durationS: 1,
  warmupS: 0,
  documents: 1,
  blocks: 1,
  distribution: 'partitioned',
  keep: false,
  ...over,
});

test('open model: sends on schedule, and latency counts from the scheduled time (no coordinated omission)', async () => {
  // Under capacity: 20 ops/s on one lane, 5 ms each: about 20 operations, latency about the service time.
  const easy = slowTarget(5);
  const a = await runWorkload(easy, settings({ rate: 20, durationS: 1 }));
  assert.ok(a.successes >= 17 && a.successes <= 21, `${a.successes} operations at 20/s for 1 s`);
  assert.ok(a.latencyMs.p50 < 60, `p50 ${a.latencyMs.p50} ms`);
  const gaps = easy.sent.slice(2).map((t, i) => t - easy.sent[i + 1]!);
  const meanGap = gaps.reduce((s, g) => s + g, 0) / gaps.length;
  assert.ok(meanGap > 40 && meanGap < 60, `sends ~50 ms apart, mean ${meanGap.toFixed(1)} ms`);
  // Over capacity: 50 ops/s scheduled, 40 ms each (25/s at most). A closed loop would report ~40 ms;
  // from the schedule, the queue grows by 10 ms each operation: the late ones wait hundreds of ms.
  const hard = slowTarget(40);
  const b = await runWorkload(hard, settings({ rate: 50, durationS: 1 }));
  assert.ok(b.latencyMs.max > 300, `max ${b.latencyMs.max} ms grows with the backlog`);
  assert.ok(b.latencyMs.p50 > 100, `p50 ${b.latencyMs.p50} ms`);
  assert.ok(b.scheduleLagMs!.mean > 50, `schedule lag ${b.scheduleLagMs!.mean} ms`);
  // The closed model on the same target: latency is the service time.
  const c = await runWorkload(slowTarget(40), settings({ durationS: 0.6 }));
  // (the median: one late timer on a loaded machine moves the p99, not the p50; and below the open model's backlog)
  assert.ok(c.latencyMs.p50 < 80 && c.latencyMs.p99 < b.latencyMs.max, `closed p50 ${c.latencyMs.p50} ms, p99 ${c.latencyMs.p99} ms`);
  assert.is(c.scheduleLagMs, null);
});

test('a stopped run (Ctrl-C) ends at once and reports the part of the window it measured', async () => {
  const stop = new AbortController();
  setTimeout(() => stop.abort(), 600);
  const started = performance.now();
  const m = await runWorkload(slowTarget(2), settings({ durationS: 30, warmupS: 0.2, signal: stop.signal }));
  assert.ok(performance.now() - started < 5000, 'not the 30 s asked for');
  assert.ok(m.durationS > 0.1 && m.durationS < 2, `measured ${m.durationS} s`);
  assert.ok(Math.abs(m.throughput - m.successes / m.durationS) < 1, 'throughput over the time measured');
  assert.match(m.notes.join(' '), /stopped early: [\d.]+ s of the 30 s measured/);
});

function fakeResult(throughputs: number[], p50s: number[], p99s: number[]): BenchResult {
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const l = { p50: mean(p50s), p90: mean(p99s) * 0.8, p99: mean(p99s), p999: mean(p99s) * 1.5, max: mean(p99s) * 2 };
  return {
    v: 1,
    workload: 'edit',
    target: 'x',
    model: 'closed',
    clients: 1,
    rate: null,
    durationS: throughputs.length,
    throughput: mean(throughputs),
    latencyMs: l,
    operations: { edit: { count: 1, throughput: mean(throughputs), latencyMs: l, errors: 0, meanBytes: 0 } },
    errors: {},
    stale: 0,
    requestsPerSuccess: 1,
    baseline: null,
    samples: throughputs.map((t, i) => ({ t: i + 1, throughput: t, errors: 0, p50: p50s[i]!, p99: p99s[i]! })),
  } as unknown as BenchResult;
}

test('compare: a change within the per-second noise is within noise, a larger one is outside it', () => {
  assert.ok(Number.isNaN(noiseOf([1], [1, 2])));
  // sd 10 over 10 samples each: noise = 2·√(10²/10 + 10²/10) ≈ 8.9
  const a = fakeResult([990, 1010, 990, 1010, 990, 1010, 990, 1010, 990, 1010].map((x, i) => x + (i % 3) * 0), Array(10).fill(1), Array(10).fill(5));
  const near = fakeResult([995, 1015, 995, 1015, 995, 1015, 995, 1015, 995, 1015], Array(10).fill(1), Array(10).fill(5));
  const far = fakeResult([890, 910, 890, 910, 890, 910, 890, 910, 890, 910], [1.5, 1.6, 1.5, 1.6, 1.5, 1.6, 1.5, 1.6, 1.5, 1.6], Array(10).fill(5));
  const t = (r: ReturnType<typeof compareResults>) => r.find((f) => f.figure === 'throughput (ops/s)')!;
  assert.is(t(compareResults(a, near)).outside, false);
  const worse = t(compareResults(a, far));
  assert.is(worse.outside, true);
  assert.ok(Math.abs(worse.change! + 0.1) < 1e-9, `change ${worse.change}`);
  assert.ok(worse.noise! > 8 && worse.noise! < 10, `noise ${worse.noise}`);
  assert.is(compareResults(a, far).find((f) => f.figure === 'latency p50 (ms)')!.outside, true);
  assert.is(compareResults(a, far).find((f) => f.figure === 'stale (412)')!.outside, null);
});

test('workload files: weights, defaults and text', () => {
  const w = parseWorkload(JSON.stringify({ v: 1, name: 'ycsb-f', mix: { read: 1, edit: 1, move: 0 }, documents: 3, blocks: 20, distribution: 'zipfian', text: 'x {n}' }), 'f.json', 'help');
  assert.equal(w.mix, { read: 1, edit: 1 });
  assert.equal([w.name, w.documents, w.blocks, w.distribution, w.text], ['ycsb-f', 3, 20, 'zipfian', 'x {n}']);
  assert.throws(() => parseWorkload('{"v":2,"mix":{"read":1}}', 'f.json', 'help'), /f\.json: v/);
  assert.throws(() => parseWorkload('{"v":1,"mix":{"read":1},"blocks":0}', 'f.json', 'help'), /blocks/);
});

/** The fields decisions.md ("kw bench") names for the JSON result. */
const FIELDS = ['v', 'workload', 'target', 'model', 'clients', 'rate', 'durationS', 'throughput', 'latencyMs', 'operations', 'errors', 'stale', 'requestsPerSuccess', 'baseline'];

function checkResult(r: BenchResult, workload: string): void {
  for (const f of FIELDS) assert.ok(f in r, `field ${f}`);
  assert.is(r.v, 1);
  assert.is(r.workload, workload);
  assert.ok(r.throughput > 0, `throughput ${r.throughput}`);
  for (const k of ['p50', 'p90', 'p99', 'p999', 'max'] as const) assert.type(r.latencyMs[k], 'number');
  assert.ok(r.latencyMs.p50 <= r.latencyMs.p99 && r.latencyMs.p99 <= r.latencyMs.max);
  for (const o of Object.values(r.operations)) for (const k of ['count', 'throughput', 'latencyMs']) assert.ok(k in o, k);
  assert.ok(r.samples.length >= 1, 'per-second samples');
}

test('a short in-process run (memory): table, JSON with the named fields, HTML page, baseline ratio', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-test-'));
  try {
    const { io, out, err } = captureIO();
    const code = await main(['bench', 'mixed', '--duration', '1.5', '--warmup', '0.3', '--clients', '2', '--baseline', '--json', join(dir, 'r.json'), '--html', join(dir, 'r.html')], io);
    assert.is(code, 0, err.join('\n'));
    assert.match(out.join('\n'), /kw bench mixed: in-process memory; closed model, 2 clients/);
    assert.match(out.join('\n'), /^read\s+\d+/m);
    assert.match(out.join('\n'), /^edit\s+\d+/m);
    assert.match(out.join('\n'), /target\/baseline \d+(\.\d)?%/);
    assert.ok(err.some((l) => /kw bench: +\d+ s +measuring +\d+ ops\/s +p50 [\d.]+ ms +p99 [\d.]+ ms +errors 0/.test(l)), `progress: ${err.join(' | ')}`);
    const r = JSON.parse(await readFile(join(dir, 'r.json'), 'utf8')) as BenchResult;
    checkResult(r, 'mixed');
    assert.is(r.target, 'in-process memory');
    assert.is(r.model, 'closed');
    assert.is(r.rate, null);
    assert.equal(Object.keys(r.operations).sort(), ['edit', 'read']);
    assert.is(r.baseline!.kind, 'raw-yjs');
    assert.ok(r.baseline!.throughput > 0 && r.baseline!.ratio > 0);
    assert.is(r.stale, 0);
    assert.is(r.requestsPerSuccess, 1);
    const html = await readFile(join(dir, 'r.html'), 'utf8');
    assert.ok(!/<script|<link|src=|url\(|@import/i.test(html), 'nothing loaded, nothing run');
    assert.ok((html.match(/<svg/g) ?? []).length >= 3, 'charts');
    // Comparing a run with itself: every figure unchanged, within the noise.
    const cmp = captureIO();
    assert.is(await main(['bench', 'compare', join(dir, 'r.json'), join(dir, 'r.json')], cmp.io), 0);
    assert.match(cmp.out.join('\n'), /throughput \(ops\/s\)\s+[\d,.]+\s+[\d,.]+\s+\+0\.0%/);
    assert.not.match(cmp.out.join('\n'), /\b(better|worse)\b/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('in-process structure, append and hot (open model) runs keep documents within bounds and count 412s', async () => {
  const structure = captureIO();
  assert.is(await main(['bench', 'structure', '--duration', '0.8', '--warmup', '0', '--clients', '2', '--blocks', '4', '--quiet', '--json', '/dev/null'], structure.io), 0, structure.err.join('\n'));
  assert.match(structure.out.join('\n'), /^(create|move|delete)\s+\d+/m);
  assert.match(structure.out.join('\n'), /errors: none/);
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-test-'));
  try {
    const hot = captureIO();
    const file = join(dir, 'hot.json');
    assert.is(await main(['bench', 'hot', '--rate', '400', '--clients', '4', '--duration', '1', '--warmup', '0', '--quiet', '--json', file], hot.io), 0, hot.err.join('\n'));
    const r = JSON.parse(await readFile(file, 'utf8')) as BenchResult;
    assert.is(r.model, 'open');
    assert.is(r.rate, 400);
    assert.is(r.documents, 1);
    assert.ok(r.requestsPerSuccess >= 1);
    assert.ok(r.scheduleLagMs !== null);
    const append = captureIO();
    assert.is(await main(['bench', 'append', '--duration', '0.5', '--warmup', '0', '--clients', '1', '--quiet'], append.io), 0, append.err.join('\n'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** A real `kw serve --storage memory --port 0 --seed demo` child process. */
async function kwServe(): Promise<{ child: ChildProcess; url: string; token: string; operatorKey: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'app/cli.ts'), 'serve', '--storage', 'memory', '--port', '0', '--seed', 'demo', '--budget-window', '1s', '--json', '--quiet'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout! }).once('line', done);
    child.once('exit', (code) => fail(new Error(`kw serve exited with ${code}`)));
  });
  const ready = JSON.parse(line) as { url: string; operatorKey: string; demo: { token: string } };
  return { child, url: ready.url, token: ready.demo.token, operatorKey: ready.operatorKey };
}

test('against a real kw serve URL: a run, a refused token and a missing scope (named before the run, exit 1)', async () => {
  const server = await kwServe();
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-test-'));
  try {
    const file = join(dir, 'http.json');
    const run = captureIO();
    const code = await main(['bench', 'edit', '--url', server.url, '--token', server.token, '--clients', '2', '--duration', '1.5', '--warmup', '0.3', '--baseline', '--json', file], run.io);
    assert.is(code, 0, run.err.join('\n'));
    const r = JSON.parse(await readFile(file, 'utf8')) as BenchResult;
    checkResult(r, 'edit');
    assert.is(r.target, server.url);
    assert.is(r.baseline!.kind, 'bare-http');
    assert.ok(r.operations.edit!.meanBytes > 1000, 'the answer carries the document');
    assert.match(run.out.join('\n'), /emptied the 2 of 2 documents it made/);
    // The documents made are left empty (the API deletes no documents).
    const listed = (await (await fetch(`${server.url}/api/v1/documents?limit=50`, { headers: { authorization: `Bearer ${server.token}` } })).json()) as { data: Record<string, { documentRef: string; title: string }[]> };
    const made = Object.values(listed.data).find(Array.isArray)!.filter((d) => d.title.startsWith('kw bench'));
    assert.is(made.length, 2);
    for (const d of made) {
      const blocks = (await (await fetch(`${server.url}/api/v1/documents/${d.documentRef}?format=blocks`, { headers: { authorization: `Bearer ${server.token}` } })).json()) as { data: { blocks: unknown[] } };
      assert.is(blocks.data.blocks.length, 0, `${d.title} emptied`);
    }

    const refused = captureIO();
    assert.is(await main(['bench', '--url', server.url, '--token', 'svc_agent_v1_nope', '--duration', '1'], refused.io), 1);
    assert.equal(refused.out, []);
    assert.match(refused.err.join('\n'), /refused the token \(401 AUTH_REQUIRED\)/);

    const created = await fetch(`${server.url}/operator/v1/credentials`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'read only', scopes: ['document:create', 'document:read'] }),
    });
    assert.is(created.status, 201);
    const readOnly = ((await created.json()) as { data: { token: string } }).data.token;
    const scope = captureIO();
    assert.is(await main(['bench', 'edit', '--url', server.url, '--token', readOnly, '--duration', '1'], scope.io), 1);
    assert.match(scope.err.join('\n'), /the token lacks the scope document:write/);
    assert.ok(!scope.err.some((l) => /measuring/.test(l)), 'refused before the run starts');
    // A read workload too: the bench writes the blocks of the documents it makes.
    const read = captureIO();
    assert.is(await main(['bench', 'read', '--url', server.url, '--token', readOnly, '--duration', '0.5'], read.io), 1);
    assert.match(read.err.join('\n'), /lacks the scope document:write/);
  } finally {
    server.child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
});

/** The checks every coedit result passes: the four figures, none failed, percentiles in order, editors converged. */
function checkCoedit(r: BenchResult, editors: number, agents: number) {
  checkResult(r, 'coedit');
  assert.is(r.editors, editors);
  assert.is(r.clients, agents);
  assert.is(r.documents, 1);
  assert.equal(Object.keys(r.operations), ['edit', 'agent-to-editors', 'keystroke-to-editors', 'keystroke-to-version']);
  for (const [figure, o] of Object.entries(r.operations)) {
    assert.ok(o.count > 0, `${figure} measured`);
    assert.is(o.errors, 0, figure);
    const l = o.latencyMs;
    assert.ok(l.p50 >= 0 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999 && l.p999 <= l.max, `${figure} percentiles in order: ${JSON.stringify(l)}`);
  }
  assert.equal(r.errors, {});
  // Every agent edit made is one the editors saw (the run waits for each), and each round's words became a version.
  assert.is(r.operations['agent-to-editors']!.count, r.operations.edit!.count);
  // A person's edit becomes a version once their typing paused 1 s (the server's rhythm): never sooner.
  assert.ok(r.operations['keystroke-to-version']!.latencyMs.p50 >= 1000, `keystroke-to-version includes the pause: ${JSON.stringify(r.operations['keystroke-to-version'])}`);
  assert.ok(r.notes.some((n) => n === `all ${editors} editors converged on the API's last version (${agents + editors + r.blocks} blocks)`), r.notes.join(' | '));
}

test('coedit against a real kw serve URL: editors over /sync and agents on the API converge, every figure measured, the document emptied', async () => {
  const server = await kwServe();
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-test-'));
  try {
    const file = join(dir, 'coedit.json');
    const run = captureIO();
    const code = await main(['bench', 'coedit', '--url', server.url, '--token', server.token, '--clients', '2', '--editors', '3', '--blocks', '4', '--duration', '3', '--warmup', '0.5', '--json', file, '--html', join(dir, 'coedit.html')], run.io);
    assert.is(code, 0, run.err.join('\n'));
    const r = JSON.parse(await readFile(file, 'utf8')) as BenchResult;
    checkCoedit(r, 3, 2);
    assert.is(r.target, server.url);
    assert.ok(r.stale > 0 || r.requestsPerSuccess === 1, 'agents on one document race for its revision');
    assert.match(run.out.join('\n'), /^agent-to-editors\s+\d+/m);
    assert.match(run.out.join('\n'), /2 agents on the API and 3 editors over \/sync/);
    assert.ok(run.err.some((l) => /agent edits\/s .* keys\/s .* to editors p99/.test(l)), `progress: ${run.err.join(' | ')}`);
    assert.match(await readFile(join(dir, 'coedit.html'), 'utf8'), /keystroke-to-version/);
    // The document is left empty (the API deletes no documents).
    const listed = (await (await fetch(`${server.url}/api/v1/documents?limit=50`, { headers: { authorization: `Bearer ${server.token}` } })).json()) as { data: Record<string, { documentRef: string; title: string }[]> };
    const made = Object.values(listed.data).find(Array.isArray)!.filter((d) => / coedit$/.test(d.title));
    assert.is(made.length, 1);
    const blocks = (await (await fetch(`${server.url}/api/v1/documents/${made[0]!.documentRef}?format=blocks`, { headers: { authorization: `Bearer ${server.token}` } })).json()) as { data: { blocks: unknown[] } };
    assert.is(blocks.data.blocks.length, 0);
  } finally {
    server.child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
});

test('coedit in-process: the engine over memory storage is served on loopback for the editors; the run completes and converges', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-test-'));
  try {
    const file = join(dir, 'coedit.json');
    const run = captureIO();
    assert.is(await main(['bench', 'coedit', '--clients', '1', '--editors', '2', '--duration', '2.5', '--warmup', '0.3', '--quiet', '--json', file], run.io), 0, run.err.join('\n'));
    const r = JSON.parse(await readFile(file, 'utf8')) as BenchResult;
    checkCoedit(r, 2, 1);
    assert.match(r.target, /^in-process memory, served on http:\/\/127\.0\.0\.1:\d+$/);
    assert.is(r.targetKind, 'memory');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('coedit through a balancer in front of two kw serve --storage postgres processes: editors on both, one room, converged', async () => {
  const reason = await serverUnavailableReason();
  if (reason !== null) {
    console.log(`  (skipped: ${reason})`);
    return;
  }
  const db = await freshDatabase();
  const procs = await startProcesses(2, db.url, { extra: ['--budget-window', '1s'] });
  // A round-robin TCP balancer: connections (editors' WebSockets, agents' keep-alive sockets) alternate between the processes.
  const ports = procs.map((p) => Number(new URL(p.url).port));
  const hits = [0, 0];
  let next = 0;
  const balancer = net.createServer((c) => {
    const i = next++ % 2;
    hits[i]!++;
    const up = net.connect(ports[i]!, '127.0.0.1');
    c.pipe(up).pipe(c);
    c.on('error', () => up.destroy());
    up.on('error', () => c.destroy());
  });
  await new Promise<void>((done) => balancer.listen(0, '127.0.0.1', done));
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-test-'));
  try {
    const file = join(dir, 'coedit.json');
    const run = captureIO();
    const url = `http://127.0.0.1:${(balancer.address() as net.AddressInfo).port}`;
    const code = await main(['bench', 'coedit', '--url', url, '--token', procs[0]!.demoToken!, '--clients', '2', '--editors', '4', '--blocks', '2', '--duration', '3', '--warmup', '0.5', '--quiet', '--json', file], run.io);
    assert.is(code, 0, run.err.join('\n'));
    assert.ok(hits[0]! >= 2 && hits[1]! >= 2, `editors on both processes: ${hits.join(' / ')} connections`);
    checkCoedit(JSON.parse(await readFile(file, 'utf8')) as BenchResult, 4, 2);
  } finally {
    balancer.close();
    await Promise.all(procs.map((p) => p.stop()));
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
