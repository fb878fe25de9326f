/**
 * Library capture under load: save 1,000 links to a loopback page server while reads continue.
 * Prints, from one run:
 * - save-link latency p50/p99 while captures and reads run, beside the idle p99 (one save at a time,
 *   no capture running);
 * - captures/s of the background queue, beside the raw Readability-over-linkedom parse rate of the
 *   same page in the same run (the ceiling: capture = fetch + parse + commit);
 * - reads/s during the load;
 * - the most capture jobs held in memory (bounded by queueSize + concurrency) and the peak heap growth.
 * Run: `npx tsx bench/library.ts` (KW_BENCH_LINKS sets the number of links, default 1000).
 */
import { contentExtractor, extractHtml, nodeFetcher } from '../adapters/capture/index.ts';
import { memoryStorage } from '../adapters/memory/index.ts';
import { startPageServer } from '../fixtures/pages/server.ts';
import type { Actor } from '../src/actor.ts';
import { createEngine, type Engine } from '../src/engine.ts';

const LINKS = Number(process.env.KW_BENCH_LINKS ?? 1000);
const CONCURRENCY = 4;
const QUEUE_SIZE = 64;
const SAVERS = 8;
const actor: Actor = { accountId: 'bench', credentialRef: 'scred_000000000000000000000bbb', documentRef: null };
let seq = 0;
const key = () => `bench-lib-${(++seq).toString(36).padStart(10, '0')}`;

/** The `p`-th percentile of `xs`. */
export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function timedSave(engine: Engine, url: string): Promise<number> {
  const t = performance.now();
  await engine.library.execute(actor, { type: 'save-link', url, idempotencyKey: key() });
  return performance.now() - t;
}

/** Raw parse rate of the same article page: Readability over linkedom, no fetch, no storage. */
async function rawParseRate(origin: string): Promise<number> {
  const html = await (await fetch(`${origin}/article-0.html`)).text();
  for (let i = 0; i < 50; i++) extractHtml(html, origin);
  const t = performance.now();
  let n = 0;
  while (performance.now() - t < 1500) {
    extractHtml(html.replace('part 0', `part ${n}`), origin);
    n++;
  }
  return n / ((performance.now() - t) / 1000);
}

/** Run the bench and print its figures. */
export async function runLibraryBench(): Promise<void> {
  const pages = await startPageServer();
  const engine = createEngine({
    storage: memoryStorage(),
    fetcher: nodeFetcher({ testAllowOrigins: [pages.origin] }),
    extractor: contentExtractor(),
    library: { concurrency: CONCURRENCY, queueSize: QUEUE_SIZE, onError: (e) => console.error('capture error', e) },
  });
  try {
    // Warm-up (JIT, connection pool), then idle: one save at a time, each capture finished before the next.
    for (let i = 0; i < 50; i++) await timedSave(engine, `${pages.origin}/article-${5000 + i}.html`);
    await engine.library.idle();
    const idle: number[] = [];
    for (let i = 0; i < 200; i++) {
      idle.push(await timedSave(engine, `${pages.origin}/article-${i}.html`));
      await engine.library.idle();
    }
    globalThis.gc?.();
    const heapBase = process.memoryUsage().heapUsed;
    let heapPeak = heapBase;
    let maxHeld = 0;
    const sampler = setInterval(() => {
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    }, 5);

    // Load: SAVERS concurrent savers push LINKS saves while a reader lists and gets without pause.
    let reading = true;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        const page = await engine.library.execute(actor, { type: 'list', limit: 20 });
        if (page.type === 'list' && page.items[0]) await engine.library.execute(actor, { type: 'get', itemId: page.items[0].itemId });
        reads += 2;
        // The memory adapter answers in microtasks: yield so that sockets (the captures) get their turn,
        // as they would between HTTP requests.
        await new Promise((r) => setImmediate(r));
      }
    })();
    const loaded: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: SAVERS }, async () => {
        while (next < LINKS) {
          const i = next++;
          loaded.push(await timedSave(engine, `${pages.origin}/article-${1000 + i}.html`));
          maxHeld = Math.max(maxHeld, engine.library.heldJobs());
        }
      }),
    );
    const savedAt = performance.now();
    await engine.library.idle();
    const capturedAt = performance.now();
    reading = false;
    await reader;
    clearInterval(sampler);
    const readRate = reads / ((capturedAt - started) / 1000);
    const captureRate = LINKS / ((capturedAt - started) / 1000);
    const parseRate = await rawParseRate(pages.origin);

    const listed = await engine.library.execute(actor, { type: 'list', limit: 50 });
    const ready = listed.type === 'list' ? listed.items.filter((i) => i.capture?.state === 'ready').length : 0;
    console.log(`library bench: ${LINKS} links, ${SAVERS} concurrent savers, capture concurrency ${CONCURRENCY}, queueSize ${QUEUE_SIZE}`);
    if (process.env.KW_BENCH_DEBUG) console.log([...idle].sort((a, b) => b - a).slice(0, 8).map((x) => x.toFixed(1)).join(" "));
    console.log(`  save-link latency idle:   p50 ${ms(percentile(idle, 50))}  p99 ${ms(percentile(idle, 99))}`);
    console.log(`  save-link latency loaded: p50 ${ms(percentile(loaded, 50))}  p99 ${ms(percentile(loaded, 99))}  (all ${LINKS} saved in ${ms(savedAt - started)})`);
    console.log(`  captures/s: ${captureRate.toFixed(0)}  vs raw readability+linkedom parses/s of the same page: ${parseRate.toFixed(0)}  (${((captureRate / parseRate) * 100).toFixed(0)}%)`);
    console.log(`  reads/s during the load: ${readRate.toFixed(0)}`);
    console.log(`  capture jobs held in memory at most: ${maxHeld} (bound ${QUEUE_SIZE + CONCURRENCY}); peak heap growth ${((heapPeak - heapBase) / 1048576).toFixed(1)} MiB (includes the ${LINKS} stored items and captures: the memory adapter keeps them on the heap)`);
    console.log(`  newest 50 items ready: ${ready}/50`);
  } finally {
    await engine.close();
    await pages.close();
  }
}

if (process.argv[1]?.endsWith('library.ts') || process.argv[1]?.endsWith('library.mjs')) await runLibraryBench();
