/**
 * Mutation throughput of the engine in-process, beside raw Yjs doing the same operations in the
 * same run, both driven by `kw bench`'s load engine (app/bench/runner.ts: the same code users run). Prints mutations/s and the ratio to raw Yjs and the heap held by a 10,000-block document
 * (lowdb durability figures are in bench/lowdb.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as Y from 'yjs';
import { lowdbStorage } from '../adapters/lowdb/index.ts';
import { memoryStorage } from '../adapters/memory/index.ts';
import type { Actor } from '../src/actor.ts';
import { createEngine, type Engine } from '../src/engine.ts';
import { sha256Hex } from '../src/hash.ts';
import type { Storage } from '../src/ports.ts';
import { recordTable } from './report.ts';
import { runWorkload, type Measured, type RunSettings } from '../app/bench/runner.ts';
import { engineTargetOver, rawYjsTarget } from '../app/bench/targets.ts';

export const SECONDS = Number(process.env.KW_BENCH_SECONDS ?? 1);
/**
 * `KW_BENCH_MUTATIONS=10` runs only the 10-block memory rows (the in-process target), for quick
 * before/after comparisons; the full table is not recorded for the report then.
 */
const MEMORY_ONLY = process.env.KW_BENCH_MUTATIONS === '10';

/** A clock in milliseconds. */
type Clock = () => number;
const wallMs: Clock = () => performance.now();
export const actor: Actor = { accountId: 'bench', credentialRef: null, documentRef: null };
let keySeq = 0;
export const key = () => `bench-key-${(++keySeq).toString(36).padStart(10, '0')}`;

type Op = 'edit' | 'create' | 'move' | 'delete';

/**
 * Block text. 10,000 blocks of the richer text (~305 bytes of rich-json each) would exceed the API's
 * 2 MB response limit, which the engine enforces on every mutation, so large documents use short
 * plain text (~196 bytes a block, 1.96 MB in all) and edits that keep the size about the same.
 */
const compact = (size: number) => size >= 5000;
const blockText = (size: number, n: number) => (compact(size) ? `Block ${n}` : `Block ${n} with some **text** in it.`);
export const editText = (size: number, n: number) => (compact(size) ? `Edited ${n}` : `Edited ${n} with some **text**.`);
const OPS: Op[] = ['edit', 'create', 'move', 'delete'];

/**
 * Run `fn` repeatedly for about SECONDS of its own time (by `clock`, wall time unless given; at
 * most five times as long by the wall) and return operations per second. When
 * `needsRefill()` says so, `refill()` runs outside the timed sections (deletes need blocks to delete,
 * creates need room under the 10,000-block bound).
 */
export async function rate(fn: () => unknown, needsRefill?: () => boolean, refill?: () => Promise<void> | void, seconds = SECONDS, clock: Clock = wallMs): Promise<number> {
  const ensure = async () => {
    if (needsRefill?.() && refill) await refill();
  };
  for (let i = 0; i < 20; i++) {
    await ensure();
    await fn(); // warm-up
  }
  let spent = 0;
  let n = 0;
  const wall = performance.now();
  while (spent < seconds * 1000 && performance.now() - wall < seconds * 5000) {
    await ensure();
    const t = clock();
    for (let i = 0; i < 16 && !needsRefill?.(); i++) {
      await fn();
      n++;
    }
    spent += clock() - t;
  }
  return n / (spent / 1000);
}

/** Raw Yjs: the same block records in a Y.Map, one transact per operation, update captured. */
function rawYjs(size: number) {
  const doc = new Y.Doc();
  const map = doc.getMap<Record<string, unknown>>('blocks');
  const ids: string[] = [];
  let seq = 0;
  const add = (n: number) =>
    doc.transact(() => {
      for (let i = 0; i < n; i++) {
        const id = `b${seq++}`;
        ids.push(id);
        map.set(id, { t: 'paragraph', p: null, o: `a${seq.toString(36).padStart(4, '0')}`, md: blockText(size, seq) });
      }
    });
  add(size);
  let last: Uint8Array | null = null;
  doc.on('update', (u: Uint8Array) => {
    last = u;
  });
  const op = (kind: Op) => {
    doc.transact(() => {
      seq++;
      const id = ids[seq % ids.length]!;
      if (kind === 'edit') map.set(id, { ...map.get(id)!, md: editText(size, seq) });
      else if (kind === 'move') map.set(id, { ...map.get(id)!, o: `z${seq}` });
      else if (kind === 'create') {
        const nid = `n${seq}`;
        ids.push(nid);
        map.set(nid, { t: 'paragraph', p: null, o: `y${seq}`, md: 'New block.' });
      } else map.delete(ids.pop()!);
    });
    return last;
  };
  return {
    op,
    size: () => ids.length,
    refill: () => add(size - ids.length),
    trim: (to: number) =>
      doc.transact(() => {
        while (ids.length > to) map.delete(ids.pop()!);
      }),
  };
}

/** Creates a document of `size` paragraph blocks through the engine. */
export async function buildDocument(engine: Engine, size: number): Promise<{ ref: string; revision: string; ids: string[] }> {
  const created = await engine.documents.create(actor, { idempotencyKey: key(), body: { v: 1, title: `bench ${size}` } });
  let revision = created.document.revision;
  const ids: string[] = [];
  for (let made = 0; made < size; ) {
    const n = Math.min(50, size - made);
    const blocks = Array.from({ length: n }, (_, i) => ({ type: 'paragraph', markdown: blockText(size, made + i) }));
    const out = await engine.documents.mutate(actor, created.document.documentRef, {
      idempotencyKey: key(),
      ifRevision: revision,
      body: { v: 1, intent: 'build', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks } },
    });
    revision = out.document.revision;
    ids.push(...out.receipt.affectedBlockIds);
    made += n;
  }
  return { ref: created.document.documentRef, revision, ids };
}

/** One engine operation of `kind` on the document; keeps `state` current. */
export function engineOp(engine: Engine, state: { ref: string; revision: string; ids: string[] }, kind: Op) {
  const size = state.ids.length;
  let seq = 0;
  return async () => {
    seq++;
    const ids = state.ids;
    let mutation: unknown;
    if (kind === 'edit') mutation = { kind: 'edit', blockId: ids[seq % ids.length], block: { type: 'paragraph', markdown: editText(size, seq) } };
    else if (kind === 'move') {
      const a = ids[seq % ids.length]!;
      let b = ids[(seq * 7 + 3) % ids.length]!;
      if (b === a) b = ids[(seq + 1) % ids.length]!;
      mutation = { kind: 'move', blockIds: [a], newParentBlockId: null, beforeBlockId: b };
    } else if (kind === 'create') mutation = { kind: 'create', parentBlockId: null, beforeBlockId: ids[seq % ids.length], blocks: [{ type: 'paragraph', markdown: 'New block.' }] };
    else mutation = { kind: 'delete', blockIds: [ids[ids.length - 1]] };
    const out = await engine.documents.mutate(actor, state.ref, { idempotencyKey: key(), ifRevision: state.revision, body: { v: 1, intent: kind, mutation } });
    state.revision = out.document.revision;
    if (kind === 'create') ids.push(out.receipt.affectedBlockIds[0]!);
    if (kind === 'delete') ids.pop();
  };
}

/** A rate for a table cell: thousands separators from 100 up, one decimal below. */
export function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1);
}

/** Print a table (first row: the header) and keep it for the report (see report.ts). */
export function table(rows: string[][], title = '', chart = rows[0]!.length - 1, target?: number, lower = false): void {
  if (title) recordTable(title, rows, chart, target, lower);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
}

/**
 * Engine vs raw Yjs on documents of the given sizes, both through `kw bench`'s load engine
 * (app/bench/runner.ts): one client, one document of `size` blocks, one operation kind. A kind's rate
 * is by its own time (1000 / mean latency of its successes), as before: structural kinds keep the
 * document between half and twice its size (at most 9,999 blocks), so a create at the bound is
 * followed by a delete, which counts as a delete.
 */
async function throughput(makeStorage: () => Promise<Storage>, label: string, kind: 'memory' | 'lowdb', sizes: number[], ops: Op[] = OPS): Promise<string[][]> {
  const rows: string[][] = [];
  for (const size of sizes) {
    for (const op of ops) {
      const settings: RunSettings = {
        workload: { name: op, description: `${op} only`, mix: { [op]: 1 } },
        clients: 1,
        rate: null,
        durationS: SECONDS,
        warmupS: Math.min(0.5, SECONDS / 4),
        documents: 1,
        blocks: size,
        distribution: 'partitioned',
        keep: false,
      };
      const ownRate = (m: Measured) => {
        const o = m.operations[op];
        if (!o || o.meanMs <= 0) throw new Error(`${label} ${op} at ${size} blocks: no ${op} succeeded (${JSON.stringify(m.errors)})`);
        return 1000 / o.meanMs;
      };
      const rawTarget = rawYjsTarget();
      const rawRate = ownRate(await runWorkload(rawTarget, settings));
      await rawTarget.close({ keep: false });
      const target = engineTargetOver(createEngine({ storage: await makeStorage() }), kind);
      const engineRate = ownRate(await runWorkload(target, settings));
      await target.close({ keep: false });
      rows.push([`${label} ${op}`, fmt(size), fmt(rawRate), fmt(engineRate), `${((engineRate / rawRate) * 100).toFixed(1)}%`]);
    }
  }
  return rows;
}

/** The 10,000-block edit target: engine edit vs (raw Yjs edit + one SHA-256 pass over the document). */
async function largeEditBudget(): Promise<void> {
  const storage = memoryStorage();
  const engine = createEngine({ storage });
  const state = await buildDocument(engine, 10_000);
  const read = await engine.documents.read(actor, state.ref);
  const json = read.format === 'rich-json' ? read.document.documentJson : '';
  const raw = rawYjs(10_000);
  const rawEdit = 1 / (await rate(() => raw.op('edit')));
  const hash = 1 / (await rate(() => sha256Hex(json)));
  const edit = 1 / (await rate(engineOp(engine, state, 'edit')));
  const budget = 3 * (rawEdit + hash);
  console.log(
    `\n10,000-block edit: engine ${(edit * 1e3).toFixed(3)} ms; raw Yjs edit ${(rawEdit * 1e3).toFixed(3)} ms + SHA-256 of ${(json.length / 1e6).toFixed(2)} MB ${(hash * 1e3).toFixed(3)} ms; ` +
      `ratio to (raw + hash) ${(edit / (rawEdit + hash)).toFixed(2)}× (target ≤ 3×: ${edit <= budget ? 'met' : 'NOT met'})`,
  );
  await engine.close();
}

/** Heap held by one 10,000-block document (needs --expose-gc for an exact figure). */
async function heap(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const engine = createEngine({ storage: memoryStorage() });
  const state = await buildDocument(engine, 10_000);
  await engine.documents.read(actor, state.ref);
  gc?.();
  const after = process.memoryUsage().heapUsed;
  console.log(`\nheap held by a 10,000-block document (engine cache + memory adapter): ${((after - before) / 1e6).toFixed(1)} MB (target < 50 MB)${gc ? '' : ' [no --expose-gc: approximate]'}`);
  await engine.close();
}

/** Run every mutation benchmark and print the tables. */
export async function runMutationBench(): Promise<void> {
  console.log(`Mutation throughput, ${SECONDS}s per case (KW_BENCH_SECONDS to change), through kw bench's load engine (app/bench)\n`);
  const rows = [['case', 'blocks', 'raw Yjs ops/s', 'engine ops/s', 'engine/raw']];
  rows.push(...(await throughput(async () => memoryStorage(), 'memory', 'memory', MEMORY_ONLY ? [10] : [10, 1000, 10_000])));
  if (MEMORY_ONLY) {
    table(rows);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'kw-bench-'));
  let n = 0;
  try {
    rows.push(...(await throughput(async () => lowdbStorage({ dir: join(dir, `db${n++}`) }), 'lowdb', 'lowdb', [10, 1000, 10_000])));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  table(rows, 'Mutation throughput: engine vs raw Yjs (engine/raw, %)', 4, 30);
  console.log('target: in-process (memory), 10-block document, every kind ≥ 30% of raw Yjs');
  await largeEditBudget();
  await heap();
}

// Run directly (`tsx bench/mutations.ts`); bundled into bench/index.ts every module shares the
// bundle's import.meta.url, so compare with this file's own name too.
if (import.meta.url === `file://${process.argv[1]}` && process.argv[1]?.endsWith('mutations.ts')) await runMutationBench();
