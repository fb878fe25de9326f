/**
 * Soak: memory and storage over time. N awaited single-block edits of one 10-block document through
 * the engine on lowdb (reading only `receipt.resultingVersion` and `document.revision`), with a short
 * idempotency retention so that records expire and are swept. Samples the heap (after gc) and the
 * data folder's size after the first 10,000 edits and at the end, and checks:
 * - final heap ≤ 2× the heap after 10,000 edits;
 * - final folder ≤ 2× (compacted state + the records of one retention window): after the loop the
 *   soak waits for the next idempotency sweep (src/idempotency/sweep.ts sweeps every 24th of the
 *   retention, at least 100 ms apart, so records outlive their retention by up to that), writes a checkpoint, and adds the
 *   checkpoint bytes of one retention window's records (measured per swept record, counted at the
 *   edit rate of the last sampling interval) to that size.
 * It also prints the heap after the sweep, the heap of a fresh engine that reopened the folder, how
 * often the document was rebuilt on a fresh Yjs history, and the folded log kept for replays.
 *
 * Runs only when named: `npm run bench -- soak`. Settings: KW_SOAK_EDITS (default 1,000,000),
 * KW_SOAK_RETENTION_MS (default 2000, at most 60000), KW_SOAK_MAX_SECONDS (default 600: the loop stops there with
 * a message and reports what it measured), KW_SOAK_FSYNC=1 to fdatasync every commit (default off:
 * the soak measures growth, not the disk; durability costs time, not state).
 * @module
 */
import { sweepIntervalFor } from '../src/idempotency/sweep.ts';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lowdbStorage } from '../adapters/lowdb/index.ts';
import { createEngine } from '../src/engine.ts';
import { HISTORY_COLLECTION } from '../src/documents/history.ts';
import { IDEMPOTENCY_COLLECTION } from '../src/idempotency/idempotency.ts';
import { actor, buildDocument, fmt, key, table } from './mutations.ts';

/** Bytes of every file under `dir`. */
function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

/** Heap used after a full gc (run with --expose-gc, as `npm run bench` does). */
function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

interface Sample { edits: number; seconds: number; heap: number; folder: number; journal: number }

interface Settings { edits: number; retentionMs: number; maxMs: number; fsync: boolean }
interface LoopResult {
  samples: Sample[];
  done: number;
  stoppedEarly: boolean;
  ref: string;
  /** Folder after a checkpoint at the end, and after the next sweep removed the expired records. */
  compacted: number;
  settled: { heap: number; folder: number; seconds: number };
  /** Checkpoint bytes per idempotency record (the difference the sweep made, per record it removed). */
  recordBytes: number;
  /** Folded stretches of the log kept at the end of the loop (for receipts that may replay), and their JSON bytes. */
  history: { count: number; bytes: number };
  /** The document's history generation at the end: how many times it was rebuilt on a fresh Y.Doc. */
  generation: number;
}

const sweepEvery = sweepIntervalFor;

/** The edit loop: samples after 10,000 edits, every 5% of N and at the end; then a checkpoint (the compacted folder). */
async function editLoop(dir: string, o: Settings): Promise<LoopResult> {
  const storage = await lowdbStorage({ dir, fsync: o.fsync });
  const engine = createEngine({ storage, idempotencyRetentionMs: o.retentionMs });
  const samples: Sample[] = [];
  const t0 = performance.now();
  let done = 0;
  try {
    const state = await buildDocument(engine, 10);
    let version = 0;
    const sample = () => {
      const s = { edits: done, seconds: (performance.now() - t0) / 1000, heap: heapAfterGc(), folder: folderBytes(dir), journal: storage.stats().journalBytes };
      samples.push(s);
      return s;
    };
    const edit = async () => {
      const blockId = state.ids[done % state.ids.length];
      const out = await engine.documents.mutate(actor, state.ref, {
        idempotencyKey: key(),
        ifRevision: state.revision,
        body: { v: 1, intent: 'soak', mutation: { kind: 'edit', blockId, block: { type: 'paragraph', markdown: `Soak edit ${done} with some **text**.` } } },
      });
      version = out.receipt.resultingVersion;
      state.revision = out.document.revision;
    };
    const every = Math.max(10_000, Math.round(o.edits / 20));
    let stoppedEarly = false;
    while (done < o.edits) {
      await edit();
      done++;
      if (done === 10_000 || done % every === 0) {
        const s = sample();
        console.log(`  ${fmt(done)} edits (version ${version}), ${s.seconds.toFixed(0)} s, ${fmt(done / s.seconds)} edits/s, heap ${mb(s.heap)} MB, folder ${mb(s.folder)} MB (journal ${mb(s.journal)} MB)`);
      }
      if (done % 1000 === 0 && performance.now() - t0 > o.maxMs) {
        stoppedEarly = true;
        console.log(`  stopped early: ${(o.maxMs / 1000).toFixed(0)} s passed after ${fmt(done)} of ${fmt(o.edits)} edits; the figures below are for ${fmt(done)} edits`);
        break;
      }
    }
    if (samples.at(-1)?.edits !== done) sample();
    await storage.checkpoint();
    const compacted = folderBytes(dir);
    const before = (await storage.listRecords(IDEMPOTENCY_COLLECTION)).length;
    const stretches = await storage.listRecords(HISTORY_COLLECTION);
    const history = { count: stretches.length, bytes: stretches.reduce((n, r) => n + JSON.stringify(r.value).length, 0) };
    // Settle: past one sweep interval (and the retention), one more edit starts the sweep; flush awaits it.
    const settleMs = sweepEvery(o.retentionMs) + o.retentionMs + 500;
    console.log(`  settling: ${(settleMs / 1000).toFixed(1)} s until the next idempotency sweep (${fmt(before)} records kept now)`);
    await new Promise((r) => setTimeout(r, settleMs));
    await edit();
    await engine.documents.flush();
    const swept = before + 1 - (await storage.listRecords(IDEMPOTENCY_COLLECTION)).length;
    const heap = heapAfterGc();
    await storage.checkpoint();
    const folder = folderBytes(dir);
    const recordBytes = swept > 0 ? (compacted - folder) / swept : 0;
    return { samples, done, stoppedEarly, ref: state.ref, compacted, settled: { heap, folder, seconds: (performance.now() - t0) / 1000 }, recordBytes, history, generation: (await storage.getDocumentHead(state.ref))?.generation ?? 0 };
  } finally {
    await engine.close();
  }
}

/** Heap (after gc) of a fresh engine that opened the folder and read the document: the state without the soaked process's history. */
async function reopenedHeap(dir: string, ref: string): Promise<number> {
  const engine = createEngine({ storage: await lowdbStorage({ dir, fsync: false }) });
  try {
    await engine.documents.read(actor, ref, 'rich-json');
    return heapAfterGc();
  } finally {
    await engine.close();
  }
}

/** Run the soak and print progress lines and the table. */
export async function runSoak(): Promise<void> {
  const o: Settings = {
    edits: Number(process.env.KW_SOAK_EDITS ?? 1_000_000),
    retentionMs: Number(process.env.KW_SOAK_RETENTION_MS ?? 2000),
    maxMs: Number(process.env.KW_SOAK_MAX_SECONDS ?? 600) * 1000,
    fsync: process.env.KW_SOAK_FSYNC === '1',
  };
  if (!(Number.isInteger(o.edits) && o.edits >= 10_000)) throw new Error(`KW_SOAK_EDITS must be an integer ≥ 10000, got ${process.env.KW_SOAK_EDITS}`);
  if (!(o.retentionMs > 0 && o.retentionMs <= 60_000) || !(o.maxMs > 0)) {
    // The soak waits one sweep interval plus the retention after the loop: at most 2 minutes this way.
    throw new Error('KW_SOAK_RETENTION_MS must be from 1 to 60000 and KW_SOAK_MAX_SECONDS a positive number');
  }
  if (!(globalThis as { gc?: unknown }).gc) console.log('note: no --expose-gc, heap figures include garbage (run through npm run bench)');
  const dir = mkdtempSync(join(tmpdir(), 'kw-soak-'));
  console.log(`\nsoak: ${fmt(o.edits)} edits of a 10-block document on lowdb (fsync ${o.fsync ? 'on' : 'off'}), idempotency retention ${o.retentionMs} ms, at most ${o.maxMs / 1000} s, in ${dir}`);
  try {
    const { samples, done, stoppedEarly, ref, compacted, settled, recordBytes, history, generation } = await editLoop(dir, o);
    const reopened = await reopenedHeap(dir, ref);
    const first = samples.find((s) => s.edits === 10_000);
    const last = samples.at(-1)!;
    if (!first) throw new Error(`the soak stopped before 10,000 edits (${done}); nothing to compare`);
    const rate = done / last.seconds;
    // The records in the folder at the end are those of the last window: count them at the rate of
    // the last sampling interval (the machine's load moves the rate during a run), not the average.
    const previous = samples.at(-2);
    const endRate = previous && last.seconds > previous.seconds ? (last.edits - previous.edits) / (last.seconds - previous.seconds) : rate;
    // The reference of the folder target: the compacted state after the sweep plus the records of one retention window.
    const window = settled.folder + recordBytes * endRate * (o.retentionMs / 1000);
    const heapRatio = last.heap / first.heap;
    const folderRatio = last.folder / window;
    console.log(`soak: ${fmt(done)} edits in ${last.seconds.toFixed(0)} s (${fmt(rate)} edits/s; ${fmt(endRate)} edits/s over the last interval)${stoppedEarly ? ', stopped early by the time limit' : ''}`);
    const later = samples.filter((s) => s.edits > 10_000);
    const span = (pick: (s: Sample) => number) => (later.length ? `${mb(Math.min(...later.map(pick)))}-${mb(Math.max(...later.map(pick)))}` : '-');
    table([
      ['measure', 'after 10,000 edits', `after ${fmt(done)} edits`, 'ratio', 'samples after 10,000', 'after the sweep', 'target'],
      ['heap after gc (MB)', mb(first.heap), mb(last.heap), `${heapRatio.toFixed(2)}×`, span((s) => s.heap), mb(settled.heap), `final ≤ 2× the 10,000-edit heap: ${heapRatio <= 2 ? 'met' : 'NOT met'}`],
      ['data folder (MB)', mb(first.folder), mb(last.folder), `${folderRatio.toFixed(2)}×`, span((s) => s.folder), mb(settled.folder), `final ≤ 2× (compacted ${mb(settled.folder)} + retention window ${mb(window - settled.folder)}): ${folderRatio <= 2 ? 'met' : 'NOT met'}`],
    ], `Soak: ${fmt(done)} edits on lowdb, final vs reference (×, target ≤ 2)`, 3, 2, true);
    console.log(`after the sweep: heap ${(settled.heap / first.heap).toFixed(2)}× the 10,000-edit heap; a fresh engine over the compacted folder: heap ${mb(reopened)} MB`);
    console.log(`checkpoint before the sweep ${mb(compacted)} MB; ${recordBytes.toFixed(0)} bytes per idempotency record in a checkpoint`);
    console.log(`the document was rebuilt ${fmt(generation)} times (history generation); ${history.count} folded stretches of its log kept at the end (${mb(history.bytes)} MB)`);
    const keptMs = sweepEvery(o.retentionMs) + o.retentionMs;
    console.log(`idempotency records kept by design: up to retention + sweep interval = ${(keptMs / 1000).toFixed(0)} s of edits, ~${fmt((keptMs / 1000) * endRate)} records at the last interval's rate`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
