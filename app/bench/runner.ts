/**
 * The one load engine of `kw bench` and of the project's own benchmarks: makes the documents, runs
 * the clients (closed model) or lanes on a fixed schedule (open model, latency from each operation's
 * intended send time, as wrk2: no coordinated omission), records latencies in HdrHistograms, and
 * cleans up.
 * @module
 */
import { measuredSeconds, newHistogram, operationFigures, percentilesOf, round1, SecondTicker, type Histogram, type OperationFigures, type Percentiles, type Sample } from './seconds.ts';
import type { Answer, BenchTarget, MutationBody } from './targets.ts';
import { blockText } from './targets.ts';
import { documentPicker, mixPicker, OPERATIONS, type Distribution, type Operation, type Workload } from './workloads.ts';

/** A run's settings, after the command line and the workload's defaults. */
export interface RunSettings {
  workload: Workload;
  clients: number;
  /** Operations per second in all (open model), or null (closed model). */
  rate: number | null;
  durationS: number;
  warmupS: number;
  documents: number;
  blocks: number;
  distribution: Distribution;
  keep: boolean;
  /** Called about every second with a progress line; none when absent. */
  progress?: (line: string) => void;
  /** Stops the run early (Ctrl-C): operations in flight finish, the figures cover the time measured. */
  signal?: AbortSignal;
  /** `coedit`: editors connected over /documents/{ref}/sync (agents are `clients`). */
  editors?: number;
  /** Called when the measured window starts and ends (e.g. to read a server's CPU time around it). */
  onWindow?: (phase: 'start' | 'end') => void;
}

/** What a run measured (the runner's part of the JSON result). */
export interface Measured {
  durationS: number;
  throughput: number;
  latencyMs: Percentiles;
  /**
   * Per operation kind; `meanMs` is the mean latency of its successes, so with one client
   * 1000 / meanMs is the kind's rate by its own time (what the project's mutation table reports).
   */
  operations: Record<string, OperationFigures>;
  errors: Record<string, number>;
  stale: number;
  requests: number;
  successes: number;
  requestsPerSuccess: number;
  samples: Sample[];
  /** Open model: how late operations went out behind their schedule (ms). */
  scheduleLagMs: { mean: number; max: number } | null;
  /** The last X-Service-Requests-Remaining the server sent. */
  serverRequestsRemaining: number | null;
  documentRefs: string[];
  notes: string[];
}

/** How many times a mutation answered 412 goes read → retry before the operation counts as failed. */
export const MAX_ATTEMPTS = 10;

interface DocState {
  ref: string;
  revision: string;
  ids: string[];
}

let runSeq = 0;

/** Build the mutation an operation sends, from what the bench knows of the document. */
function mutationFor(op: Operation, doc: DocState, n: number, settings: RunSettings): { kind: Operation; body: MutationBody } {
  const ids = doc.ids;
  const floor = Math.max(1, Math.floor(settings.blocks / 2));
  // (never past the 10,000-block outline bound)
  const ceiling = Math.min(Math.max(settings.blocks * 2, floor + 2), 9_999);
  // Structural operations keep a document between half and twice its size; edits and moves need blocks.
  let kind = op;
  if (kind === 'delete' && ids.length <= floor) kind = 'create';
  else if (kind === 'create' && ids.length >= ceiling) kind = 'delete';
  if ((kind === 'edit' || kind === 'delete') && ids.length === 0) kind = 'create';
  if (kind === 'move' && ids.length < 2) kind = 'create';
  const text = (settings.workload.text ?? (settings.blocks >= 5000 ? 'Edited {n}' : 'Edited {n} with some **text**.')).replaceAll('{n}', String(n));
  const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
  let mutation: Record<string, unknown>;
  if (kind === 'edit') mutation = { kind: 'edit', blockId: pick(), block: { type: 'paragraph', markdown: text } };
  else if (kind === 'move') {
    const a = pick();
    let b = pick();
    while (b === a) b = ids[(ids.indexOf(a) + 1 + Math.floor(Math.random() * (ids.length - 1))) % ids.length]!;
    mutation = { kind: 'move', blockIds: [a], newParentBlockId: null, beforeBlockId: b };
  } else if (kind === 'delete') mutation = { kind: 'delete', blockIds: [ids[ids.length - 1]!] };
  else if (kind === 'create') mutation = { kind: 'create', parentBlockId: null, beforeBlockId: ids.length > 0 ? pick() : null, blocks: [{ type: 'paragraph', markdown: 'New block.' }] };
  else mutation = { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: text }] };
  return { kind, body: { v: 1, intent: `kw bench ${kind}`, mutation } };
}

/** Answer class for the errors table: the status and the code (`429 RATE_LIMITED`), or a network error. */
export const errorKey = (a: Answer) => (a.status === 0 ? (a.code ?? 'network error') : `${a.status}${a.code && !a.code.startsWith('HTTP') ? ` ${a.code}` : ''}`);

/** Make the documents of a run: `documents` documents of `blocks` paragraphs each. */
async function makeDocuments(target: BenchTarget, settings: RunSettings, key: () => string, title: string): Promise<DocState[]> {
  const docs: DocState[] = [];
  // A few at a time: setup is not what is measured, but a remote target should not wait on one socket.
  const parallel = Math.min(8, settings.documents);
  let next = 0;
  const makeOne = async (d: number) => {
    const made = await target.createDocument(`${title} ${d + 1}`, key());
    if (!made.ref || !made.revision) throw new SetupFailed(`creating a document answered ${errorKey(made)}`);
    const doc: DocState = { ref: made.ref, revision: made.revision, ids: [] };
    for (let n = 0; n < settings.blocks; ) {
      const count = Math.min(50, settings.blocks - n);
      const blocks = Array.from({ length: count }, (_, i) => ({ type: 'paragraph', markdown: blockText(n + i, settings.blocks) }));
      const out = await target.mutate(doc.ref, 'create', doc.revision, key(), { v: 1, intent: 'kw bench setup', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks } });
      if (out.status !== 200 || !out.revision) throw new SetupFailed(`adding blocks to a document answered ${errorKey(out)}`);
      doc.revision = out.revision;
      doc.ids.push(...(out.created ?? []));
      n += count;
    }
    docs[d] = doc;
  };
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < settings.documents) await makeOne(next++);
    }),
  );
  return docs;
}

/** The target failed while the bench made its documents (exit 1). */
export class SetupFailed extends Error {
  override readonly name = 'SetupFailed';
}

/** Empty the documents a run made (the API deletes no documents; their blocks go). */
async function emptyDocuments(target: BenchTarget, docs: DocState[], key: () => string): Promise<number> {
  let emptied = 0;
  for (const doc of docs) {
    const read = await target.read(doc.ref, 'blocks');
    if (read.status !== 200 || !read.revision) continue;
    let revision = read.revision;
    const ids = read.blockIds ?? [];
    let ok = true;
    for (let i = 0; i < ids.length && ok; i += 64) {
      const out = await target.mutate(doc.ref, 'delete', revision, key(), { v: 1, intent: 'kw bench cleanup', mutation: { kind: 'delete', blockIds: ids.slice(i, i + 64) } });
      ok = out.status === 200 && out.revision !== undefined;
      if (ok) revision = out.revision!;
    }
    if (ok) emptied++;
  }
  return emptied;
}

const sleep = (delayMs: number) => new Promise<void>((done) => (delayMs >= 1 ? setTimeout(done, delayMs) : setImmediate(done)));

/**
 * Run a workload against a target: make the documents, warm up, measure, clean up (unless `keep`).
 * @throws SetupFailed when the documents cannot be made.
 */
export async function runWorkload(target: BenchTarget, settings: RunSettings): Promise<Measured> {
  const run = `${Date.now().toString(36)}${(++runSeq).toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  let keySeq = 0;
  const key = () => `kwbench-${run}-${(++keySeq).toString(36).padStart(8, '0')}`;
  const docs = await makeDocuments(target, settings, key, `kw bench ${run}`);
  const pickOp = mixPicker(settings.workload.mix);
  const pickDoc = documentPicker(settings.distribution, docs.length, settings.clients);

  const all = newHistogram();
  const byOp = new Map<Operation, { h: Histogram; count: number; errors: number; bytes: number; answers: number }>();
  for (const op of OPERATIONS) byOp.set(op, { h: newHistogram(), count: 0, errors: 0, bytes: 0, answers: 0 });
  const errors: Record<string, number> = {};
  let stale = 0;
  let requests = 0;
  let successes = 0;
  let remaining: number | null = null;
  let lagSum = 0;
  let lagMax = 0;
  let lagCount = 0;
  let counter = 0;

  const t0 = performance.now();
  let stoppedAt = Infinity;
  const measureFrom = t0 + settings.warmupS * 1000;
  const measureTo = measureFrom + settings.durationS * 1000;
  const seconds = new SecondTicker(t0, measureFrom, measureTo);
  const measuring = (at: number) => at >= measureFrom && at < measureTo;

  /** One operation as an agent does it: a mutation answered 412 reads the document and tries again. */
  const perform = async (op: Operation, doc: DocState): Promise<{ answer: Answer; kind: Operation; requests: number; stale: number }> => {
    if (op === 'read') {
      const answer = await target.read(doc.ref, 'rich-json');
      if (answer.status === 200 && answer.revision) doc.revision = answer.revision;
      return { answer, kind: op, requests: 1, stale: 0 };
    }
    let sent = 0;
    let seen412 = 0;
    let kind: Operation = op;
    let answer: Answer = { status: 0, bytes: 0 };
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const m = mutationFor(op, doc, ++counter, settings);
      kind = m.kind;
      const revision = doc.revision;
      answer = await target.mutate(doc.ref, kind === 'append' ? 'append' : kind, revision, key(), m.body);
      sent++;
      if (answer.status === 200 && answer.revision) {
        doc.revision = answer.revision;
        const mut = m.body.mutation as { kind: string; blockIds?: string[] };
        if (mut.kind === 'create' && answer.created) {
          if (kind === 'append') doc.ids.push(...answer.created);
          else doc.ids.splice(Math.max(0, doc.ids.length - 1), 0, ...answer.created);
        } else if (mut.kind === 'delete') doc.ids = doc.ids.filter((id) => !mut.blockIds!.includes(id));
        break;
      }
      if (answer.status !== 412) break;
      seen412++;
      // As an agent would: read the document's current revision and blocks, then try again.
      const fresh = await target.read(doc.ref, 'blocks');
      sent++;
      if (fresh.status !== 200 || !fresh.revision) {
        answer = fresh;
        break;
      }
      doc.revision = fresh.revision;
      if (fresh.blockIds) doc.ids = fresh.blockIds;
    }
    return { answer, kind, requests: sent, stale: seen412 };
  };

  const record = (startedAt: number, endedAt: number, result: Awaited<ReturnType<typeof perform>>) => {
    if (result.answer.remaining !== undefined) remaining = result.answer.remaining;
    const ok = result.answer.status >= 200 && result.answer.status < 300;
    const latencyUs = Math.max(1, Math.round((endedAt - startedAt) * 1000));
    if (ok) seconds.success(latencyUs);
    else seconds.errors++;
    if (!measuring(startedAt)) return;
    const entry = byOp.get(result.kind)!;
    entry.count++;
    requests += result.requests;
    stale += result.stale;
    if (ok) {
      successes++;
      all.recordValue(latencyUs);
      entry.h.recordValue(latencyUs);
      entry.bytes += result.answer.bytes;
      entry.answers++;
    } else {
      entry.errors++;
      const k = errorKey(result.answer);
      errors[k] = (errors[k] ?? 0) + 1;
    }
  };

  // Progress and per-second samples.
  const tick = () => {
    const second = seconds.tick();
    settings.progress?.(`${SecondTicker.lead(second)}  ${second.rate.toFixed(0).padStart(7)} ops/s  p50 ${second.p50.toFixed(2)} ms  p99 ${second.p99.toFixed(2)} ms  errors ${second.errors}`);
  };
  const timer = setInterval(tick, 1000);
  const windowCalls = new Set<'start' | 'end'>();
  const windowCall = (phase: 'start' | 'end') => {
    if (windowCalls.has(phase)) return;
    windowCalls.add(phase);
    settings.onWindow?.(phase);
  };
  const windowTimers = settings.onWindow ? [setTimeout(() => windowCall('start'), measureFrom - performance.now()), setTimeout(() => windowCall('end'), measureTo - performance.now())] : [];

  try {
    if (settings.rate === null) {
      // Closed model: each client sends its next operation when the last one has answered.
      await Promise.all(
        Array.from({ length: settings.clients }, async (_, client) => {
          let yielded = performance.now();
          while (performance.now() < measureTo && !settings.signal?.aborted) {
            // An in-process target can answer without ever leaving the microtask queue: let the
            // progress timer (and the other clients' I/O) run every few milliseconds.
            if (performance.now() - yielded > 10) {
              await new Promise<void>((done) => setImmediate(done));
              yielded = performance.now();
            }
            const doc = docs[pickDoc(client)]!;
            const startedAt = performance.now();
            const result = await perform(pickOp(), doc);
            record(startedAt, performance.now(), result);
          }
        }),
      );
    } else {
      // Open model: lane c sends at start + (k + c / clients) × interval; a late answer delays the
      // lane's next send, and that wait counts in the next operation's latency (from its schedule).
      const interval = (settings.clients / settings.rate) * 1000;
      await Promise.all(
        Array.from({ length: settings.clients }, async (_, lane) => {
          let scheduled = t0 + (lane / settings.clients) * interval;
          while (scheduled < measureTo && !settings.signal?.aborted) {
            const now = performance.now();
            if (scheduled > now) await sleep(Math.min(scheduled - now, 250));
            if (performance.now() < scheduled) continue; // woke early to look at the signal
            const sentAt = performance.now();
            if (measuring(scheduled)) {
              const lag = Math.max(0, sentAt - scheduled);
              lagSum += lag;
              lagCount++;
              if (lag > lagMax) lagMax = lag;
            }
            const doc = docs[pickDoc(lane)]!;
            const result = await perform(pickOp(), doc);
            record(scheduled, performance.now(), result);
            scheduled += interval;
          }
        }),
      );
    }
  } finally {
    stoppedAt = performance.now();
    clearInterval(timer);
    for (const t of windowTimers) clearTimeout(t);
    if (settings.onWindow) {
      windowCall('start');
      windowCall('end');
    }
  }
  if (seconds.samples.length === 0 || performance.now() - seconds.last > 500) tick();

  const notes: string[] = [];
  if (!settings.keep && target.persistent) {
    const emptied = await emptyDocuments(target, docs, key);
    notes.push(`emptied the ${emptied} of ${docs.length} documents it made (the API deletes no documents: each keeps its title "kw bench ${run} N" and no blocks); --keep keeps them whole`);
  } else if (settings.keep && target.persistent) notes.push(`kept the ${docs.length} documents it made (titles "kw bench ${run} N")`);

  // Stopped early: the figures cover the part of the measured window that ran.
  const durationS = measuredSeconds(settings, measureFrom, stoppedAt, notes);
  return {
    durationS,
    throughput: durationS > 0 ? round1(successes / durationS) : 0,
    latencyMs: percentilesOf(all),
    operations: operationFigures(byOp, durationS),
    errors,
    stale,
    requests,
    successes,
    requestsPerSuccess: successes ? Math.round((requests / successes) * 1000) / 1000 : 0,
    samples: seconds.samples,
    scheduleLagMs: settings.rate === null ? null : { mean: lagCount ? Math.round((lagSum / lagCount) * 1000) / 1000 : 0, max: Math.round(lagMax * 1000) / 1000 },
    serverRequestsRemaining: remaining,
    documentRefs: docs.map((d) => d.ref),
    notes,
  };
}

