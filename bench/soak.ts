/**
 * Soak: memory and storage over time. N awaited single-block edits of one 10-block document through
 * the engine on lowdb (reading only `receipt.resultingVersion` and `document.revision`), with a short
 * idempotency retention so that records expire and are swept. Samples the heap (after gc) and the
 * data folder's size after the first 10,000 edits and at the end, and checks:
 * - final heap ≤ 2× the heap after 10,000 edits;
 * - final folder ≤ 2× the compacted folder (a checkpoint written at the end, which holds the
 *   compacted state and the idempotency records not yet swept: the retention window plus at most one
 *   sweep interval, 1 minute).
 *
 * Runs only when named: `npm run bench -- soak`. Settings: KW_SOAK_EDITS (default 1,000,000),
 * KW_SOAK_RETENTION_MS (default 2000), KW_SOAK_MAX_SECONDS (default 600: the loop stops there with
 * a message and reports what it measured), KW_SOAK_FSYNC=1 to fdatasync every commit (default off:
 * the soak measures growth, not the disk; durability costs time, not state).
 * @module
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lowdbStorage } from '../adapters/lowdb/index.ts';
import { createEngine } from '../src/engine.ts';
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
interface LoopResult { samples: Sample[]; done: number; stoppedEarly: boolean; compacted: number; ref: string }

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
    const every = Math.max(10_000, Math.round(o.edits / 20));
    let stoppedEarly = false;
    while (done < o.edits) {
      const blockId = state.ids[done % state.ids.length];
      const out = await engine.documents.mutate(actor, state.ref, {
        idempotencyKey: key(),
        ifRevision: state.revision,
        body: { v: 1, intent: 'soak', mutation: { kind: 'edit', blockId, block: { type: 'paragraph', markdown: `Soak edit ${done} with some **text**.` } } },
      });
      version = out.receipt.resultingVersion;
      state.revision = out.document.revision;
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
    return { samples, done, stoppedEarly, compacted: folderBytes(dir), ref: state.ref };
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
  if (!(o.retentionMs > 0) || !(o.maxMs > 0)) throw new Error('KW_SOAK_RETENTION_MS and KW_SOAK_MAX_SECONDS must be positive numbers');
  if (!(globalThis as { gc?: unknown }).gc) console.log('note: no --expose-gc, heap figures include garbage (run through npm run bench)');
  const dir = mkdtempSync(join(tmpdir(), 'kw-soak-'));
  console.log(`\nsoak: ${fmt(o.edits)} edits of a 10-block document on lowdb (fsync ${o.fsync ? 'on' : 'off'}), idempotency retention ${o.retentionMs} ms, at most ${o.maxMs / 1000} s, in ${dir}`);
  try {
    const { samples, done, stoppedEarly, compacted, ref } = await editLoop(dir, o);
    const reopened = await reopenedHeap(dir, ref);
    const first = samples.find((s) => s.edits === 10_000);
    const last = samples.at(-1)!;
    if (!first) throw new Error(`the soak stopped before 10,000 edits (${done}); nothing to compare`);
    const heapRatio = last.heap / first.heap;
    const folderRatio = last.folder / compacted;
    console.log(`soak: ${fmt(done)} edits in ${last.seconds.toFixed(0)} s (${fmt(done / last.seconds)} edits/s)${stoppedEarly ? ', stopped early by the time limit' : ''}`);
    const later = samples.filter((s) => s.edits > 10_000);
    const span = (pick: (s: Sample) => number) => (later.length ? `${mb(Math.min(...later.map(pick)))}-${mb(Math.max(...later.map(pick)))}` : '-');
    table([
      ['measure', 'after 10,000 edits', `after ${fmt(done)} edits`, 'ratio', 'samples after 10,000', 'target'],
      ['heap after gc (MB)', mb(first.heap), mb(last.heap), `${heapRatio.toFixed(2)}×`, span((s) => s.heap), `≤ 2× the 10,000-edit heap: ${heapRatio <= 2 ? 'met' : 'NOT met'}`],
      ['data folder (MB)', mb(first.folder), mb(last.folder), `${folderRatio.toFixed(2)}× compacted`, span((s) => s.folder), `≤ 2× compacted (${mb(compacted)} MB): ${folderRatio <= 2 ? 'met' : 'NOT met'}`],
    ], `Soak: ${fmt(done)} edits on lowdb, final vs reference (×, target ≤ 2)`, 3, 2, true);
    console.log(`heap of a fresh engine that reopened the compacted folder and read the document: ${mb(reopened)} MB`);
    // src/idempotency/sweep.ts sweeps at most once per max(1 minute, retention / 24): between sweeps the records of that long stay.
    const sweepMs = Math.min(3600_000, Math.max(60_000, o.retentionMs / 24));
    console.log(`idempotency records kept by design: up to retention + sweep interval = ${((o.retentionMs + sweepMs) / 1000).toFixed(0)} s of edits, ~${fmt(((o.retentionMs + sweepMs) / 1000) * (done / last.seconds))} records at this rate`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
