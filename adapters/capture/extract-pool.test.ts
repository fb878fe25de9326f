import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pageBytes } from '../../fixtures/pages/server.ts';
import { captureFailure } from './capture-failure-kit.ts';
import { contentExtractor } from './index.ts';

const encode = (s: string) => new TextEncoder().encode(s);
/** 78 runs of 127 nested divs in 110 KB: Readability over linkedom needs seconds of CPU for it. */
const nestedDivs = () => encode(`<!doctype html><html><body>${`${'<div>'.repeat(127)}deep text${'</div>'.repeat(127)}`.repeat(78)}</body></html>`);

const failure = captureFailure;

test('pages are read on one reused thread: the same text as on the calling thread', async () => {
  const extractor = contentExtractor({ threads: 1 });
  try {
    const inline = contentExtractor({ threads: false });
    for (let i = 0; i < 3; i++) {
      const out = await extractor.extract('html', pageBytes('article.html'), 'http://127.0.0.1/article.html');
      assert.equal(out, await inline.extract('html', pageBytes('article.html'), 'http://127.0.0.1/article.html'));
    }
    const pdf = await extractor.extract('pdf', pageBytes('tide-pools.pdf'), 'upload:x');
    assert.equal(pdf.paragraphs, ['Field notes on tidal pools Anemones close when the tide goes out. Barnacles filter plankton at high water.']);
    assert.is(extractor.pool!.stats.started, 1);
    const damaged = await failure(extractor.extract('pdf', pageBytes('tide-pools.pdf').slice(0, 200), 'upload:x'));
    assert.is(damaged.code, 'extract-failed');
  } finally {
    await extractor.close();
  }
});

test('a page past the time limit fails with timeout, its thread is replaced, and the next page is read', async () => {
  const extractor = contentExtractor({ threads: 1, timeLimitMs: 300 });
  try {
    // Both hostile pages are handed over at once: the second waits for the first's thread to be replaced.
    const [first, second] = await Promise.all([failure(extractor.extract('html', nestedDivs(), 'http://127.0.0.1/')), failure(extractor.extract('html', nestedDivs(), 'http://127.0.0.1/'))]);
    assert.is(first.code, 'timeout');
    assert.match(first.message, /300 ms limit/);
    assert.is(second.code, 'timeout');
    const out = await extractor.extract('html', pageBytes('article.html'), 'http://127.0.0.1/article.html');
    assert.is(out.paragraphs.length, 5);
    assert.equal(extractor.pool!.stats, { started: 3, timedOut: 2, outOfMemory: 0 });
  } finally {
    await extractor.close();
  }
});

test('a page past the memory limit fails with too-large and kills only its thread', async () => {
  const extractor = contentExtractor({ threads: 1, maxHeapMb: 24, timeLimitMs: 60_000 });
  try {
    // 100,000 paragraphs (800 KB): their DOM and Readability's passes need far more than 24 MiB.
    const huge = encode(`<!doctype html><html><body>${'<p>x</p>'.repeat(100_000)}</body></html>`);
    const refused = await failure(extractor.extract('html', huge, 'http://127.0.0.1/'));
    assert.is(refused.code, 'too-large');
    assert.match(refused.message, /24 MiB memory limit/);
    const out = await extractor.extract('html', pageBytes('article.html'), 'http://127.0.0.1/article.html');
    assert.is(out.paragraphs.length, 5);
    assert.is(extractor.pool!.stats.outOfMemory, 1);
  } finally {
    await extractor.close();
  }
});

/** The report's benign long page: 20,000 paragraphs, 329 KB. */
const longPage = () => encode(`<!doctype html><html><head><title>Long</title></head><body><article>${Array.from({ length: 20_000 }, (_, i) => `<p>Para ${i}</p>`).join('')}</article></body></html>`);

test('a benign page of 20,000 paragraphs (329 KB) is read within the default time limit (was a timeout: a quadratic walk)', async () => {
  const extractor = contentExtractor({ threads: 1 });
  try {
    const bytes = longPage();
    assert.ok(bytes.byteLength > 320_000 && bytes.byteLength < 340_000, String(bytes.byteLength));
    const out = await extractor.extract('html', bytes, 'http://127.0.0.1/long.html');
    assert.is(out.paragraphs.length, 20_000);
    assert.is(out.paragraphs[19_999], 'Para 19999');
    // The report's hostile page of 1,000 nested divs is no longer one: it is read, not timed out.
    const nested = await extractor.extract('html', encode(`<!doctype html><html><body>${'<div>'.repeat(1000)}deep${'</div>'.repeat(1000)}</body></html>`), 'http://127.0.0.1/');
    assert.equal(nested.paragraphs, ['deep']);
  } finally {
    await extractor.close();
  }
});

test("pages wait for a thread taking turns between holders: one holder's hostile pages delay another's page by one page, not all of them", async () => {
  const extractor = contentExtractor({ threads: 1, timeLimitMs: 300 });
  try {
    const order: string[] = [];
    const track = (name: string, p: Promise<unknown>) => p.then(() => order.push(`${name} ok`), (e: Error & { code?: string }) => order.push(`${name} ${e.code}`));
    const all = [
      track('mallory 1', extractor.extract('html', nestedDivs(), 'http://127.0.0.1/1', null, 'mallory')),
      track('mallory 2', extractor.extract('html', nestedDivs(), 'http://127.0.0.1/2', null, 'mallory')),
      track('mallory 3', extractor.extract('html', nestedDivs(), 'http://127.0.0.1/3', null, 'mallory')),
      track('ann', extractor.extract('html', pageBytes('article.html'), 'http://127.0.0.1/article.html', null, 'ann')),
    ];
    await Promise.all(all);
    assert.equal(order, ['mallory 1 timeout', 'ann ok', 'mallory 2 timeout', 'mallory 3 timeout']);
  } finally {
    await extractor.close();
  }
});

test('a closed pool refuses pages', async () => {
  const extractor = contentExtractor({ threads: 1 });
  await extractor.close();
  assert.is((await failure(extractor.extract('html', pageBytes('article.html'), 'http://127.0.0.1/'))).code, 'not-configured');
});

test.run();
