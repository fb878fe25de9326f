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

/** Run the soak and print progress lines and the table. */
export async function runSoak(): Promise<void> {
  const edits = Number(process.env.KW_SOAK_EDITS ?? 1_000_000);
  const retentionMs = Number(process.env.KW_SOAK_RETENTION_MS ?? 2000);
  const maxMs = Number(process.env.KW_SOAK_MAX_SECONDS ?? 600) * 1000;
  const fsync = process.env.KW_SOAK_FSYNC === '1';
  if (!(Number.isInteger(edits) && edits >= 10_000)) throw new Error(`KW_SOAK_EDITS must be an integer ≥ 10000, got ${process.env.KW_SOAK_EDITS}`);
  if (!(retentionMs > 0) || !(maxMs > 0)) throw new Error('KW_SOAK_RETENTION_MS and KW_SOAK_MAX_SECONDS must be positive numbers');
  if (!(globalThis as { gc?: unknown }).gc) console.log('note: no --expose-gc, heap figures include garbage (run through npm run bench)');
  const dir = mkdtempSync(join(tmpdir(), 'kw-soak-'));
  console.log(`\nsoak: ${edits.toLocaleString('en-US')} edits of a 10-block document on lowdb (fsync ${fsync ? 'on' : 'off'}), idempotency retention ${retentionMs} ms, at most ${maxMs / 1000} s, in ${dir}`);
  const storage = await lowdbStorage({ dir, fsync });
  const engine = createEngine({ storage, idempotencyRetentionMs: retentionMs });
  const samples: Sample[] = [];
  const t0 = performance.now();
  let done = 0;
  let stoppedEarly = false;
  try {
    const state = await buildDocument(engine, 10);
    let version = 0;
    const sample = () => {
      const s = { edits: done, seconds: (performance.now() - t0) / 1000, heap: heapAfterGc(), folder: folderBytes(dir), journal: storage.stats().journalBytes };
      samples.push(s);
      return s;
    };
    const every = Math.max(10_000, Math.round(edits / 20));
    while (done < edits) {
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
      if (done % 1000 === 0 && performance.now() - t0 > maxMs) {
        stoppedEarly = true;
        console.log(`  stopped early: ${(maxMs / 1000).toFixed(0)} s passed after ${fmt(done)} of ${fmt(edits)} edits; the figures below are for ${fmt(done)} edits`);
        break;
      }
    }
    if (samples.at(-1)?.edits !== done) sample();
    await storage.checkpoint();
    const compacted = folderBytes(dir);
    const first = samples.find((s) => s.edits === 10_000);
    const last = samples.at(-1)!;
    if (!first) throw new Error(`the soak stopped before 10,000 edits (${done}); nothing to compare`);
    const heapRatio = last.heap / first.heap;
    const folderRatio = last.folder / compacted;
    console.log(`soak: ${fmt(done)} edits in ${last.seconds.toFixed(0)} s (${fmt(done / last.seconds)} edits/s)${stoppedEarly ? ', stopped early by the time limit' : ''}`);
    table([
      ['measure', 'after 10,000 edits', `after ${fmt(done)} edits`, 'ratio', 'target'],
      ['heap after gc (MB)', mb(first.heap), mb(last.heap), `${heapRatio.toFixed(2)}×`, `≤ 2× the 10,000-edit heap: ${heapRatio <= 2 ? 'met' : 'NOT met'}`],
      ['data folder (MB)', mb(first.folder), mb(last.folder), `${folderRatio.toFixed(2)}× compacted`, `≤ 2× compacted (${mb(compacted)} MB): ${folderRatio <= 2 ? 'met' : 'NOT met'}`],
    ], `Soak: ${fmt(done)} edits on lowdb, final vs reference (×, target ≤ 2)`, 3, 2, true);
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
