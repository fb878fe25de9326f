import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { alice, backgroundErrors, pageServerFor, itemOf, key, libraryEngine, run, saveAndCapture } from '../../fixtures/pages/library-kit.ts';
import { contentExtractor, nodeFetcher } from '../../adapters/capture/index.ts';
import { createLibraryService } from './service.ts';
import type { Fetcher } from './capture-port.ts';
import type { LibraryItem } from './result-schemas.ts';

const server = pageServerFor(test);

const failedWith = (item: LibraryItem) => [item.capture?.state, item.capture?.reason?.code];

test('pages that need a sign-in are kept with capture failed and a reason', async () => {
  const engine = libraryEngine(server());
  for (const path of ['/status/401', '/status/403', '/login.html']) {
    const item = await saveAndCapture(engine, alice, `${server().origin}${path}`);
    assert.equal(failedWith(item), ['failed', 'sign-in-required'], path);
    assert.ok(item.capture!.reason!.message.length > 10);
    const page = await run(engine, alice, { type: 'reader-page', sourceId: item.itemId });
    assert.is(page.type === 'reader-page' && page.page.capture, null);
  }
  await engine.close();
});

test('errors, other media types and forbidden redirects fail the capture but keep the item', async () => {
  const engine = libraryEngine(server());
  const cases: [string, string][] = [
    ['/status/404', 'http-error'],
    ['/status/500', 'http-error'],
    ['/data.json', 'unsupported-type'],
    ['/field-guide.epub', 'unsupported-type'],
    [`/redirect?to=${encodeURIComponent(`http://[::1]:${server().port}/article.html`)}`, 'forbidden-address'],
    [`/redirect?to=${encodeURIComponent(`http://127.0.0.2:${server().port}/article.html`)}`, 'forbidden-address'],
    ['/loop', 'too-many-redirects'],
  ];
  for (const [path, code] of cases) {
    const item = await saveAndCapture(engine, alice, `${server().origin}${path}`);
    assert.equal(failedWith(item), ['failed', code], path);
  }
  const listed = await run(engine, alice, { type: 'list', limit: 50 });
  assert.is(listed.type === 'list' && listed.items.length, cases.length);
  await engine.close();
});

test('without captureAllowPrivate a loopback page is never fetched; with it, it is', async () => {
  const strict = libraryEngine(server(), { fetcher: nodeFetcher() });
  const before = server().hits.get('/article-77.html') ?? 0;
  const refused = await saveAndCapture(strict, alice, `${server().origin}/article-77.html`);
  assert.equal(failedWith(refused), ['failed', 'forbidden-address']);
  assert.is(server().hits.get('/article-77.html') ?? 0, before);
  await strict.close();
  const open = libraryEngine(server(), { fetcher: nodeFetcher(), captureAllowPrivate: true });
  const captured = await saveAndCapture(open, alice, `${server().origin}/article-77.html`);
  assert.is(captured.capture?.state, 'ready');
  await open.close();
});

test('an oversized page is cut and captured partial; a slow page is cut off at the deadline', async () => {
  const engine = libraryEngine(server(), { library: { maxPageBytes: 32 * 1024, fetchTimeoutMs: 300 } });
  const big = await saveAndCapture(engine, alice, `${server().origin}/big.html?kb=1024`);
  assert.equal(failedWith(big), ['partial', 'truncated']);
  const page = await run(engine, alice, { type: 'reader-page', sourceId: big.itemId });
  assert.ok(page.type === 'reader-page' && page.page.capture!.blocks.length > 10);
  const slow = await saveAndCapture(engine, alice, `${server().origin}/slow.html?ms=5000`);
  assert.equal(failedWith(slow), ['failed', 'timeout']);
  await engine.close();
});

test('readable text beyond maxTextLength is cut and the capture is partial', async () => {
  const engine = libraryEngine(server(), { library: { maxTextLength: 300 } });
  const item = await saveAndCapture(engine, alice, `${server().origin}/article.html`);
  assert.equal(failedWith(item), ['partial', 'truncated']);
  const page = await run(engine, alice, { type: 'reader-page', sourceId: item.itemId });
  const total = page.type === 'reader-page' ? page.page.capture!.blocks.reduce((n, b) => n + b.text.length, 0) : -1;
  assert.is(total, 300);
  await engine.close();
});

test('without a fetcher, captures fail as not configured', async () => {
  const engine = libraryEngine(server(), { fetcher: null });
  const item = await saveAndCapture(engine, alice, `${server().origin}/article.html`);
  assert.equal(failedWith(item), ['failed', 'not-configured']);
  await engine.close();
});

/** A fetcher that holds every fetch until its signal aborts: captures stay pending. */
const stalled = (): Fetcher & { started: number } => {
  const f = {
    started: 0,
    fetch(_url: string, o: { signal: AbortSignal }) {
      f.started++;
      return new Promise<never>((_, reject) => o.signal.addEventListener('abort', () => reject(o.signal.reason)));
    },
  };
  return f;
};

test('saved items survive a restart and their pending captures resume on start (lowdb)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-library-'));
  try {
    const hold = stalled();
    const first = libraryEngine(server(), { fetcher: hold, library: { fetchTimeoutMs: 60_000 } }, await lowdbStorage({ dir }));
    const saved: string[] = [];
    for (const path of ['/article.html', '/tide-pools.pdf', '/saved-page.html']) {
      saved.push((await itemOf(first, alice, { type: 'save-link', url: `${server().origin}${path}`, idempotencyKey: key() })).itemId);
    }
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(hold.started >= 1);
    await first.close();

    const second = libraryEngine(server(), {}, await lowdbStorage({ dir }));
    await second.library.idle();
    for (const itemId of saved) {
      const item = await itemOf(second, alice, { type: 'get', itemId });
      assert.is(item.capture?.state, 'ready', itemId);
    }
    await second.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('two library services on one store (two processes) capture a pending link once', async () => {
  const engine = libraryEngine(server(), { library: { autoStart: false } });
  const other = createLibraryService(engine.deps, { fetcher: nodeFetcher({ testAllowOrigins: [server().origin] }), extractor: contentExtractor(), autoStart: false, onError: (e) => backgroundErrors.push(e) });
  const saved = await itemOf(engine, alice, { type: 'save-link', url: `${server().origin}/article-31.html`, idempotencyKey: key() });
  engine.library.start();
  other.start();
  await Promise.all([engine.library.idle(), other.idle()]);
  const item = await itemOf(engine, alice, { type: 'get', itemId: saved.itemId });
  assert.equal([item.capture?.state, item.revision], ['ready', 2]);
  assert.equal((await engine.deps.storage.listPage('library.capture-jobs', 'pending', 10)).records, []);
  await other.close();
  await engine.close();
});

test('a full queue never blocks saving; overflowing jobs wait in storage and are all captured', async () => {
  const engine = libraryEngine(server(), { library: { concurrency: 1, queueSize: 2 } });
  const started = Date.now();
  const saved = [];
  for (let i = 0; i < 12; i++) saved.push(await itemOf(engine, alice, { type: 'save-link', url: `${server().origin}/article-${i}.html`, idempotencyKey: key() }));
  assert.ok(saved.every((s) => s.capture?.state === 'pending'));
  assert.ok(Date.now() - started < 2000);
  await engine.library.idle();
  for (const s of saved) assert.is((await itemOf(engine, alice, { type: 'get', itemId: s.itemId })).capture?.state, 'ready');
  await engine.close();
});

test.run();
