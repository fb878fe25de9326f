/**
 * Where an edit's time goes: a per-stage cost table of a single-block edit of a 10-block document,
 * over HTTP (`npm run bench -- http`) and in-process (`npm run bench -- mutations`), beside the
 * baselines of the same run: a bare node:http server answering 1 KB to the same requests, a bare
 * node:http server answering a body of the edit's answer size (so that the ratio shows our work, not
 * the payload), and raw Yjs doing the same single-block edit.
 *
 * How the stages are measured, without changing what is measured: the server (a child process
 * forked as in bench/http.ts; the engine in this process for the in-process table) takes a V8 CPU
 * profile (node:inspector, bench/profiler.ts, every 200 µs) over the measured window only. Each
 * sample is given to the innermost frame of its stack that names a stage (see {@link STAGE_RULES}:
 * our functions by name, node's by file and name, Yjs and valibot by package), and a stage's
 * sampled µs per edit is its sampled time over the edits answered in the window. The sampler counts
 * wall time, so the "CPU" column reconciles it with the CPU measured in an unprofiled run of the
 * same case: the socket write capped at the main thread's system time, the other stages' shares
 * scaled to the main thread's CPU (/proc, by thread); the other threads' CPU (V8's GC and compiler
 * workers) is printed as unattributed. A third run samples allocations (KB per stage per edit).
 *
 * Settings: KW_BENCH_SECONDS (default 5), KW_BENCH_CONNECTIONS (default 10),
 * KW_BENCH_STAGES=0 skips the table, KW_BENCH_STAGES_TOP=N also prints the N frames with the most
 * self time of the edit profile (to check the rules), KW_BENCH_STAGES_PROFILE=DIR keeps the
 * profiles (.cpuprofile, for Chrome DevTools).
 * @module
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { runWorkload, type Measured, type RunSettings } from '../app/bench/runner.ts';
import { engineTargetOver, httpClient, httpTarget, rawYjsTarget, type Answer, type BenchTarget } from '../app/bench/targets.ts';
import { BUILT_IN } from '../app/bench/workloads.ts';
import { memoryStorage } from '../adapters/memory/index.ts';
import { createEngine } from '../src/engine.ts';
import { childCpuByThread, childProfile, startServer, stopServer } from './http.ts';
import { SAMPLE_US, startProfile, stopProfile, type AllocationNode, type AllocationProfile, type CpuProfile } from './profiler.ts';
import { recordTable } from './report.ts';

// ---------------------------------------------------------------------------------------------
// Profiles

// ---------------------------------------------------------------------------------------------
// Stages

/** The stages, in the order of the table (the path of an edit). */
export const STAGES = [
  'node:http: read socket, parse request',
  'request parse: headers, body (listener)',
  'request parse: JSON body',
  'route, request id, context (handler)',
  'auth: credential lookup',
  'budget charge',
  'input check (valibot, ids, revision)',
  'idempotency: fingerprint',
  'idempotency: claim, record',
  'mutation: load, plan, head, receipt',
  'Yjs transaction',
  'version pieces (chunk JSON of the tree)',
  'storage commit (memory adapter)',
  'document view',
  'answer JSON (document, receipt, envelope, headers)',
  'contentSha256 of the version',
  'handler finish (edge headers)',
  'write response: node:http (headers, outgoing)',
  'write response: socket write (writev)',
  'node internals (events, streams, timers, promises)',
  'GC (main thread)',
  'native / program (unattributed on the main thread)',
  'load generator (in-process runs)',
  'other JavaScript',
] as const;
export type Stage = (typeof STAGES)[number];

type Frame = { functionName: string; url: string };
/** A rule: the stage of a frame, or undefined when the frame names none (the walk goes on to its caller). */
type Rule = (f: Frame) => Stage | undefined;

/** Our functions by name (esbuild may add a digit to a name it renames: `charge2`). */
const OURS: Record<string, Stage> = {};
const ours = (stage: Stage, ...names: string[]) => {
  for (const n of names) OURS[n] = stage;
};
ours('request parse: headers, body (listener)', 'headerMap', 'hasBody', 'readBody', 'onData', 'onEnd', 'NodePlainRequest', 'onRequest');
ours('request parse: JSON body', 'parseJsonBody');
ours('route, request id, context (handler)', 'handle', 'pipeline', 'Context', 'match', 'nextRequestId', 'createRouter', 'activation', 'effectiveActivation');
ours('auth: credential lookup', 'authenticate', 'bearerToken', 'namesBearerScheme', 'missingScope', 'actorOf');
ours('budget charge', 'charge', 'take', 'budget', 'windowOf');
ours('input check (valibot, ids, revision)', 'read', 'validateMutation', 'parseOrThrow', 'requireIdempotencyKey', 'requireIfRevision', 'mutationRequest', 'checkBlockInput', 'blockInput');
ours('idempotency: claim, record', 'run', 'runOptimistic', 'runClaimed', 'runAfter', 'recordOp', 'freezeRecordValue', 'writeScope', 'claim', 'record', 'remember', 'replayedReceipt');
ours('mutation: load, plan, head, receipt', 'mutate', 'applyMutation', 'planMutation', 'planEdit', 'cachedAt', 'loadAt', 'load', 'visibleHead', 'visibleTo', 'cachedHeadFor', 'currentRevision', 'revisionOf', 'staleRevision', 'exceedsDocumentLimit', 'advance', 'due', 'defineContentSha256', 'operationRef', 'hex', 'blockId', 'mutateDocument');
ours('version pieces (chunk JSON of the tree)', 'jsonParts', 'chunkPart', 'partBytes', 'VersionContent', 'blockJson', 'recordJson');
ours('storage commit (memory adapter)', 'commit', 'applyBatch', 'publish', 'notify');
ours('document view', 'viewOf', 'contentOf', 'isoTimestamp', 'browserHref');
ours('answer JSON (document, receipt, envelope, headers)', 'documentDataBody', 'documentDataJson', 'documentHeadJson', 'receiptJson', 'successBody', 'ok', 'baseHeaders', 'metaJson', 'joinPieces', 'exceedsBytes', 'get json', 'get length', 'utf8Length');
ours('contentSha256 of the version', 'get sha256', 'get contentSha256');
ours('handler finish (edge headers)', 'finish', 'edgeHeaders');
ours('write response: node:http (headers, outgoing)', 'writeComplete');
// The load generator of the in-process runs (app/bench), in the same profile as the engine.
ours('load generator (in-process runs)', 'runWorkload', 'perform', 'record', 'tick', 'pickOp', 'pickDoc', 'percentilesOf', 'recordValue', 'editBody');

const NODE_WRITE = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writevGeneric', 'writeGeneric', 'handleWriteReq', 'afterWriteDispatched', 'onWriteComplete']);
const NODE_PARSE = new Set(['execute', 'parserOnHeadersComplete', 'parserOnBody', 'parserOnMessageComplete', 'parserOnIncoming', 'onStreamRead', 'onParserExecute', 'onParserExecuteCommon', 'readableAddChunk', 'addChunk']);

const byName = (name: string): Stage | undefined => OURS[name] ?? OURS[name.replace(/\d+$/, '')];

/**
 * The rules, tried on each frame from the sample's leaf to the root; the first stage found wins.
 * SHA-256 frames (node:crypto, and our hash wrappers) name no stage: their caller does (the
 * version's `contentSha256` getter, or the service's `mutate`, whose one hash is the fingerprint).
 */
const STAGE_RULES: Rule[] = [
  (f) => (f.functionName === '(garbage collector)' ? 'GC (main thread)' : undefined),
  (f) => (f.functionName === '(program)' ? 'native / program (unattributed on the main thread)' : undefined),
  (f) => (/[/\\]node_modules[/\\](yjs|lib0)[/\\]/.test(f.url) ? 'Yjs transaction' : undefined),
  (f) => (/[/\\]node_modules[/\\]valibot[/\\]/.test(f.url) ? 'input check (valibot, ids, revision)' : undefined),
  (f) => (f.url === '' || f.url.startsWith('node:') ? (NODE_WRITE.has(f.functionName) ? 'write response: socket write (writev)' : undefined) : undefined),
  (f) => (f.url.startsWith('node:_http_outgoing') || (f.url.startsWith('node:_http_server') && /^(writeHead|_storeHeader|end|_finish|resOnFinish)$/.test(f.functionName)) || f.functionName === 'connectionCorkNT' ? 'write response: node:http (headers, outgoing)' : undefined),
  (f) => ((f.url === '' || f.url.startsWith('node:')) && NODE_PARSE.has(f.functionName) ? 'node:http: read socket, parse request' : undefined),
  (f) => (f.url.startsWith('node:') || f.url === '' ? undefined : byName(f.functionName)),
];

/** The stage of a frame whose stack names none: node's own, or ours unnamed. */
function fallback(stack: Frame[]): Stage {
  if (stack.some((f) => f.url !== '' && !f.url.startsWith('node:'))) return 'other JavaScript';
  return 'node internals (events, streams, timers, promises)';
}

/** With a SHA-256 frame at the leaf end, the caller that names the hash's purpose. */
function hashStage(stack: Frame[]): Stage | undefined {
  const hashAt = stack.findIndex((f) => f.url.startsWith('node:internal/crypto') || f.functionName === 'hash' || f.functionName === 'digest');
  if (hashAt === -1) return undefined;
  // The fingerprint is hashed by the service itself, a token by `authenticate`; every other hash on
  // the path is a version's contentSha256, read through the view's or receipt's getter (often
  // inlined into its reader, e.g. documentHeadJson).
  for (let i = hashAt + 1; i < stack.length; i++) {
    const n = stack[i]!.functionName.replace(/\d+$/, '');
    if (n === 'mutate' || n === 'commitEditorBlocks' || n === 'create') return 'idempotency: fingerprint';
    if (n === 'authenticate') return 'auth: credential lookup';
  }
  return 'contentSha256 of the version';
}

/** The stage of a sample's stack (leaf first). */
function stageOfStack(stack: Frame[]): Stage | 'idle' {
  let stage: Stage | 'idle' | undefined = stack[0]!.functionName === '(idle)' ? 'idle' : hashStage(stack);
  for (let i = 0; stage === undefined && i < stack.length; i++) for (const rule of STAGE_RULES) if ((stage = rule(stack[i]!)) !== undefined) break;
  return stage ?? fallback(stack);
}

const frameName = (f: Frame & { lineNumber: number }, stage: string) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*[/\\]/, '')}:${f.lineNumber + 1} → ${stage}`;

/** Sampled µs per stage (and per frame, for the top list) of a CPU profile. */
export function attribute(profile: CpuProfile): { stages: Map<Stage, number>; frames: Map<string, number>; idleUs: number; totalUs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map<number, Stage | 'idle'>();
  const classify = (id: number): Stage | 'idle' => {
    let stage = stageOf.get(id);
    if (stage) return stage;
    const stack: Frame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!.callFrame);
    stageOf.set(id, (stage = stageOfStack(stack)));
    return stage;
  };
  const stages = new Map<Stage, number>();
  const frames = new Map<string, number>();
  let idleUs = 0;
  let totalUs = 0;
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    // A sample lasts until the next one.
    const us = i + 1 < timeDeltas.length ? timeDeltas[i + 1]! : 0;
    const id = samples[i]!;
    const stage = classify(id);
    totalUs += us;
    if (stage === 'idle') {
      idleUs += us;
      continue;
    }
    stages.set(stage, (stages.get(stage) ?? 0) + us);
    const name = frameName(byId.get(id)!.callFrame, stage);
    frames.set(name, (frames.get(name) ?? 0) + us);
  }
  return { stages, frames, idleUs, totalUs };
}

/** Sampled bytes allocated per stage (and per allocating frame) of an allocation profile. */
export function attributeAllocations(profile: AllocationProfile): { stages: Map<Stage, number>; frames: Map<string, number>; totalBytes: number } {
  const stages = new Map<Stage, number>();
  const frames = new Map<string, number>();
  const bytesOf = new Map<number, number>();
  for (const sample of profile.samples) bytesOf.set(sample.nodeId, (bytesOf.get(sample.nodeId) ?? 0) + sample.size);
  let totalBytes = 0;
  const walk = (node: AllocationNode, stack: Frame[]) => {
    const here = [node.callFrame, ...stack];
    const bytes = bytesOf.get(node.id) ?? 0;
    if (bytes > 0) {
      const found = stageOfStack(here);
      const stage: Stage = found === 'idle' ? 'other JavaScript' : found;
      stages.set(stage, (stages.get(stage) ?? 0) + bytes);
      const name = frameName(node.callFrame, stage);
      frames.set(name, (frames.get(name) ?? 0) + bytes);
      totalBytes += bytes;
    }
    for (const child of node.children) walk(child, here);
  };
  walk(profile.head, []);
  return { stages, frames, totalBytes };
}

// ---------------------------------------------------------------------------------------------
// Runs

const seconds = () => Number(process.env.KW_BENCH_SECONDS ?? 5);
const connectionsOf = () => Number(process.env.KW_BENCH_CONNECTIONS ?? 10);

function settings(clients: number, documents: number, onWindow?: RunSettings['onWindow']): RunSettings {
  const durationS = seconds();
  return { ...(onWindow ? { onWindow } : {}), workload: BUILT_IN.edit!, clients, rate: null, durationS, warmupS: Math.min(1, durationS / 5), documents, blocks: 10, distribution: 'partitioned', keep: true };
}

/** A bench target over a bare node:http child of bench/http.ts (`bare-static`: every answer the same body). */
export function bareTarget(url: string, sockets: number): BenchTarget {
  const client = httpClient(url, sockets);
  let docs = 0;
  const answer = (status: number, bytes: number): Answer => ({ status, bytes, revision: '"r"' });
  return {
    label: `bare node:http ${url}`,
    kind: 'bare-http',
    persistent: false,
    preflight: async () => ({ notes: [] }),
    createDocument: async () => ({ status: 201, bytes: 0, ref: `bare${docs++}`, revision: '"r"' }),
    async read(_ref, format) {
      const raw = await client.send('GET', '/', { authorization: 'Bearer x' });
      return { ...answer(raw.status, raw.body.byteLength), ...(format === 'blocks' ? { blockIds: [] } : {}) };
    },
    async mutate(_ref, _op, revision, key, body) {
      const raw = await client.send('POST', '/', { authorization: 'Bearer x', 'content-type': 'application/json', 'idempotency-key': key, 'service-if-revision': revision }, JSON.stringify(body));
      return { ...answer(raw.status, raw.body.byteLength), ...(body.mutation.kind === 'create' ? { created: [`bare${key}`] } : {}) };
    },
    async close() {
      client.close();
      return [];
    },
  };
}

/** One measured case of a server child: throughput, answer size, CPU per request, and optionally its profile. */
interface ServerCase {
  name: string;
  measured: Measured;
  cpuUs: number;
  /** CPU µs per request by thread (`main`: the event loop's, `main:system` its system time; Linux only, 10 ms ticks over the window). */
  threadUs: Record<string, number>;
  answerBytes: number;
  profile?: CpuProfile | AllocationProfile;
}

async function measureServer(name: string, spec: Parameters<typeof startServer>[0], connections: number, profile: 'cpu' | 'alloc' | null, makeTarget: (url: string, token?: string) => BenchTarget): Promise<ServerCase> {
  const server = await startServer(spec);
  try {
    const target = makeTarget(server.ready.url, server.ready.token);
    type Cpu = Awaited<ReturnType<typeof childCpuByThread>>;
    let before: Promise<Cpu> = Promise.resolve({ total: 0, threads: {} });
    let after: Promise<Cpu> = before;
    let prof: Promise<CpuProfile | AllocationProfile | undefined> = Promise.resolve(undefined);
    const measured = await runWorkload(
      target,
      settings(connections, connections, (phase) => {
        if (phase === 'start') {
          before = childCpuByThread(server.child);
          if (profile) prof = childProfile(server.child, profile === 'cpu' ? 'start' : 'alloc-start').then(() => undefined);
        } else {
          after = childCpuByThread(server.child);
          if (profile) prof = prof.then(() => childProfile(server.child, profile === 'cpu' ? 'stop' : 'alloc-stop'));
        }
      }),
    );
    await target.close({ keep: true });
    const [b, a] = [await before, await after];
    const n = Math.max(1, measured.requests);
    const cpuUs = (a.total - b.total) / n;
    const threadUs: Record<string, number> = {};
    for (const [thread, us] of Object.entries(a.threads)) threadUs[thread] = (us - (b.threads[thread] ?? 0)) / n;
    const p = await prof;
    const edit = measured.operations.edit;
    if (!edit || edit.count === 0) throw new Error(`${name}: no edit answered (${JSON.stringify(measured.errors)})`);
    return { name, measured, cpuUs, threadUs, answerBytes: edit.meanBytes, ...(p ? { profile: p } : {}) };
  } finally {
    await stopServer(server.child);
  }
}

const fixed = (n: number, d = 1) => n.toFixed(d);

/** Print a table (first row: the header). */
function print(rows: string[][], log: (line: string) => void): void {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
}

const SOCKET: Stage = 'write response: socket write (writev)';

/**
 * The stage rows. "sampled": a stage's sampled wall time in the profiled run over the edits of its
 * window. "CPU": the same shares scaled to the main thread's CPU per edit of the unprofiled run
 * (`mainUs`), after the socket write is capped at that thread's whole system time: the sampler
 * counts wall time, and on a shared machine a thread is often descheduled inside `writev`, which
 * wakes the client on loopback, so `writev` collects time the thread did not run. The scale
 * factor is printed: 1 would mean the profile saw exactly the CPU the thread used. Then KB
 * allocated per edit (from an allocation profile of a third run, when given) and the
 * reconciliation with the measured CPU (all threads).
 */
function stageRows(profile: CpuProfile, edits: number, measure: { cpuUs: number; mainUs?: number | undefined; systemUs?: number | undefined; otherThreads?: string }, log: (line: string) => void, label: string, alloc?: { profile: AllocationProfile; edits: number }): { rows: string[][]; cpuSumUs: number } {
  const { stages, frames, idleUs, totalUs } = attribute(profile);
  const allocated = alloc ? attributeAllocations(alloc.profile) : null;
  const busy = totalUs - idleUs;
  const sampled = (stage: Stage) => (stages.get(stage) ?? 0) / edits;
  const mainUs = measure.mainUs ?? measure.cpuUs;
  const socketCpu = measure.systemUs === undefined ? sampled(SOCKET) : Math.min(sampled(SOCKET), measure.systemUs);
  const scale = (mainUs - socketCpu) / (busy / edits - sampled(SOCKET));
  const rows: string[][] = [['stage', 'µs / edit sampled', 'µs / edit CPU', '% of CPU', 'KB alloc / edit']];
  let cpuSumUs = 0;
  const cpuOf = (stage: Stage) => (stage === SOCKET ? socketCpu : sampled(stage) * scale);
  for (const stage of STAGES) {
    const bytes = (allocated?.stages.get(stage) ?? 0) / (alloc?.edits ?? 1);
    if (sampled(stage) === 0 && bytes === 0) continue;
    cpuSumUs += cpuOf(stage);
    rows.push([stage, fixed(sampled(stage), 2), fixed(cpuOf(stage), 2), `${fixed((cpuOf(stage) / mainUs) * 100)}%`, allocated ? fixed(bytes / 1024, 2) : '']);
  }
  const kb = allocated ? fixed(allocated.totalBytes / alloc!.edits / 1024, 2) : '';
  rows.push([`sum of the stages (main thread; CPU: scaled ×${fixed(scale, 2)})`, fixed(busy / edits, 2), fixed(cpuSumUs, 2), '100.0%', kb]);
  rows.push(['measured CPU per edit, unprofiled (process.cpuUsage, all threads)', '', fixed(measure.cpuUs, 2), '', '']);
  if (measure.mainUs !== undefined) {
    rows.push([`  main thread (/proc, 10 ms ticks; of it system ${fixed(measure.systemUs ?? NaN)})`, '', fixed(measure.mainUs, 2), '', '']);
    rows.push([`  other threads: unattributed (${measure.otherThreads ?? ''})`, '', fixed(measure.cpuUs - measure.mainUs, 2), '', '']);
  } else rows.push(['  unattributed (other threads, kernel outside samples)', '', fixed(measure.cpuUs - cpuSumUs, 2), '', '']);
  rows.push(['idle on the main thread (per edit, wall, profiled run)', fixed(idleUs / edits, 2), '', '', '']);
  const top = Number(process.env.KW_BENCH_STAGES_TOP ?? 0);
  if (top > 0) {
    log(`\ntop ${top} frames by self time (${label}, sampled µs per edit):`);
    for (const [name, us] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, top)) log(`  ${fixed(us / edits, 2).padStart(7)} µs  ${name}`);
    if (allocated) {
      log(`top ${top} allocating frames (${label}):`);
      for (const [name, bytes] of [...allocated.frames].sort((a, b) => b[1] - a[1]).slice(0, top)) log(`  ${fixed(bytes / alloc!.edits, 0).padStart(7)} B  ${name}`);
    }
  }
  const dir = process.env.KW_BENCH_STAGES_PROFILE;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${label}.cpuprofile`), JSON.stringify(profile));
    if (alloc) writeFileSync(join(dir, `${label}.heapprofile`), JSON.stringify(alloc.profile));
  }
  return { rows, cpuSumUs };
}

/** Other threads' CPU per request, by name, as text. */
const otherThreads = (threadUs: Record<string, number>) =>
  Object.entries(threadUs)
    .filter(([n, us]) => !n.startsWith('main') && us > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([n, us]) => `${n} ${fixed(us)}`)
    .join(', ');

/**
 * The HTTP table: a 10-block single-block edit through `kw`'s listener and API (a server child over
 * memory storage, one document per connection), beside the bare node:http answers of 1 KB and of
 * the edit's answer size, and raw Yjs doing the same edit, in one run.
 */
export async function runHttpStages(log: (line: string) => void = console.log): Promise<void> {
  if (process.env.KW_BENCH_STAGES === '0') return;
  const connections = connectionsOf();
  log(`\nWhere an edit's time goes (stages), over HTTP: ${connections} connections, ${seconds()} s per case, loopback, memory storage; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  // Unprofiled first (throughput, CPU per request), then with the CPU profiler (stages), then the
  // edit with the allocation sampler (KB per stage).
  const kw = (url: string, token?: string) => httpTarget(url, token!, connections);
  const bare = (url: string) => bareTarget(url, connections);
  const KW = { kind: 'kw', documents: 0, blocks: 10 } as const;
  const bare1k = await measureServer('bare node:http, 1 KB answer to the edit request', { kind: 'bare-static', bytes: 1024 }, connections, null, bare);
  const edit = await measureServer('API edit, 10-block document', KW, connections, null, kw);
  const sameName = `bare node:http, answer of the edit's size (${edit.answerBytes} B)`;
  const bareSame = await measureServer(sameName, { kind: 'bare-static', bytes: edit.answerBytes }, connections, null, bare);
  const editP = await measureServer('API edit (CPU profiled)', KW, connections, 'cpu', kw);
  const bareSameP = await measureServer(`${sameName} (CPU profiled)`, { kind: 'bare-static', bytes: edit.answerBytes }, connections, 'cpu', bare);
  const editA = await measureServer('API edit (allocations sampled)', KW, connections, 'alloc', kw);
  // Raw Yjs, one client, the same single-block edit of a 10-block document.
  const raw = rawYjsTarget();
  const rawM = await runWorkload(raw, settings(1, 1));
  await raw.close({ keep: false });
  const rawUs = rawM.operations.edit!.meanMs * 1000;
  log(`load after the runs ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);

  const rows: string[][] = [['case', 'req/s', 'vs 1 KB echo', 'vs same-size bare', 'server CPU µs / request', 'main thread µs (system)', 'answer bytes']];
  for (const c of [bare1k, bareSame, edit, bareSameP, editP, editA]) {
    const main = c.threadUs.main === undefined ? '' : `${fixed(c.threadUs.main)} (${fixed(c.threadUs['main:system'] ?? NaN)})`;
    rows.push([c.name, fixed(c.measured.throughput, 0), `${fixed((c.measured.throughput / bare1k.measured.throughput) * 100)}%`, `${fixed((c.measured.throughput / bareSame.measured.throughput) * 100)}%`, fixed(c.cpuUs), main, String(c.answerBytes)]);
  }
  rows.push(['raw Yjs, the same single-block edit (in-process, one client)', fixed(1e6 / rawUs, 0), '', '', fixed(rawUs, 2), '', '']);
  print(rows, log);
  recordTable('Stages: the edit over HTTP beside bare node:http (same run)', rows, 1);

  const edits = editP.measured.requests;
  const { rows: stageTable, cpuSumUs } = stageRows(editP.profile as CpuProfile, edits, { cpuUs: edit.cpuUs, mainUs: edit.threadUs.main, systemUs: edit.threadUs['main:system'], otherThreads: otherThreads(edit.threadUs) }, log, 'http-edit', { profile: editA.profile as AllocationProfile, edits: editA.measured.requests });
  log(`\nstages of the API edit (server child, ${edits} requests in the profiled window, CPU sampled every ${SAMPLE_US} µs; allocations from the sampled run, ${editA.measured.requests} requests):`);
  print(stageTable, log);
  recordTable('Stages: µs per edit over HTTP', stageTable.slice(0, -5), 2);
  // The bare server's own stages: what node:http costs for the same bytes.
  const a = attribute(bareSameP.profile as CpuProfile);
  const n = bareSameP.measured.requests;
  const part = (s: Stage) => fixed((a.stages.get(s) ?? 0) / n, 2);
  log(
    `${bareSameP.name}: node:http parse ${part('node:http: read socket, parse request')} µs, write ${part('write response: node:http (headers, outgoing)')} + socket ${part(SOCKET)} µs, ` +
      `node internals ${part('node internals (events, streams, timers, promises)')} µs, GC ${part('GC (main thread)')} µs, other ${part('other JavaScript')} µs, idle ${fixed(a.idleUs / n, 2)} µs; ` +
      `CPU ${fixed(bareSameP.cpuUs)} µs per request (main thread ${fixed(bareSameP.threadUs.main ?? NaN)}, system ${fixed(bareSameP.threadUs['main:system'] ?? NaN)})`,
  );
  log(`our work per edit beyond a bare server answering the same bytes: ${fixed(edit.cpuUs - bareSame.cpuUs)} µs of server CPU unprofiled, ${fixed(editP.cpuUs - bareSameP.cpuUs)} µs profiled (main-thread stages: ${fixed(cpuSumUs)} µs); raw Yjs edit ${fixed(rawUs, 2)} µs`);
}

/**
 * The in-process table: the engine's single-block edit of a 10-block document (memory storage, one
 * client, `engine.documents.mutate` as an embedding program calls it) profiled over the window,
 * beside raw Yjs doing the same edit in the same run.
 */
export async function runEngineStages(log: (line: string) => void = console.log): Promise<void> {
  if (process.env.KW_BENCH_STAGES === '0') return;
  log(`\nWhere an edit's time goes (stages), in-process: engine (memory storage) vs raw Yjs, one client, ${seconds()} s each; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const raw = rawYjsTarget();
  const rawM = await runWorkload(raw, settings(1, 1));
  await raw.close({ keep: false });
  const plain = engineTargetOver(createEngine({ storage: memoryStorage() }), 'memory');
  let plainStart = process.cpuUsage();
  let plainCpu = 0;
  const plainM = await runWorkload(
    plain,
    settings(1, 1, (phase) => {
      if (phase === 'start') plainStart = process.cpuUsage();
      else {
        const used = process.cpuUsage(plainStart);
        plainCpu = used.user + used.system;
      }
    }),
  );
  await plain.close({ keep: false });
  const profiled = async (kind: 'cpu' | 'alloc') => {
    const target = engineTargetOver(createEngine({ storage: memoryStorage() }), 'memory');
    let started: Promise<void> = Promise.resolve();
    let stopped: Promise<CpuProfile | AllocationProfile> | null = null;
    const m = await runWorkload(
      target,
      settings(1, 1, (phase) => {
        if (phase === 'start') {
          started = startProfile(kind);
        } else {
          stopped = started.then(() => stopProfile());
        }
      }),
    );
    await target.close({ keep: false });
    return { m, profile: await stopped! };
  };
  const cpuRun = await profiled('cpu');
  const allocRun = await profiled('alloc');
  const edits = cpuRun.m.requests;
  const rawUs = rawM.operations.edit!.meanMs * 1000;
  const engineUs = plainM.operations.edit!.meanMs * 1000;
  const profiledUs = cpuRun.m.operations.edit!.meanMs * 1000;
  log(`raw Yjs edit ${fixed(rawUs, 2)} µs (${fixed(1e6 / rawUs, 0)}/s); engine edit ${fixed(engineUs, 2)} µs (${fixed(1e6 / engineUs, 0)}/s), engine/raw ${fixed((rawUs / engineUs) * 100)}%; under the profiler ${fixed(profiledUs, 2)} µs`);
  const { rows } = stageRows(cpuRun.profile as CpuProfile, edits, { cpuUs: plainCpu / plainM.requests }, log, 'engine-edit', { profile: allocRun.profile as AllocationProfile, edits: allocRun.m.requests });
  log(`stages of the engine edit (this process, ${edits} edits in the profiled window, CPU sampled every ${SAMPLE_US} µs, scaled to the unprofiled run's CPU per edit, which includes the load loop; allocations from a third run):`);
  print(rows, log);
  recordTable('Stages: µs per edit in-process (engine)', rows.slice(0, -4), 2);
}
