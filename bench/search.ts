/**
 * Search over 100,000 graph records: index build time and heap, query latency p50/p99 through the
 * whole knowledge layer (body validation, boundary check, catch-up, paging) beside MiniSearch's own
 * query time on the same documents with the same options (the baseline; target ≥ 50% of its rate),
 * and acceptances while the index stays current.
 */
import MiniSearch from 'minisearch';
import { memoryStorage } from '../adapters/memory/index.ts';
import type { Actor } from '../src/actor.ts';
import { createEngine, type Engine } from '../src/engine.ts';
import { seededIds } from '../src/ids.ts';
import { KnowledgeCollections, type GraphRecord } from '../src/knowledge/records.ts';
import { graphDoc, MINISEARCH_OPTIONS, type SearchDoc } from '../src/knowledge/search-index.ts';
import type { Storage } from '../src/ports.ts';

const TARGET_RECORDS = Number(process.env.KW_BENCH_SEARCH_RECORDS ?? 100_000);
const QUERIES = 2000;
const actor: Actor = { accountId: 'bench', credentialRef: null, documentRef: null };
const scopes = new Set(['knowledge:read', 'public:read']);

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 2 ** 32;
  };
}

const rnd = random(42);
const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'sa', 'tor', 'vel', 'qui', 'dan', 'ph', 'or', 'us', 'ix', 'el', 'ban', 'cor', 'tem', 'nu', 'gra', 'fi'];
const VOCABULARY = Array.from({ length: 5000 }, (_, i) => {
  let w = '';
  for (let n = i, k = 0; k < 3 || n > 0; k++, n = Math.floor(n / SYLLABLES.length)) w += SYLLABLES[n % SYLLABLES.length];
  return w;
});
// Zipf-like: frequent words are frequent
const word = () => VOCABULARY[Math.floor(VOCABULARY.length * rnd() ** 3)]!;
const words = (n: number) => Array.from({ length: n }, word).join(' ');

/** A maximal proposal (32 entities, 128 facts, 128 evidence, 32 inquiries): about 354 graph records once accepted. */
function bigProposal(tag: string) {
  const entities = Array.from({ length: 32 }, (_, i) => ({
    key: `e${i}`, name: `${words(2)} ${tag}${i}`, description: words(12), language: 'en', identifiers: [`https://example.org/${tag}/${i}`], concepts: ['concept'],
  }));
  const facts = Array.from({ length: 128 }, (_, i) => ({
    key: `f${i}`, subject: `e${i % 32}`, predicate: 'description', stance: 'reports', object: { kind: 'text', language: 'en', text: words(8) },
  }));
  const evidence = Array.from({ length: 128 }, (_, i) => ({
    key: `v${i}`, factKey: `f${i}`, bearing: 'supports', selector: words(6), source: { kind: 'uri', uri: `https://example.org/src/${tag}/${i}` },
  }));
  const inquiries = Array.from({ length: 32 }, (_, i) => ({ key: `q${i}`, question: `${words(8)}?`, answerForm: 'short-answer', language: 'en', parentKeys: [] }));
  return { v: 2, entities, facts, evidence, inquiries };
}

let keySeq = 0;
const key = () => `bench-search-${String(++keySeq).padStart(10, '0')}`;

async function accept(engine: Engine, spaceRef: string, tag: string): Promise<void> {
  const r = await engine.knowledge.submitProposal({ actor, jobId: `kjob_${'b'.repeat(48)}`, spaceRef }, bigProposal(tag), { idempotencyKey: key() });
  await engine.operator.decide(r.reviewRef, { decision: 'accept', person: 'Bench' });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const gc = (globalThis as { gc?: () => void }).gc;
const heap = () => {
  gc?.();
  return process.memoryUsage().heapUsed;
};

/** Run the search benchmark and print its figures. */
export async function runSearchBench(): Promise<void> {
  console.log(`\nSearch over ${TARGET_RECORDS.toLocaleString('en')} graph records (KW_BENCH_SEARCH_RECORDS to change)\n`);
  const storage: Storage = memoryStorage();
  const writer = createEngine({ storage, ids: seededIds(7) });
  const doc = await writer.documents.create(actor, { idempotencyKey: key(), body: { v: 1, title: 'Bench' } });
  const spaceRef = doc.document.spaceRef;
  let t = performance.now();
  let batches = 0;
  while (((await storage.getRecord<{ recordCount: number }>(KnowledgeCollections.spaces, spaceRef))?.value.recordCount ?? 0) < TARGET_RECORDS) await accept(writer, spaceRef, `t${batches++}x`);
  const records = (await storage.getRecord<{ recordCount: number }>(KnowledgeCollections.spaces, spaceRef))!.value.recordCount;
  console.log(`corpus: ${records.toLocaleString('en')} records from ${batches} accepted proposals in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  // A fresh engine over the same storage: the index is built from storage on the first query.
  const engine = createEngine({ storage, ids: seededIds(8) });
  const queries = Array.from({ length: QUERIES }, () => (rnd() < 0.5 ? word() : `${word()} ${word()}`));
  const before = heap();
  t = performance.now();
  await engine.knowledge.search(actor, scopes, { v: 1, scope: { kind: 'space', spaceRef }, query: queries[0]! });
  const buildMs = performance.now() - t;
  const layerHeap = heap() - before;
  console.log(`index build (first query after start): ${(buildMs / 1000).toFixed(2)} s, heap held ${(layerHeap / 1e6).toFixed(0)} MB`);

  // Baseline: MiniSearch alone over the same documents, same options and the same AND-then-OR query.
  const docs = (await storage.listRecords<GraphRecord>(KnowledgeCollections.graph, `${spaceRef}/`)).map((r) => graphDoc(r.value)).filter((d): d is SearchDoc => d !== null);
  const baseBefore = heap();
  t = performance.now();
  const mini = new MiniSearch<SearchDoc>(MINISEARCH_OPTIONS);
  mini.addAll(docs);
  const baseBuildMs = performance.now() - t;
  console.log(`baseline MiniSearch.addAll of the same ${docs.length.toLocaleString('en')} documents: ${(baseBuildMs / 1000).toFixed(2)} s, heap ${((heap() - baseBefore) / 1e6).toFixed(0)} MB`);

  const time = async (fn: (q: string) => unknown) => {
    for (const q of queries.slice(0, 100)) await fn(q); // warm-up
    const lat: number[] = [];
    const start = performance.now();
    for (const q of queries) {
      const s = performance.now();
      await fn(q);
      lat.push(performance.now() - s);
    }
    const total = performance.now() - start;
    lat.sort((a, b) => a - b);
    return { rate: queries.length / (total / 1000), p50: percentile(lat, 0.5), p99: percentile(lat, 0.99) };
  };
  const base = await time((q) => {
    const r = mini.search(q, { combineWith: 'AND' });
    return r.length ? r : mini.search(q);
  });
  const layer = await time((q) => engine.knowledge.search(actor, scopes, { v: 1, scope: { kind: 'space', spaceRef }, query: q, limit: 20 }));
  const fmt = (x: { rate: number; p50: number; p99: number }) => `${x.rate.toFixed(0)} q/s, p50 ${x.p50.toFixed(2)} ms, p99 ${x.p99.toFixed(2)} ms`;
  console.log(`baseline MiniSearch.search: ${fmt(base)}`);
  console.log(`knowledge.search (space scope, limit 20): ${fmt(layer)}  → ${((layer.rate / base.rate) * 100).toFixed(0)}% of baseline (target ≥ 50%)`);

  // Acceptances while the index stays current: each accepted proposal is searchable by its own tag at once.
  const acceptMs: number[] = [];
  const firstQueryMs: number[] = [];
  for (let i = 0; i < 10; i++) {
    const tag = `fresh${i}tag`;
    let s = performance.now();
    await accept(engine, spaceRef, tag);
    acceptMs.push(performance.now() - s);
    s = performance.now();
    const hits = await engine.knowledge.search(actor, scopes, { v: 1, scope: { kind: 'space', spaceRef }, query: `${tag}0` });
    firstQueryMs.push(performance.now() - s);
    if (!hits.items.some((h) => h.title.endsWith(`${tag}0`))) throw new Error(`accepted entity ${tag}0 is not searchable`);
  }
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`accepting a 354-record proposal: ${avg(acceptMs).toFixed(1)} ms on average; the next query finds it (catch-up included): ${avg(firstQueryMs).toFixed(2)} ms on average`);
  await writer.close();
  await engine.close();
}

if (import.meta.url === `file://${process.argv[1]}` && process.argv[1]?.endsWith('search.ts')) await runSearchBench();
