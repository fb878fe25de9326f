/**
 * Pages an outside probe could not serve: a loopback server (127.0.0.1) that trickles bytes, lies
 * about its content type, redirects in loops, or answers in UTF-16. Fetched with the capture fetcher
 * (private addresses allowed, as with `--capture-allow-private`), each ends in a bounded time with a
 * sensible capture state.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../memory/index.ts';
import { pageBytes } from '../../fixtures/pages/server.ts';
import { captureFailure } from './capture-failure-kit.ts';
import { createEngine, type Engine } from '../../src/engine.ts';
import type { Actor } from '../../src/actor.ts';
import type { LibraryItem } from '../../src/library/records.ts';
import { contentExtractor, nodeFetcher } from './index.ts';

const actor: Actor = { accountId: 'probe', credentialRef: 'scred_0000000000000000000000f1', documentRef: null };
const ARTICLE = '<!doctype html><html><head><title>Tides</title></head><body><article><p>The tide comes in twice a day, and the pools fill with cold, clear water.</p></article></body></html>';
const utf16 = (text: string, bigEndian: boolean) => {
  const out = new Uint8Array(2 + text.length * 2);
  out.set(bigEndian ? [0xfe, 0xff] : [0xff, 0xfe]);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[2 + i * 2] = bigEndian ? c >> 8 : c & 0xff;
    out[3 + i * 2] = bigEndian ? c & 0xff : c >> 8;
  }
  return out;
};

const timers = new Set<NodeJS.Timeout>();
const server = createServer((req, res) => {
  const send = (status: number, headers: Record<string, string>, body: string | Uint8Array) => {
    res.writeHead(status, headers);
    res.end(body);
  };
  const trickle = (r: ServerResponse, everyMs: number) => {
    const t = setInterval(() => r.write('<p>.</p>'), everyMs);
    timers.add(t);
    r.on('close', () => clearInterval(t));
  };
  switch (req.url) {
    case '/trickle-body':
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<!doctype html><html><body>');
      return trickle(res, 50);
    case '/no-headers':
      // Accepts the request and never answers.
      return;
    case '/pdf-as-html':
      return send(200, { 'content-type': 'text/html; charset=utf-8' }, pageBytes('tide-pools.pdf'));
    case '/html-as-pdf':
      return send(200, { 'content-type': 'application/pdf' }, ARTICLE);
    case '/png-as-html':
      return send(200, { 'content-type': 'text/html' }, Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]));
    case '/text-as-pdf':
      return send(200, { 'content-type': 'application/pdf' }, 'just words, not a PDF');
    case '/ping':
      return send(302, { location: '/pong' }, '');
    case '/pong':
      return send(302, { location: '/ping' }, '');
    case '/utf16le':
      return send(200, { 'content-type': 'text/html; charset=utf-16le' }, utf16(ARTICLE, false));
    case '/utf16be-unlabelled':
      return send(200, { 'content-type': 'text/html' }, utf16(ARTICLE, true));
    case '/utf16-mislabelled':
      // The byte order mark wins over a wrong label.
      return send(200, { 'content-type': 'text/html; charset=iso-8859-1' }, utf16(ARTICLE, false));
    default:
      return send(404, { 'content-type': 'text/html' }, 'no');
  }
});
let origin = '';
let engine: Engine;

test.before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  engine = createEngine({
    storage: memoryStorage(),
    fetcher: nodeFetcher(),
    extractor: contentExtractor(),
    captureAllowPrivate: true,
    library: { fetchTimeoutMs: 800, maxRedirects: 5, onError: (e) => console.error(e) },
  });
});
test.after(async () => {
  await engine.close();
  for (const t of timers) clearInterval(t);
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function capture(path: string): Promise<{ item: LibraryItem; ms: number }> {
  const started = performance.now();
  const saved = await engine.library.execute(actor, { type: 'save-link', url: `${origin}${path}`, idempotencyKey: `probe-${path.replace(/\W/g, '')}-0000000000` });
  if (saved.type !== 'save-link') throw new Error('not saved');
  await engine.library.idle();
  const got = await engine.library.execute(actor, { type: 'get', itemId: saved.item.itemId });
  if (got.type !== 'get') throw new Error('not read');
  return { item: got.item, ms: performance.now() - started };
}
const outcome = (item: LibraryItem) => [item.capture?.state, item.capture?.reason?.code ?? null];

test('a page that trickles its body forever, or never sends its headers, ends failed with timeout at the fetch deadline', async () => {
  for (const path of ['/trickle-body', '/no-headers']) {
    const { item, ms } = await capture(path);
    assert.equal(outcome(item), ['failed', 'timeout'], path);
    assert.match(item.capture!.reason!.message, /800 ms/);
    assert.ok(ms < 5000, `${path} took ${ms.toFixed(0)} ms`);
  }
});

test('a page that lies about its type is read as what its bytes are, or refused naming both', async () => {
  const pdf = await capture('/pdf-as-html');
  assert.equal([pdf.item.capture?.state, pdf.item.capture?.format], ['ready', 'pdf']);
  const html = await capture('/html-as-pdf');
  assert.equal([html.item.capture?.state, html.item.capture?.format, html.item.title], ['ready', 'html', 'Tides']);
  for (const path of ['/png-as-html', '/text-as-pdf']) {
    const { item } = await capture(path);
    assert.equal(outcome(item), ['failed', 'unsupported-type'], path);
    assert.match(item.capture!.reason!.message, /says it is .* but its bytes are/, path);
  }
});

test('a redirect loop between two pages ends failed with too-many-redirects', async () => {
  const { item } = await capture('/ping');
  assert.equal(outcome(item), ['failed', 'too-many-redirects']);
  const loop = nodeFetcher().fetch(`${origin}/ping`, { signal: new AbortController().signal, allowPrivate: true, maxBytes: 1024, timeoutMs: 2000, maxRedirects: 3 });
  assert.is((await captureFailure(loop)).code, 'too-many-redirects');
});

test('UTF-16 pages are decoded by their byte order mark, labelled, unlabelled or mislabelled', async () => {
  for (const path of ['/utf16le', '/utf16be-unlabelled', '/utf16-mislabelled']) {
    const { item } = await capture(path);
    assert.equal([item.capture?.state, item.title], ['ready', 'Tides'], path);
    const page = await engine.library.execute(actor, { type: 'reader-page', sourceId: item.itemId });
    assert.match(page.type === 'reader-page' ? page.page.capture!.blocks[0]!.text : '', /^The tide comes in twice a day/, path);
  }
});

test.run();
