/**
 * Capture off the engine's thread (`npm run bench -- capture-stall`). Prints, from one run:
 * 1. throughput: captures/s of ordinary pages (fixtures/pages article, 1,000 distinct links over a
 *    loopback page server), read on the extraction pool, beside the raw parse rate of the same page
 *    on one thread (Readability over linkedom, no fetch, no storage) measured in the same run, and
 *    their ratio;
 * 2. stall: document GET latency over HTTP (p50/p99/max) with no capture running, then while hostile
 *    HTML uploads are being read (1,000 nested divs, 11 KB; 20,000 paragraphs, 200 KB; a 1.1 MB page
 *    of nested divs), and their ratio; and, for comparison, the longest GET while one smaller hostile
 *    page (300 nested divs) is read on the engine's thread as before the pool;
 * 3. unfinished uploads: peak RSS growth for 8 × (prepare 20 MiB + PUT, never finished), with the
 *    file spool of the dev server and with the memory spool.
 * @module
 */
import { contentExtractor, extractHtml, nodeFetcher, type ContentExtractor } from '../adapters/capture/index.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileUploadSpool } from '../adapters/lowdb/index.ts';
import { memoryStorage } from '../adapters/memory/index.ts';
import { memoryUploadSpool } from '../src/library/upload-spool.ts';
import { request } from '../fixtures/http-kit.ts';
import { startPageServer } from '../fixtures/pages/server.ts';
import { createApiHandler } from '../src/api/handler.ts';
import type { Actor } from '../src/actor.ts';
import { createEngine } from '../src/engine.ts';
import { listen } from '../transports/http/listener.ts';
import { percentile } from './library.ts';
import { recordTable } from './report.ts';

const LINKS = Number(process.env.KW_BENCH_LINKS ?? 1000);
const actor: Actor = { accountId: 'bench', credentialRef: 'scred_000000000000000000000bbc', documentRef: null };
let seq = 0;
const key = () => `bench-stall-${(++seq).toString(36).padStart(10, '0')}`;
const encode = (s: string) => new TextEncoder().encode(s);
const nested = (n: number) => encode(`<!doctype html><html><body>${'<div>'.repeat(n)}deep${'</div>'.repeat(n)}</body></html>`);
const paragraphs = (n: number) => encode(`<!doctype html><html><body>${'<p>x</p>\n'.repeat(n)}</body></html>`);

/** Parses of one page on this thread for `ms`: Readability over linkedom, no fetch, no storage. */
function rawParses(html: string, origin: string, ms: number): { n: number; ms: number } {
  const t = performance.now();
  let n = 0;
  while (performance.now() - t < ms) {
    extractHtml(html.replace('part 0', `part ${n}`), origin);
    n++;
  }
  return { n, ms: performance.now() - t };
}

/**
 * Captures/s against raw parses/s, interleaved: the machine is shared, so ROUNDS rounds each take a
 * raw-parse window and then a batch of captures, and both rates are totals over all rounds — each
 * half of a round sees the same load.
 */
async function throughput(): Promise<{ captureRate: number; parseRate: number; threads: number }> {
  const ROUNDS = 5;
  const pages = await startPageServer();
  const extractor = contentExtractor();
  const engine = createEngine({
    storage: memoryStorage(),
    fetcher: nodeFetcher({ testAllowOrigins: [pages.origin] }),
    extractor,
    library: { concurrency: 8, queueSize: 256, onError: (e) => console.error('capture error', e) },
  });
  try {
    for (let i = 0; i < 50; i++) await engine.library.execute(actor, { type: 'save-link', url: `${pages.origin}/article-${9000 + i}.html`, idempotencyKey: key() });
    await engine.library.idle();
    const html = await (await fetch(`${pages.origin}/article-0.html`)).text();
    rawParses(html, pages.origin, 300);
    let parses = 0;
    let parseMs = 0;
    let captureMs = 0;
    let next = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const raw = rawParses(html, pages.origin, 600);
      parses += raw.n;
      parseMs += raw.ms;
      const until = Math.round((LINKS * round) / ROUNDS);
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < until) await engine.library.execute(actor, { type: 'save-link', url: `${pages.origin}/article-${next++}.html`, idempotencyKey: key() });
        }),
      );
      await engine.library.idle();
      captureMs += performance.now() - started;
    }
    return { captureRate: LINKS / (captureMs / 1000), parseRate: parses / (parseMs / 1000), threads: extractor.pool!.threads };
  } finally {
    await engine.close();
    await pages.close();
  }
}

interface Latency {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

async function stall(extractor: ContentExtractor, hostile: Uint8Array[], minMs: number): Promise<{ idle: Latency; loaded: Latency; failed: string[] }> {
  // A short budget window: on a quiet machine the GET loop spends more than one budget's 10,000 requests.
  const engine = createEngine({ storage: memoryStorage(), extractor, budgetWindowMs: 200, library: { onError: (e) => console.error('capture error', e) } });
  const handler = createApiHandler({ engine, operatorKey: 'bench-operator-key-0123456789abcdef', log: () => {} });
  const server = await listen(handler, { port: 0 });
  try {
    const created = await request(server.url, '/operator/v1/credentials', {
      method: 'POST',
      token: 'bench-operator-key-0123456789abcdef',
      body: { label: 'bench', scopes: ['document:create', 'document:read', 'library:read', 'library:write'], requestBudget: 10000 },
    });
    const token = created.json.data.token as string;
    const doc = await request(server.url, '/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Bench notes' } });
    const ref = doc.json.data.document?.documentRef ?? doc.json.data.documentRef;
    const get = async () => {
      const t = performance.now();
      const r = await request(server.url, `/api/v1/documents/${ref}`, { token });
      if (r.status !== 200) throw new Error(`document GET answered ${r.status}: ${r.text.slice(0, 200)}`);
      return performance.now() - t;
    };
    const summary = (xs: number[]): Latency => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), max: Math.max(...xs), n: xs.length });
    for (let i = 0; i < 50; i++) await get();
    const idle: number[] = [];
    for (let i = 0; i < 300; i++) idle.push(await get());

    const itemIds: string[] = [];
    for (const [i, bytes] of hostile.entries()) {
      const call = (body: object) => request(server.url, '/api/v1/library', { method: 'POST', token, body });
      const prepared = await call({ type: 'prepare-upload', fileName: `hostile-${i}.html`, contentType: 'text/html', byteLength: bytes.byteLength, idempotencyKey: key() });
      await request(server.url, prepared.json.data.upload.path, { method: 'PUT', token, body: bytes });
      const finished = await call({ type: 'finish-upload', uploadId: prepared.json.data.upload.uploadId, idempotencyKey: key() });
      itemIds.push(finished.json.data.item.itemId);
    }
    const loaded: number[] = [];
    let done = false;
    const settled = engine.library.idle().then(() => (done = true));
    const t0 = performance.now();
    while (!done || performance.now() - t0 < minMs) loaded.push(await get());
    await settled;
    const failed: string[] = [];
    for (const [i, itemId] of itemIds.entries()) {
      const got = await request(server.url, '/api/v1/library', { method: 'POST', token, body: { type: 'get', itemId } });
      const c = got.json.data.item.capture;
      failed.push(`${hostile[i]!.byteLength} B: ${c.state}${c.reason ? ` (${c.reason.code})` : ''}`);
    }
    return { idle: summary(idle), loaded: summary(loaded), failed };
  } finally {
    await server.close();
    await engine.close();
  }
}

/**
 * Unfinished uploads: 8 × (prepare 20 MiB + PUT, never finished) by one credential, with the default
 * caps, over HTTP; peak RSS growth (sampled every 5 ms, after a GC) and what the spool holds.
 */
async function unfinishedUploads(kind: 'file' | 'memory'): Promise<{ accepted: number; refused: number; rssGrowthMiB: number; spoolMiB: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-spool-'));
  const spool = kind === 'file' ? fileUploadSpool({ dir }) : memoryUploadSpool();
  const engine = createEngine({ storage: memoryStorage(), library: { uploadSpool: spool } });
  const handler = createApiHandler({ engine, operatorKey: 'bench-operator-key-0123456789abcdef', log: () => {} });
  const server = await listen(handler, { port: 0 });
  const body = new Uint8Array(20 * 1024 * 1024).fill(7);
  try {
    const created = await request(server.url, '/operator/v1/credentials', { method: 'POST', token: 'bench-operator-key-0123456789abcdef', body: { label: 'bench', scopes: ['library:write'] } });
    const token = created.json.data.token as string;
    globalThis.gc?.();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 8; i++) {
      const prepared = await request(server.url, '/api/v1/library', { method: 'POST', token, body: { type: 'prepare-upload', fileName: `big-${i}.pdf`, contentType: 'application/pdf', byteLength: body.byteLength, idempotencyKey: key() } });
      if (prepared.status !== 201) {
        refused++;
        continue;
      }
      const put = await request(server.url, prepared.json.data.upload.path, { method: 'PUT', token, body });
      if (put.status === 200) accepted++;
    }
    clearInterval(sampler);
    let spoolBytes = 0;
    for (const id of await spool.list()) spoolBytes += (await spool.read(id))?.byteLength ?? 0;
    return { accepted, refused, rssGrowthMiB: (peak - base) / 1048576, spoolMiB: spoolBytes / 1048576 };
  } finally {
    await server.close();
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Run both parts and print their figures. */
export async function runCaptureStallBench(): Promise<void> {
  const t = await throughput();
  const ratio = t.captureRate / t.parseRate;
  console.log(`capture-stall bench: ${availableParallelism()} cores, 1-minute load average ${loadavg()[0]!.toFixed(1)} (the machine may be shared)`);
  console.log(`capture-stall bench: throughput (${LINKS} ordinary pages, extraction pool of ${t.threads} thread${t.threads === 1 ? '' : 's'})`);
  console.log(`  captures/s ${t.captureRate.toFixed(0)}  vs raw parses/s of the same page on one thread ${t.parseRate.toFixed(0)}  (${(ratio * 100).toFixed(0)}%)`);

  const pooled = contentExtractor({ timeLimitMs: 5000 });
  const hostile = [nested(1000), paragraphs(20_000), nested(100_000)];
  const s = await stall(pooled, hostile, 3000);
  await pooled.close();
  const f = (x: number) => `${x.toFixed(1)} ms`;
  console.log(`capture-stall bench: document GET over HTTP while hostile uploads are read (pool, 5 s limit per page)`);
  console.log(`  idle:    p50 ${f(s.idle.p50)}  p99 ${f(s.idle.p99)}  max ${f(s.idle.max)}  (${s.idle.n} GETs)`);
  console.log(`  hostile: p50 ${f(s.loaded.p50)}  p99 ${f(s.loaded.p99)}  max ${f(s.loaded.max)}  (${s.loaded.n} GETs)  p99 ratio ${(s.loaded.p99 / s.idle.p99).toFixed(2)}×`);
  console.log(`  captures: ${s.failed.join('; ')}`);
  const inline = await stall(contentExtractor({ threads: false }), [nested(300)], 0);
  console.log(`  for comparison, one page of 300 nested divs read on the engine's thread (no pool): GET max ${f(inline.loaded.max)}`);
  for (const kind of ['file', 'memory'] as const) {
    const u = await unfinishedUploads(kind);
    console.log(
      `capture-stall bench: 8 × (prepare 20 MiB + PUT, never finished), ${kind} spool: ${u.accepted} accepted, ${u.refused} refused (409, caps); peak RSS growth ${u.rssGrowthMiB.toFixed(1)} MiB; spool holds ${u.spoolMiB.toFixed(0)} MiB`,
    );
  }
  recordTable(
    'Capture off the engine thread',
    [
      ['figure', 'value'],
      ['captures/s (pool)', t.captureRate.toFixed(0)],
      ['raw parses/s (one thread)', t.parseRate.toFixed(0)],
      ['captures/s ÷ raw parses/s', `${(ratio * 100).toFixed(0)}%`],
      ['document GET p99 idle', f(s.idle.p99)],
      ['document GET p99 during hostile captures', f(s.loaded.p99)],
      ['p99 ratio hostile ÷ idle', `${(s.loaded.p99 / s.idle.p99).toFixed(2)}×`],
      ['GET max, 300 nested divs read inline', f(inline.loaded.max)],
    ],
    1,
    30,
  );
}

if (process.argv[1]?.endsWith('capture-stall.ts')) await runCaptureStallBench();
