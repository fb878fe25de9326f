import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pageBytes } from '../../fixtures/pages/server.ts';
import { contentExtractor, decodeHtml, detectContent, extractHtml, extractPdf } from './index.ts';

const html = (name: string) => new TextDecoder().decode(pageBytes(name));

test('an article page yields its paragraphs in reading order, without navigation or asides', () => {
  const out = extractHtml(html('article.html'), 'http://127.0.0.1/article.html');
  assert.is(out.loginWall, false);
  assert.is(out.byline, 'By Ada Brook');
  assert.is(out.paragraphs.length, 5);
  assert.ok(out.paragraphs[0]!.startsWith('A river that runs across a flat plain'));
  assert.ok(out.paragraphs[3]!.startsWith('“A meander is a river remembering'));
  assert.not.ok(out.paragraphs.join(' ').includes('Subscribe'));
});

test('a sign-in form page is a login wall; an article with a small sign-in box is not', () => {
  assert.is(extractHtml(html('login.html'), 'http://127.0.0.1/').loginWall, true);
  const withBox = html('article.html').replace('<aside>', '<aside><form><input type="text" name="u"><input type="password" name="p"><button>Sign in</button></form>');
  const out = extractHtml(withBox, 'http://127.0.0.1/');
  assert.is(out.loginWall, false);
  assert.is(out.paragraphs.length, 5);
});

test('HTML bytes are decoded by the declared charset, then the meta charset, then UTF-8', () => {
  const latin1 = Uint8Array.from([...'<html><head><meta charset="windows-1252"></head><body><p>caf', 0xe9, ...'</p></body></html>'].map((c) => (typeof c === 'number' ? c : c.charCodeAt(0))));
  assert.match(decodeHtml(latin1, null), /café/);
  assert.match(decodeHtml(new TextEncoder().encode('<p>naïve</p>'), null), /naïve/);
  assert.match(decodeHtml(latin1, 'utf-8'), /caf\uFFFD/);
});

test('content is told by its bytes, not by its name', async () => {
  assert.equal(await detectContent(pageBytes('tide-pools.pdf')), { kind: 'pdf', mime: 'application/pdf' });
  assert.equal(await detectContent(pageBytes('field-guide.epub')), { kind: 'other', mime: 'application/epub+zip', ext: 'epub' });
  assert.equal(await detectContent(pageBytes('saved-page.html')), { kind: 'html', mime: 'text/html' });
  assert.equal(await detectContent(new TextEncoder().encode('\uFEFF  <!-- note -->\n<HTML><body>x</body></HTML>')), { kind: 'html', mime: 'text/html' });
  assert.equal(await detectContent(new TextEncoder().encode('plain words, <b>not</b> a page')), { kind: 'other', mime: 'text/plain', ext: null });
  const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  assert.is((await detectContent(png)).kind, 'other');
});

test('PDF text comes out through unpdf; a damaged PDF is an error, not empty text', async () => {
  const out = await extractPdf(pageBytes('tide-pools.pdf'));
  assert.equal(out.paragraphs, ['Field notes on tidal pools Anemones close when the tide goes out. Barnacles filter plankton at high water.']);
  const damaged = pageBytes('tide-pools.pdf').slice(0, 200);
  let failed = false;
  await contentExtractor().extract('pdf', damaged, 'upload:x').catch(() => (failed = true));
  assert.ok(failed);
});

test.run();
