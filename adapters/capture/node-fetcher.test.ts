import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startPageServer, type PageServer } from '../../fixtures/pages/server.ts';
import type { FetchOptions } from '../../src/library/capture-port.ts';
import { captureFailure } from './capture-failure-kit.ts';
import { nodeFetcher } from './node-fetcher.ts';

let pages: PageServer;
test.before(async () => {
  pages = await startPageServer();
});
test.after(async () => {
  await pages.close();
});

const opts = (over: Partial<FetchOptions> = {}): FetchOptions => ({
  signal: new AbortController().signal,
  allowPrivate: false,
  maxBytes: 1 << 20,
  timeoutMs: 5000,
  maxRedirects: 5,
  ...over,
});

const failure = captureFailure;

test('a name resolving to a private address is refused before any connect', async () => {
  let connections = 0;
  const server = createServer((_req, res) => res.end('<html><body><p>secret</p></body></html>'));
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const asked: string[] = [];
  const resolver = async (host: string) => {
    asked.push(host);
    return [{ address: '127.0.0.1', family: 4 }];
  };
  try {
    const refused = await failure(nodeFetcher({ resolver }).fetch(`http://intranet.example:${port}/`, opts()));
    assert.is(refused.code, 'forbidden-address');
    assert.match(refused.message, /127\.0\.0\.1, a loopback address/);
    assert.match(refused.message, /--capture-allow-private/, 'the refusal names the kw serve flag that lifts it');
    assert.equal(asked, ['intranet.example']);
    assert.is(connections, 0);
    // The same stub with captureAllowPrivate connects: the refusal above came from the policy alone.
    const page = await nodeFetcher({ resolver }).fetch(`http://intranet.example:${port}/`, opts({ allowPrivate: true }));
    assert.is(page.status, 200);
    assert.is(connections, 1);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('one forbidden address among several answers refuses the name', async () => {
  const resolver = async () => [{ address: '93.184.215.14', family: 4 }, { address: '169.254.169.254', family: 4 }];
  const refused = await failure(nodeFetcher({ resolver }).fetch('http://mixed.example/', opts()));
  assert.is(refused.code, 'forbidden-address');
  assert.match(refused.message, /metadata/);
});

test('IP-literal hosts are judged before the request', async () => {
  for (const url of [pages.origin + '/article.html', 'http://[::1]:9/', 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:127.0.0.1]:9/', 'http://0.0.0.0:9/', 'http://100.64.0.1/']) {
    assert.is((await failure(nodeFetcher().fetch(url, opts()))).code, 'forbidden-address', url);
  }
});

test('the test-only origin allowance covers exactly that origin: redirects to other loopback spellings are refused', async () => {
  const fetcher = nodeFetcher({ testAllowOrigins: [pages.origin] });
  const direct = await fetcher.fetch(`${pages.origin}/article.html`, opts());
  assert.is(direct.status, 200);
  assert.is(direct.contentType, 'text/html');
  assert.is(direct.charset, 'utf-8');
  for (const target of [`http://[::1]:${pages.port}/article.html`, `http://127.0.0.2:${pages.port}/article.html`, `http://localhost:${pages.port}/article.html`, `http://127.0.0.1:${pages.port + 1}/`]) {
    const before = pages.hits.get('/article.html') ?? 0;
    const refused = await failure(fetcher.fetch(`${pages.origin}/redirect?to=${encodeURIComponent(target)}`, opts()));
    assert.is(refused.code, 'forbidden-address', target);
    assert.is(pages.hits.get('/article.html') ?? 0, before, target);
  }
  // A name that resolves privately after a redirect is refused as well.
  const resolver = async () => [{ address: '10.0.0.7', family: 4 }];
  const viaName = await failure(nodeFetcher({ testAllowOrigins: [pages.origin], resolver }).fetch(`${pages.origin}/redirect?to=${encodeURIComponent('http://intranet.example/')}`, opts()));
  assert.is(viaName.code, 'forbidden-address');
});

test('redirects are followed and counted', async () => {
  const fetcher = nodeFetcher({ testAllowOrigins: [pages.origin] });
  const page = await fetcher.fetch(`${pages.origin}/redirect?to=/tide-pools.pdf`, opts());
  assert.is(page.url, `${pages.origin}/tide-pools.pdf`);
  assert.is(page.contentType, 'application/pdf');
  assert.is((await failure(fetcher.fetch(`${pages.origin}/loop`, opts({ maxRedirects: 3 })))).code, 'too-many-redirects');
});

test('an oversized body is cut at maxBytes and reported truncated', async () => {
  const page = await nodeFetcher({ testAllowOrigins: [pages.origin] }).fetch(`${pages.origin}/big.html?kb=512`, opts({ maxBytes: 64 * 1024 }));
  assert.is(page.bytes.length, 64 * 1024);
  assert.is(page.truncated, true);
});

test('gzip bodies are decoded and still bounded', async () => {
  const fetcher = nodeFetcher({ testAllowOrigins: [pages.origin] });
  const page = await fetcher.fetch(`${pages.origin}/gzip/article.html`, opts());
  assert.match(new TextDecoder().decode(page.bytes), /Why rivers meander/);
  const cut = await fetcher.fetch(`${pages.origin}/gzip/article.html`, opts({ maxBytes: 100 }));
  assert.is(cut.bytes.length, 100);
  assert.is(cut.truncated, true);
});

test('a slow page is cut off at the deadline', async () => {
  const started = Date.now();
  const refused = await failure(nodeFetcher({ testAllowOrigins: [pages.origin] }).fetch(`${pages.origin}/slow.html?ms=5000`, opts({ timeoutMs: 200 })));
  assert.is(refused.code, 'timeout');
  assert.ok(Date.now() - started < 2000);
});

test('non-http schemes and user info are refused', async () => {
  assert.is((await failure(nodeFetcher().fetch('file:///etc/passwd', opts()))).code, 'bad-url');
  assert.is((await failure(nodeFetcher().fetch('http://user:pw@example.org/', opts()))).code, 'bad-url');
});

test.run();
