/**
 * SSE fan-out: 1,000 open event streams on one research job while its runner reports 200 progress
 * events/s, beside a bare node:http server writing frames of the same size to as many sockets at the
 * same rate (the baseline, same run). Also: p50/p99 delivery latency (send time embedded in the
 * progress summary → client receive time), server memory per open stream (child heap and RSS with
 * the streams open minus idle, after gc), and GET of a 10-block document at fixed concurrency, idle
 * vs during the fan-out. `npm run bench -- sse`.
 *
 * Each server runs in a child process started with `node -e "import(<this module>)"`: with no script
 * argument the HTTP bench's child hook stays off, and KW_BENCH_SERVER keeps the benches from running.
 * Clients use raw node:http, one socket each (agent: false), on loopback only.
 *
 * Settings: KW_BENCH_SECONDS (default 5) scales the fan-out to 4× that many seconds (20 s);
 * KW_SSE_CLIENTS (default 1,000, lowered to the open-file limit minus 64 with a printed reason);
 * KW_SSE_RATE (events/s, default 200). A server that cannot keep the rate emits as fast as it can
 * (the events/s column) for at most twice the planned time.
 * @module
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { memoryStorage } from '../adapters/memory/index.ts';
import { createApiHandler } from '../src/api/handler.ts';
import { createEngine } from '../src/engine.ts';
import type { ResearchRunContext } from '../src/jobs/runner.ts';
import { listen } from '../transports/http/listener.ts';
import { fmt, table } from './mutations.ts';
import { specBody } from '../src/jobs/jobs-kit.ts';

type Spec = { kind: 'kw'; maxMs: number; readers: number } | { kind: 'bare'; frameBytes: number };
interface Ready { url: string; streamPath: string; streamToken: string; docPath?: string; readTokens?: string[] }
interface Mem { rss: number; heapUsed: number }
type Msg = { ready: Ready } | { mem: Mem } | { emitted: { count: number; seconds: number; peakRss: number } };

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MARK = 'bench #';

// ---------------------------------------------------------------------------------------------
// Child side

/** Emit `rate`/s for `seconds` on a fixed schedule (bounded in count and in time: 2× the plan at most). */
async function emitLoop(rate: number, seconds: number, emit: (i: number) => unknown): Promise<{ count: number; seconds: number; peakRss: number }> {
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  let peakRss = 0;
  let i = 0;
  for (; i < total && performance.now() - t0 < seconds * 2000; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    await (wait > 1 ? sleep(wait) : new Promise((r) => setImmediate(r)));
    await emit(i);
    if (i % rate === 0) peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }
  return { count: i, seconds: (performance.now() - t0) / 1000, peakRss };
}

/** `bench #<i> @<send time ms>`, the summary both servers carry. */
const summary = (i: number) => `${MARK}${i} @${now().toFixed(3)}`;

async function kwChild(spec: Extract<Spec, { kind: 'kw' }>, emitter: { start?: (rate: number, s: number) => Promise<unknown> }): Promise<Ready> {
  let go: (plan: { rate: number; seconds: number; done: (r: unknown) => void }) => void = () => undefined;
  const plan = new Promise<{ rate: number; seconds: number; done: (r: unknown) => void }>((r) => (go = r));
  emitter.start = (rate, seconds) => new Promise((done) => go({ rate, seconds, done }));
  const runner = {
    async run(_job: unknown, ctx: ResearchRunContext) {
      await ctx.setPhase('retrieving', 'bench fan-out');
      const p = await plan;
      p.done(await emitLoop(p.rate, p.seconds, (i) => ctx.progress(i % 101, summary(i))));
      await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
    },
  };
  const engine = createEngine({ storage: memoryStorage(), budgetWindowMs: 1000, runner });
  const cred = (label: string, scopes: string[]) => engine.credentials.create({ accountId: 'bench', label, scopes });
  const streamer = await cred('sse', ['research:read', 'research:run']);
  const { job } = await engine.jobs.start(streamer.credential.actor, {
    idempotencyKey: 'bench-sse-job-00000001',
    body: specBody({ question: 'How do event streams fan out?', spaceRef: { kind: 'new-document', title: 'SSE bench' } }),
  });
  const readers = await Promise.all(Array.from({ length: spec.readers }, (_, i) => cred(`reader ${i}`, ['document:create', 'document:read', 'document:write'])));
  const actor = readers[0]!.credential.actor;
  const doc = await engine.documents.create(actor, { idempotencyKey: 'bench-sse-doc-00000001', body: { v: 1, title: 'Read me' } });
  const blocks = Array.from({ length: 10 }, (_, i) => ({ type: 'paragraph', markdown: `Block ${i} with some **text** in it.` }));
  await engine.documents.mutate(actor, doc.document.documentRef, {
    idempotencyKey: 'bench-sse-doc-00000002',
    ifRevision: doc.document.revision,
    body: { v: 1, intent: 'bench setup', mutation: { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks } },
  });
  const eventStreams = { keepAliveMs: 15_000, maxMs: spec.maxMs, maxEvents: 1e9, retryMs: 5000 };
  const listener = await listen(createApiHandler({ engine, log: () => undefined, eventStreams }), { host: '127.0.0.1', port: 0 });
  return {
    url: listener.url,
    streamPath: `/api/v1/research-jobs/${job.jobId}/events`,
    streamToken: streamer.token,
    docPath: `/api/v1/documents/${doc.document.documentRef}`,
    readTokens: readers.map((r) => r.token),
  };
}

function bareChild(spec: Extract<Spec, { kind: 'bare' }>, emitter: { start?: (rate: number, s: number) => Promise<unknown> }): Promise<Ready> {
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
    res.write('retry: 5000\n\n');
    open.add(res);
    req.on('close', () => open.delete(res));
  });
  emitter.start = (rate, seconds) =>
    emitLoop(rate, seconds, (i) => {
      const head = `id: ${i + 1}\nevent: research-job\ndata: {"v":1,"kind":"job.progress","summary":"${summary(i)}","pad":"`;
      const frame = `${head}${'x'.repeat(Math.max(0, spec.frameBytes - head.length - 4))}"}\n\n`;
      for (const res of open) res.write(frame);
    });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, streamPath: '/', streamToken: '' })));
}

async function childMain(spec: Spec): Promise<void> {
  const emitter: { start?: (rate: number, s: number) => Promise<unknown> } = {};
  const ready = spec.kind === 'kw' ? await kwChild(spec, emitter) : await bareChild(spec, emitter);
  process.on('message', (m: { cmd: string; rate?: number; seconds?: number }) => {
    if (m.cmd === 'mem') {
      (globalThis as { gc?: () => void }).gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      process.send!({ mem: { rss, heapUsed } });
    } else if (m.cmd === 'emit') void emitter.start!(m.rate!, m.seconds!).then((emitted) => process.send!({ emitted }));
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ ready });
}

// ---------------------------------------------------------------------------------------------
// Parent side

/** A server child: its process, the message it sent for each key, and requests to it. */
class Child {
  private waiting: ((m: Msg) => boolean)[] = [];
  private constructor(readonly proc: ChildProcess) {
    proc.on('message', (m: Msg) => (this.waiting = this.waiting.filter((w) => !w(m))));
    proc.once('exit', (code) => this.waiting.forEach((w) => w({ exited: code } as unknown as Msg)));
  }
  static async start(spec: Spec): Promise<{ child: Child; ready: Ready }> {
    const code = `await import(${JSON.stringify(import.meta.url)});`;
    const env = { ...process.env, KW_BENCH_SERVER: 'sse', KW_BENCH_SSE: JSON.stringify(spec) };
    const child = new Child(spawn(process.execPath, [...process.execArgv, '--input-type=module', '-e', code], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env }));
    return { child, ready: ((await child.next('ready')) as { ready: Ready }).ready };
  }
  /** The next message with key `key`; fails when the child exits first or after `timeoutMs`. */
  next(key: string, timeoutMs = 300_000): Promise<Msg> {
    return new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`SSE bench server sent no ${key} in ${timeoutMs} ms`)), timeoutMs);
      this.waiting.push((m) => {
        if ('exited' in m) fail(new Error(`SSE bench server exited with ${String(m.exited)} before sending ${key}`));
        else if (!(key in m)) return false;
        clearTimeout(timer);
        done(m);
        return true;
      });
    });
  }
  async mem(): Promise<Mem> {
    this.proc.send({ cmd: 'mem' });
    return ((await this.next('mem')) as { mem: Mem }).mem;
  }
  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.disconnect();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** Frames and latencies of every client: a 0.1 ms histogram up to 60 s. */
class Tally {
  frames = 0;
  bytes = 0;
  readonly hist = new Uint32Array(600_000);
  add(frame: string, at: number): void {
    const mark = frame.indexOf(MARK);
    if (mark < 0) return;
    this.frames++;
    this.bytes += frame.length + 2;
    const sent = Number.parseFloat(frame.slice(frame.indexOf('@', mark) + 1));
    this.hist[Math.min(this.hist.length - 1, Math.max(0, Math.round((at - sent) * 10)))]!++;
  }
  quantile(q: number): number {
    let left = Math.ceil(this.frames * q);
    for (let i = 0; i < this.hist.length; i++) if ((left -= this.hist[i]!) <= 0) return i / 10;
    return NaN;
  }
}

/** Open `n` streams in batches of 100, each on its own socket; resolves once all have answered 200. */
async function openStreams(ready: Ready, n: number, tally: Tally): Promise<http.ClientRequest[]> {
  const reqs: http.ClientRequest[] = [];
  const headers = { accept: 'text/event-stream', ...(ready.streamToken ? { authorization: `Bearer ${ready.streamToken}` } : {}) };
  for (let at = 0; at < n; at += 100) {
    const batch = Array.from({ length: Math.min(100, n - at) }, () =>
      new Promise<void>((done, fail) => {
        let answered = false;
        const req = http.get(`${ready.url}${ready.streamPath}`, { headers, agent: false }, (res) => {
          answered = true;
          if (res.statusCode !== 200) return fail(new Error(`stream answered ${res.statusCode}`));
          let rest = '';
          res.setEncoding('latin1');
          res.on('data', (chunk: string) => {
            const t = now();
            rest += chunk;
            let end: number;
            while ((end = rest.indexOf('\n\n')) >= 0) {
              tally.add(rest.slice(0, end), t);
              rest = rest.slice(end + 2);
            }
          });
          res.on('error', () => undefined);
          done();
        });
        req.on('error', (e) => (answered ? undefined : fail(new Error(`an event stream could not open: ${e.message}`, { cause: e }))));
        reqs.push(req);
      }),
    );
    await Promise.all(batch);
  }
  return reqs;
}

/** GETs of the 10-block document, `tokens.length` workers each with its own credential and socket, for `ms`. */
async function readLoop(ready: Ready, ms: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: ready.readTokens!.length });
  const until = performance.now() + ms;
  let done = 0;
  const get = (token: string) =>
    new Promise<void>((ok, fail) => {
      http.get(`${ready.url}${ready.docPath}`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? ok() : fail(new Error(`document GET answered ${res.statusCode}`))));
      }).on('error', fail);
    });
  const t0 = performance.now();
  await Promise.all(ready.readTokens!.map(async (token) => {
    while (performance.now() < until) {
      await get(token);
      done++;
    }
  }));
  agent.destroy();
  return done / ((performance.now() - t0) / 1000);
}

interface CaseResult { emitted: number; emitSeconds: number; deliveredPerSec: number; deliveredShare: number; p50: number; p99: number; frameBytes: number; heapPerStream: number; rssPerStream: number; peakRss: number; readsIdle?: number; readsDuring?: number }

async function runCase(spec: Spec, clients: number, seconds: number, rate: number): Promise<CaseResult> {
  const { child, ready } = await Child.start(spec);
  const tally = new Tally();
  let streams: http.ClientRequest[] = [];
  try {
    const idle = await child.mem(); // before the idle reads: what they leave behind counts against the streams
    const readsIdle = ready.docPath ? await readLoop(ready, Math.min(5000, seconds * 250)) : undefined;
    streams = await openStreams(ready, clients, tally);
    await sleep(500);
    const open = await child.mem();
    child.proc.send({ cmd: 'emit', rate, seconds });
    const finished = child.next('emitted', seconds * 3000);
    const reads = ready.docPath ? sleep(1000).then(() => readLoop(ready, (seconds - 2) * 1000)) : undefined;
    await sleep(1000);
    const [t1, f1] = [performance.now(), tally.frames];
    await sleep((seconds - 1) * 1000);
    const deliveredPerSec = (tally.frames - f1) / ((performance.now() - t1) / 1000);
    const { emitted } = (await finished) as Extract<Msg, { emitted: unknown }>;
    const readsDuring = await reads;
    await sleep(1000); // drain
    return {
      emitted: emitted.count,
      emitSeconds: emitted.seconds,
      deliveredPerSec,
      deliveredShare: tally.frames / (emitted.count * clients),
      p50: tally.quantile(0.5),
      p99: tally.quantile(0.99),
      frameBytes: tally.frames ? tally.bytes / tally.frames : 0,
      heapPerStream: (open.heapUsed - idle.heapUsed) / clients,
      rssPerStream: (open.rss - idle.rss) / clients,
      peakRss: emitted.peakRss,
      ...(readsIdle === undefined ? {} : { readsIdle, readsDuring: readsDuring! }),
    };
  } finally {
    for (const s of streams) s.destroy();
    await child.stop();
  }
}

/** Clients the open-file limit allows (each process needs one socket per stream plus some spare). */
function clientCount(): number {
  const wanted = Number(process.env.KW_SSE_CLIENTS ?? 1000);
  if (!(Number.isInteger(wanted) && wanted >= 1)) throw new Error(`KW_SSE_CLIENTS must be a positive integer, got ${process.env.KW_SSE_CLIENTS}`);
  const limit = Number(execFileSync('sh', ['-c', 'ulimit -n']).toString().trim());
  if (!Number.isFinite(limit) || wanted + 64 <= limit) {
    console.log(`open-file limit (ulimit -n): ${Number.isFinite(limit) ? limit : 'unlimited'}; ${wanted} streams + 64 spare fit`);
    return wanted;
  }
  if (limit <= 64) throw new Error(`open-file limit (ulimit -n) is ${limit}: too low for any stream (raise it with ulimit -n 2048)`);
  console.log(`open-file limit (ulimit -n) is ${limit}: using ${limit - 64} streams instead of ${wanted} (raise it with ulimit -n 2048)`);
  return limit - 64;
}

/** Run both cases and print the tables. */
export async function runSseBench(): Promise<void> {
  const seconds = Math.max(3, Math.round(4 * Number(process.env.KW_BENCH_SECONDS ?? 5)));
  const rate = Number(process.env.KW_SSE_RATE ?? 200);
  if (!(Number.isInteger(rate) && rate > 0 && rate <= 10_000)) throw new Error(`KW_SSE_RATE must be an integer from 1 to 10000, got ${process.env.KW_SSE_RATE}`);
  const clients = clientCount();
  console.log(`\nSSE fan-out: ${clients} streams on one research job, ${rate} progress events/s for ${seconds} s, loopback, memory storage`);
  const kw = await runCase({ kind: 'kw', maxMs: (seconds + 60) * 1000, readers: 4 }, clients, seconds, rate);
  const bare = await runCase({ kind: 'bare', frameBytes: Math.round(kw.frameBytes) }, clients, seconds, rate);
  const kb = (b: number) => (b / 1024).toFixed(1);
  const row = (name: string, r: CaseResult, vs: string) => [
    name, fmt(r.emitted / r.emitSeconds), fmt(r.deliveredPerSec), vs, `${(r.deliveredShare * 100).toFixed(1)}%`,
    r.p50.toFixed(1), r.p99.toFixed(1), r.frameBytes.toFixed(0), kb(r.heapPerStream), kb(r.rssPerStream), (r.peakRss / 2 ** 20).toFixed(0),
  ];
  table([
    ['case', 'events/s', 'frames/s', 'vs baseline', 'delivered', 'p50 ms', 'p99 ms', 'frame B', 'heap KB/stream', 'RSS KB/stream', 'peak RSS MB'],
    row('bare node:http, same frames', bare, 'baseline'),
    row('API research-job event stream', kw, `${((kw.deliveredPerSec / bare.deliveredPerSec) * 100).toFixed(1)}%`),
  ], 'SSE fan-out: delivered frames/s vs bare node:http (target ≥ 50%)', 2);
  console.log(`targets: ≥ 50% of the baseline's frames/s; p99 < 100 ms; < 64 KB per open stream`);
  table([
    ['document GET, 4 connections', 'idle req/s', 'during fan-out req/s', 'vs idle'],
    ['API, 10-block document', fmt(kw.readsIdle!), fmt(kw.readsDuring!), `${((kw.readsDuring! / kw.readsIdle!) * 100).toFixed(1)}%`],
  ], 'Document reads during the SSE fan-out vs idle (%, target ≥ 50%)', 3, 50);
}

if (process.env.KW_BENCH_SSE && process.send) await childMain(JSON.parse(process.env.KW_BENCH_SSE) as Spec);
