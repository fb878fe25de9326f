/**
 * HTTP transport bench: the API as a user's client sees it, against bare node:http, on loopback.
 *
 * Cases, in one run:
 * 1. baseline: a bare node:http child answering 1 KB to the same edit requests (kw bench's load engine);
 * 2. single-block edits of 10-block documents and GETs of them (rich-json), one document per
 *    connection, through kw bench's load engine (app/bench/runner.ts), against `kw serve --storage
 *    memory --quiet` started as a user starts it (its own process); then the GET against `kw serve`
 *    logging each request to a terminal (its default at a shell), where a pseudo-terminal exists;
 * 3. edits of a 10,000-block document (the mutation result carries the whole document), autocannon;
 * 4. GET of a 10,000-block document (rich-json), autocannon;
 * 5. bare node:http serving a static body of the same size: the baseline (MB/s) of cases 3 and 4.
 *
 * Every server runs in a process of its own, so the load generator does not share its event loop.
 * The 10,000-block cases run against the API handler in a child forked from this file, which builds
 * its documents in-process (200 create requests per document through the API would take long).
 * The API runs over memory storage: this measures the transport, the API and the engine, not the disk.
 *
 * Settings: `runHttpBench({ durationSec, connections, large })`, or the environment variables
 * KW_BENCH_SECONDS (default 5), KW_BENCH_CONNECTIONS (default 10) and KW_BENCH_HTTP_LARGE=0 (skip the
 * 10,000-block cases, whose setup is long: the edge's own cost shows in the 10-block cases).
 * @module
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcesses } from '../app/postgres-cluster-kit.ts';
import { runWorkload, type Measured, type RunSettings } from '../app/bench/runner.ts';
import { bareHttpTarget, httpTarget } from '../app/bench/targets.ts';
import { BUILT_IN, type Workload } from '../app/bench/workloads.ts';
import { startProfile, stopProfile, type AllocationProfile, type CpuProfile } from './profiler.ts';

// autocannon ships no type declarations; these are the parts used here.
namespace autocannon {
  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (req: Request, context: Record<string, unknown>) => Request;
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers?: Record<string, string>) => void;
  }
  export interface Options {
    url: string;
    connections: number;
    duration: number;
    pipelining: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: Request[];
  }
  interface Histogram {
    average: number;
    total: number;
    p50: number;
    p99: number;
  }
  export interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
  }
}
const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: autocannon.Options,
  callback: (error: Error | null, result: autocannon.Result) => void,
) => unknown;

/** Options of {@link runHttpBench}. */
export interface HttpBenchOptions {
  /** Seconds per case; default KW_BENCH_SECONDS or 5. */
  durationSec?: number;
  /** Concurrent connections; default KW_BENCH_CONNECTIONS or 10. */
  connections?: number;
  /** Run the 10,000-block cases too; default true unless KW_BENCH_HTTP_LARGE=0. */
  large?: boolean;
  /** Where the table goes; default console.log. */
  log?: (line: string) => void;
}

/** One row of the printed table. */
export interface HttpBenchRow {
  name: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  mbPerSec: number;
  non2xx: number;
  errors: number;
  /** Ratio to this row's baseline (req/s for 10-block edits, MB/s for the 10,000-block edit and GET); null for a baseline. */
  ratio: number | null;
}

// ---------------------------------------------------------------------------------------------
// Servers (child process side)

export type ServerSpec =
  | { kind: 'bare-echo' }
  | { kind: 'bare-static'; bytes: number }
  | { kind: 'kw'; documents: number; blocks: number };

interface DocumentLease {
  ref: string;
  token: string;
  revision: string;
  /** Block ids edits pick from (a sample for large documents). */
  blockIds: string[];
}

interface ServerReady {
  url: string;
  documents?: DocumentLease[];
  /** Size of the rich-json GET body of the first document. */
  getBytes?: number;
  /** An account-wide token (document:create, read, write) for `kw bench`'s load engine, which makes its own documents. */
  token?: string;
}

async function bareEcho(): Promise<http.Server> {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.byteLength });
      res.end(body);
    });
  });
}

async function bareStatic(bytes: number): Promise<http.Server> {
  const body = Buffer.from(`"${'x'.repeat(Math.max(0, bytes - 2))}"`);
  return http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.byteLength });
      res.end(body);
    });
  });
}

/** Blocks for one create mutation: `parents` paragraphs with `children` list items each (<= 256 in all). */
function blockBatch(parents: number, children: number, tag: string) {
  return Array.from({ length: parents }, (_, i) => ({
    type: 'paragraph',
    markdown: `${tag}${i}`,
    ...(children ? { children: Array.from({ length: children }, (_, j) => ({ type: 'bulletListItem', markdown: `${j}` })) } : {}),
  }));
}

/** An engine over memory storage with `spec.documents` documents of `spec.blocks` blocks, each with its own token, and the API handler over it. */
async function kwSetup(spec: { documents: number; blocks: number }, budgetWindowMs = 1000) {
  const [{ memoryStorage }, { createEngine }, { createApiHandler }] = await Promise.all([
    import('../adapters/memory/index.ts'),
    import('../src/engine.ts'),
    import('../src/api/handler.ts'),
  ]);
  const engine = createEngine({ storage: memoryStorage(), budgetWindowMs });
  const documents: DocumentLease[] = [];
  let n = 0;
  const key = () => `bench-setup-key-${String(++n).padStart(8, '0')}`;
  for (let d = 0; d < spec.documents; d++) {
    const { token, credential } = await engine.credentials.create({
      accountId: 'bench',
      label: `bench ${d}`,
      scopes: ['document:create', 'document:read', 'document:write'],
    });
    const actor = credential.actor;
    const created = await engine.documents.create(actor, { idempotencyKey: key(), body: { v: 1, title: `Bench ${d}` } });
    let revision = created.document.revision;
    const ids: string[] = [];
    // 250 blocks per create (50 paragraphs with 4 items each) stays under the 256 affected-block limit.
    const perBatch = spec.blocks >= 250 ? 250 : spec.blocks;
    for (let made = 0; made < spec.blocks; made += perBatch) {
      const blocks = perBatch === 250 ? blockBatch(50, 4, `d${d}b${made}-`) : blockBatch(perBatch, 0, `d${d}b`);
      const out = await engine.documents.mutate(actor, created.document.documentRef, {
        idempotencyKey: key(),
        ifRevision: revision,
        body: { v: 1, intent: 'bench setup', mutation: { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks } },
      });
      revision = out.document.revision;
      for (const id of out.receipt.affectedBlockIds) if (ids.length < 100) ids.push(id);
    }
    documents.push({ ref: created.document.documentRef, token, revision, blockIds: ids });
  }
  return { engine, documents, handler: createApiHandler({ engine, log: () => undefined }) };
}

async function kwServer(spec: { documents: number; blocks: number }): Promise<ServerReady & { close(): Promise<void> }> {
  const { listen } = await import('../transports/http/listener.ts');
  // 100 ms budget windows: kw bench's clients share one token (10,000 requests per window).
  const { engine, documents, handler } = await kwSetup(spec, spec.documents === 0 ? 100 : 1000);
  const { token } = await engine.credentials.create({ accountId: 'bench', label: 'kw bench', scopes: ['document:create', 'document:read', 'document:write'] });
  const listener = await listen(handler, { host: '127.0.0.1', port: 0 });
  let getBytes: number | undefined;
  const first = documents[0];
  if (first) {
    const res = await fetch(`${listener.url}/api/v1/documents/${first.ref}`, { headers: { authorization: `Bearer ${first.token}` } });
    getBytes = (await res.arrayBuffer()).byteLength;
    if (res.status !== 200) throw new Error(`GET of the bench document answered ${res.status}`);
  }
  return {
    url: listener.url,
    documents,
    token,
    ...(getBytes === undefined ? {} : { getBytes }),
    async close() {
      await listener.close();
      await engine.close();
    },
  };
}

async function childMain(spec: ServerSpec): Promise<void> {
  let ready: ServerReady;
  if (spec.kind === 'kw') {
    ready = await kwServer(spec);
  } else {
    const server = spec.kind === 'bare-echo' ? await bareEcho() : await bareStatic(spec.bytes);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    ready = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }
  process.send!({ ready });
  // The parent asks for this process's CPU time around a case: server CPU per request under load.
  process.on('message', (m: unknown) => {
    if (m === 'cpu') process.send!({ cpu: process.cpuUsage(), threads: threadTicks() });
    // bench/stages.ts: a CPU profile of the measured window.
    if (m === 'profile-start' || m === 'alloc-start') void startProfile(m === 'alloc-start' ? 'alloc' : 'cpu').then(() => process.send!({ profile: 'started' }));
    if (m === 'profile-stop' || m === 'alloc-stop') void stopProfile().then((profile) => process.send!({ profile }));
  });
  process.on('disconnect', () => process.exit(0));
}

/**
 * CPU time of each of this process's threads so far (Linux: /proc/self/task/<tid>/stat, user +
 * system in µs, by thread name; `main` is the event loop's thread, `main:system` its system time);
 * empty elsewhere.
 */
function threadTicks(): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      // utime and stime are fields 14 and 15 of stat (11 and 12 after the name), in clock ticks of 10 ms.
      const user = Number(fields[11]) * 10_000;
      const system = Number(fields[12]) * 10_000;
      if (Number(tid) === process.pid) {
        out.main = user + system;
        out['main:system'] = system;
        continue;
      }
      const name = stat.slice(stat.indexOf('(') + 1, close).trim();
      out[name] = (out[name] ?? 0) + user + system;
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Load generation (parent side)

const SELF = fileURLToPath(import.meta.url);

export async function startServer(spec: ServerSpec): Promise<{ child: ChildProcess; ready: ServerReady }> {
  const child = fork(SELF, [], { env: { ...process.env, KW_BENCH_SERVER: JSON.stringify(spec) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<ServerReady>((done, fail) => {
    child.once('message', (m: { ready: ServerReady }) => done(m.ready));
    child.once('exit', (code) => fail(new Error(`bench server (${spec.kind}) exited with ${code}`)));
  });
  return { child, ready };
}

/** The server child's CPU time (user + system, µs) so far. */
export function childCpu(child: ChildProcess): Promise<number> {
  return childCpuByThread(child).then((c) => c.total);
}

/** The server child's CPU time so far (µs): in all, and by thread name (`main`: the event loop; 10 ms ticks, Linux only). */
export function childCpuByThread(child: ChildProcess): Promise<{ total: number; threads: Record<string, number> }> {
  return new Promise((done) => {
    const on = (m: { cpu?: NodeJS.CpuUsage; threads?: Record<string, number> }) => {
      if (!m.cpu) return;
      child.off('message', on);
      done({ total: m.cpu.user + m.cpu.system, threads: m.threads ?? {} });
    };
    child.on('message', on);
    child.send('cpu');
  });
}

/**
 * Start (`'start'`, `'alloc-start'`) or stop (`'stop'`: its profile) a CPU profile, or a sampling
 * allocation profile, in a server child (see bench/stages.ts).
 */
export function childProfile(child: ChildProcess, phase: 'start' | 'alloc-start'): Promise<void>;
export function childProfile(child: ChildProcess, phase: 'stop' | 'alloc-stop'): Promise<CpuProfile | AllocationProfile>;
export function childProfile(child: ChildProcess, phase: 'start' | 'stop' | 'alloc-start' | 'alloc-stop'): Promise<void | CpuProfile | AllocationProfile> {
  return new Promise((done) => {
    const on = (m: { profile?: 'started' | CpuProfile | AllocationProfile }) => {
      if (m.profile === undefined) return;
      child.off('message', on);
      done(m.profile === 'started' ? undefined : m.profile);
    };
    child.on('message', on);
    child.send(phase.startsWith('alloc') ? phase : `profile-${phase}`);
  });
}

/**
 * CPU time per request through the API handler in-process (no sockets): `n` single-block edits of a
 * 10-block document (each its own idempotency key and the current revision), then `n` GETs of it.
 * Steady on a shared machine, unlike req/s: it counts this process's CPU time, not the wall clock.
 */
export async function handlerCpuPerRequest(n = 20_000, documentCount = 1): Promise<{ editUs: number; getUs: number }> {
  // 10 ms budget windows: in-process runs past 10,000 requests/s
  const { engine, documents, handler } = await kwSetup({ documents: documentCount, blocks: 10 }, 10);
  const revisions = documents.map((d) => d.revision);
  const encoder = new TextEncoder();
  let k = 0;
  const edit = async (d: number) => {
    const i = ++k;
    const doc = documents[d]!;
    const revision = revisions[d]!;
    const response = await handler({
      method: 'POST',
      url: `/api/v1/documents/${doc.ref}/mutations`,
      headers: {
        authorization: `Bearer ${doc.token}`,
        'content-type': 'application/json',
        'idempotency-key': `bench-cpu-edit-${String(i).padStart(10, '0')}`,
        'service-if-revision': revision,
        host: '127.0.0.1',
      },
      body: encoder.encode(JSON.stringify({ v: 1, intent: 'bench edit', mutation: { kind: 'edit', blockId: doc.blockIds[i % doc.blockIds.length], block: { type: 'paragraph', markdown: `edited ${i}` } } })),
    });
    if (response.status !== 200) throw new Error(`in-process edit answered ${response.status}`);
    revisions[d] = response.headers['service-revision']!;
  };
  const get = async (d: number) => {
    const doc = documents[d]!;
    const response = await handler({ method: 'GET', url: `/api/v1/documents/${doc.ref}`, headers: { authorization: `Bearer ${doc.token}`, host: '127.0.0.1' }, body: null });
    if (response.status !== 200) throw new Error(`in-process GET answered ${response.status}`);
  };
  // One request in flight per document, as over HTTP with one connection per document.
  const lanes = (count: number, one: (lane: number) => Promise<void>) =>
    Promise.all(documents.map(async (_, lane) => {
      for (let i = lane; i < count; i += documents.length) await one(lane);
    }));
  const measure = async (one: (lane: number) => Promise<void>) => {
    await lanes(Math.min(2000, n), one); // warm up
    const start = process.cpuUsage();
    await lanes(n, one);
    const used = process.cpuUsage(start);
    return (used.user + used.system) / n;
  };
  const editUs = await measure(edit);
  const getUs = await measure(get);
  await engine.close();
  return { editUs, getUs };
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** A row from a kw bench measurement. */
function benchRow(name: string, m: Measured, ratio: number | null): HttpBenchRow {
  const op = Object.values(m.operations)[0];
  return {
    name,
    requestsPerSec: m.throughput,
    p50Ms: m.latencyMs.p50,
    p99Ms: m.latencyMs.p99,
    mbPerSec: (m.throughput * (op?.meanBytes ?? 0)) / 1e6,
    non2xx: Object.entries(m.errors).reduce((s, [k, n]) => s + (/^\d/.test(k) ? n : 0), 0),
    errors: Object.entries(m.errors).reduce((s, [k, n]) => s + (/^\d/.test(k) ? 0 : n), 0),
    ratio,
  };
}

/** A process's CPU time (user + system, µs) from /proc (Linux); null where there is none. */
function procCpuUs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15 (clock ticks of 10 ms).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

/** Run `work` and measure the `kw serve` child's CPU µs per request over the measured window (from /proc), or null. */
async function runProcCpu(child: ChildProcess, work: (onWindow: RunSettings['onWindow']) => Promise<Measured>): Promise<{ result: Measured; cpuUs: number | null }> {
  let before: number | null = null;
  let after: number | null = null;
  const result = await work((phase) => {
    if (phase === 'start') before = procCpuUs(child.pid);
    else after = procCpuUs(child.pid);
  });
  return { result, cpuUs: before === null || after === null ? null : (after - before) / Math.max(1, result.requests) };
}

/** The checkout whose app/cli.ts the `kw serve` children run (scripts/bench.ts sets KW_BENCH_ROOT). */
const ROOT = process.env.KW_BENCH_ROOT ?? resolve(import.meta.dirname, '..');

/**
 * `kw serve --storage memory` without --quiet, its stdout and stderr a pseudo-terminal (script(1) of
 * util-linux, whose output this process reads and drops, as a terminal shows and scrolls it): the
 * request log as a person at a shell gets it. Null where script(1) is not util-linux's.
 */
async function startOnTerminal(): Promise<{ url: string; token: string; stop(): Promise<void> } | null> {
  if (process.platform !== 'linux' || spawnSync('script', ['--version']).status !== 0) return null;
  const command = [process.execPath, '--import', 'tsx', 'app/cli.ts', 'serve', '--storage', 'memory', '--port', '0', '--seed', 'demo', '--budget-window', '100ms', '--json'].join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  let text = '';
  const ready = await new Promise<{ url: string; demo: { token: string } } | null>((done) => {
    const timer = setTimeout(() => done(null), 120_000);
    child.stdout!.on('data', (c: Buffer) => {
      text += c.toString('utf8');
      const line = /\{"url".*\}/.exec(text);
      if (line) {
        clearTimeout(timer);
        done(JSON.parse(line[0]) as { url: string; demo: { token: string } });
      }
    });
    void exited.then(() => done(null));
  });
  child.stdout!.resume();
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
  };
  if (!ready) {
    await stop();
    return null;
  }
  return { url: ready.url, token: ready.demo.token, stop };
}

function row(name: string, r: autocannon.Result, ratio: number | null): HttpBenchRow {
  return {
    name,
    requestsPerSec: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    mbPerSec: r.throughput.average / 1e6,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    ratio,
  };
}

function cannon(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((done, fail) => {
    autocannon(options, (error, result) => (error ? fail(error) : done(result)));
  });
}

/**
 * Single-block edits, one document leased per in-flight request: the request takes a free document,
 * its current revision and a fresh idempotency key; the response returns the document with its new
 * revision. With pipelining 1 a connection has one request in flight, and there are as many
 * documents as connections, so no two requests ever race for one revision.
 */
function editRequests(documents: DocumentLease[]): autocannon.Request[] {
  const all = documents.map((d) => ({ ...d, pick: 0, leasedAt: 0 }));
  const free = [...all];
  let counter = 0;
  type Ctx = { lease?: (typeof all)[number] | undefined };
  return [
    {
      method: 'POST',
      setupRequest: (req: autocannon.Request, context: Ctx) => {
        // A free document; should a response never arrive (reconnect, timeout), take the oldest lease.
        const lease = free.shift() ?? all.reduce((a, b) => (a.leasedAt <= b.leasedAt ? a : b));
        lease.leasedAt = performance.now();
        context.lease = lease;
        const blockId = lease.blockIds[lease.pick++ % lease.blockIds.length]!;
        const n = ++counter;
        return {
          ...req,
          path: `/api/v1/documents/${lease.ref}/mutations`,
          headers: {
            authorization: `Bearer ${lease.token}`,
            'content-type': 'application/json',
            'idempotency-key': `bench-edit-${String(n).padStart(10, '0')}`,
            'service-if-revision': lease.revision,
          },
          body: JSON.stringify({
            v: 1,
            intent: 'bench edit',
            mutation: { kind: 'edit', blockId, block: { type: 'paragraph', markdown: `edited ${n}` } },
          }),
        };
      },
      onResponse: (_status: number, _body: string, context: Ctx, headers?: Record<string, string>) => {
        const lease = context.lease;
        if (!lease) return;
        const revision = headers?.['service-revision'];
        if (revision) lease.revision = revision;
        context.lease = undefined;
        if (!free.includes(lease)) free.push(lease);
      },
    } as unknown as autocannon.Request,
  ];
}

function format(rows: HttpBenchRow[]): string {
  const header = ['case', 'req/s', 'p50 ms', 'p99 ms', 'MB/s', 'vs baseline', 'non-2xx', 'errors'];
  const lines = rows.map((r) => [
    r.name,
    r.requestsPerSec.toFixed(0),
    r.p50Ms.toFixed(2),
    r.p99Ms.toFixed(2),
    r.mbPerSec.toFixed(1),
    r.ratio === null ? 'baseline' : `${(r.ratio * 100).toFixed(1)} %`,
    String(r.non2xx),
    String(r.errors),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

/**
 * Run every case and print the table (see the module comment). Takes about 5 × durationSec plus the
 * setup of the 10,000-block documents.
 */
export async function runHttpBench(options: HttpBenchOptions = {}): Promise<HttpBenchRow[]> {
  const duration = options.durationSec ?? Number(process.env.KW_BENCH_SECONDS ?? 5);
  const connections = options.connections ?? Number(process.env.KW_BENCH_CONNECTIONS ?? 10);
  const log = options.log ?? ((line: string) => console.log(line));
  const rows: HttpBenchRow[] = [];
  const base = { connections, duration, pipelining: 1 } as const;
  const serverCpu: string[] = [];

  log(`HTTP bench: ${connections} connections, ${duration} s per case, loopback, API over memory storage`);

  // 1 + 2. Through kw bench's load engine (app/bench/runner.ts, the code `kw bench` runs): the
  // baseline, a bare node:http child answering 1 KB to the same mutation requests (as the 1 KB echo
  // did); then single-block edits of 10-block documents, one per connection (partitioned: no races
  // for a revision), and GETs of them (rich-json).
  const settings = (workload: Workload, onWindow?: RunSettings['onWindow']): RunSettings => ({ ...(onWindow ? { onWindow } : {}), workload, clients: connections, rate: null, durationS: duration, warmupS: Math.min(1, duration / 5), documents: connections, blocks: 10, distribution: 'partitioned', keep: true });
  const bare = await bareHttpTarget({ edit: 1024, read: 1024 }, connections);
  let baseline: Measured;
  try {
    baseline = await runWorkload(bare, settings(BUILT_IN.edit!));
    rows.push(benchRow('bare node:http, 1 KB answer to an edit request', baseline, null));
  } finally {
    await bare.close({ keep: false });
  }
  // The server is `kw serve --storage memory` as a user starts it (its own process, the CLI, the dev
  // server's layers: browser app, MCP, live co-editing), with --quiet: its request log (one line per
  // request on the terminal by default) is measured on its own below. Before, this was the API
  // handler alone in a child, which read ~10% above kw serve --quiet and ~2× above kw serve
  // logging to a terminal (bench/README.md, "What a user's client sees").
  const [served] = await startProcesses(1, null, { extra: ['--budget-window', '100ms'] });
  try {
    const target = httpTarget(served!.url, served!.demoToken!, connections);
    const editCpu = await runProcCpu(served!.child, (onWindow) => runWorkload(target, settings(BUILT_IN.edit!, onWindow)));
    rows.push(benchRow('API edit, 10-block document (kw serve --quiet)', editCpu.result, editCpu.result.throughput / baseline.throughput));
    const getCpu = await runProcCpu(served!.child, (onWindow) => runWorkload(target, settings(BUILT_IN.read!, onWindow)));
    rows.push(benchRow('API GET, 10-block document (rich-json, kw serve --quiet)', getCpu.result, getCpu.result.throughput / baseline.throughput));
    if (editCpu.cpuUs !== null && getCpu.cpuUs !== null) serverCpu.push(`server CPU per request under load: edit ${editCpu.cpuUs.toFixed(1)} µs, GET ${getCpu.cpuUs.toFixed(1)} µs (kw serve's /proc CPU time over the case / requests)`);
    await target.close({ keep: true });
  } finally {
    await served!.stop();
  }
  // The same GET with the request log on a terminal, as `kw serve` runs for a person at a shell
  // (Linux: a pseudo-terminal through script(1); skipped where there is none).
  const logged = await startOnTerminal();
  if (logged) {
    try {
      const target = httpTarget(logged.url, logged.token, connections);
      const get = await runWorkload(target, settings(BUILT_IN.read!));
      rows.push(benchRow('API GET, 10-block document (kw serve logging each request to a terminal)', get, get.throughput / baseline.throughput));
      await target.close({ keep: true });
    } finally {
      await logged.stop();
    }
  }
  const inProcess = await handlerCpuPerRequest(Number(process.env.KW_BENCH_HTTP_CPU_N ?? 20_000));
  const cpuLines = [
    ...serverCpu,
    `handler CPU per request in-process (no sockets): edit ${inProcess.editUs.toFixed(1)} µs, GET ${inProcess.getUs.toFixed(1)} µs`,
  ];
  if (!(options.large ?? process.env.KW_BENCH_HTTP_LARGE !== '0')) {
    log(format(rows));
    log('vs baseline: 10-block edits and GETs compare req/s with the 1 KB echo.');
    for (const line of cpuLines) log(line);
    return rows;
  }

  // 3 + 4. edits on, and GET of, 10,000-block documents (autocannon: the documents are built inside
  // the server child, which is faster than 200 create requests per document through the API)
  let server = await startServer({ kind: 'kw', documents: connections, blocks: 10_000 });
  let getBytes = 0;
  let edit: autocannon.Result;
  let get: autocannon.Result;
  try {
    const docs = server.ready.documents!;
    getBytes = server.ready.getBytes ?? 0;
    edit = await cannon({ ...base, url: server.ready.url, requests: editRequests(docs) });
    const first = docs[0]!;
    get = await cannon({
      ...base,
      url: `${server.ready.url}/api/v1/documents/${first.ref}`,
      headers: { authorization: `Bearer ${first.token}` },
    });
  } finally {
    await stopServer(server.child);
  }

  // 5. bare static body of the same size: the baseline of both (each answer carries the whole document)
  server = await startServer({ kind: 'bare-static', bytes: getBytes });
  try {
    const s = await cannon({ ...base, url: server.ready.url });
    const mbRatio = (r: autocannon.Result) => r.throughput.average / s.throughput.average;
    rows.push(row(`bare node:http, static ${(getBytes / 1e6).toFixed(2)} MB body`, s, null));
    rows.push(row('API edit, 10,000-block document (answer: the whole document)', edit, mbRatio(edit)));
    rows.push(row('API GET, 10,000-block document (rich-json)', get, mbRatio(get)));
  } finally {
    await stopServer(server.child);
  }

  log(format(rows));
  log('vs baseline: 10-block edits and GETs compare req/s with the 1 KB echo; the 10,000-block edit and GET compare MB/s with the static body of the same size.');
  for (const line of cpuLines) log(line);
  return rows;
}

if (process.env.KW_BENCH_SERVER && process.send && process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await childMain(JSON.parse(process.env.KW_BENCH_SERVER) as ServerSpec);
}
