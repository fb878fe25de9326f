import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pageBytes } from '../../fixtures/pages/server.ts';
import { captureFailure } from './capture-failure-kit.ts';
import { contentExtractor } from './index.ts';

const encode = (s: string) => new TextEncoder().encode(s);
/** 1,000 nested divs in 11 KB: Readability over linkedom needs seconds of CPU for it. */
const nestedDivs = (n = 1000) => encode(`<!doctype html><html><body>${'<div>'.repeat(n)}deep${'</div>'.repeat(n)}</body></html>`);

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

test('a closed pool refuses pages', async () => {
  const extractor = contentExtractor({ threads: 1 });
  await extractor.close();
  assert.is((await failure(extractor.extract('html', pageBytes('article.html'), 'http://127.0.0.1/'))).code, 'not-configured');
});

test.run();
