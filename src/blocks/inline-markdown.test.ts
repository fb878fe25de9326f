import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inlineToMarkdown, isCitation, parseInline, type InlineContent, type InlineResult, type StyledText, type Styles } from './inline-markdown.ts';

const text = (t: string, styles: Styles = {}): StyledText => ({ type: 'text', text: t, styles });
const link = (href: string, ...content: StyledText[]): InlineContent => ({ type: 'link', href, content });

function ok(md: string): InlineContent[] {
  const r = parseInline(md);
  if (!r.ok) throw new Error(`expected ok for ${JSON.stringify(md)}: ${r.message}`);
  return r.content;
}
function refused(md: string): string {
  const r = parseInline(md);
  if (r.ok) throw new Error(`expected a refusal for ${JSON.stringify(md)}`);
  return r.message;
}

test('empty and whitespace-only markdown is empty content', () => {
  assert.equal(parseInline(''), { ok: true, content: [], citations: [] });
  assert.equal(parseInline('  \n \n'), { ok: true, content: [], citations: [] });
});

test('plain text is one unstyled run, trimmed', () => {
  assert.equal(ok('Hello world'), [text('Hello world')]);
  assert.equal(ok('  Hello world \n'), [text('Hello world')]);
  assert.equal(ok('\n\nIn 2024 prices rose 5%.'), [text('In 2024 prices rose 5%.')]);
});

test('styles use BlockNote names, only keys that are set, {} when none', () => {
  assert.equal(ok('a **b** *c* ~~d~~ `e` ***f***'), [
    text('a '),
    text('b', { bold: true }),
    text(' '),
    text('c', { italic: true }),
    text(' '),
    text('d', { strike: true }),
    text(' '),
    text('e', { code: true }),
    text(' '),
    text('f', { bold: true, italic: true }),
  ]);
  assert.equal(ok('__b__ _i_'), [text('b', { bold: true }), text(' '), text('i', { italic: true })]);
  assert.equal(ok('**`x`**'), [text('x', { bold: true, code: true })]);
  assert.equal(Object.keys((ok('***x~~y~~***')[1] as StyledText).styles), ['bold', 'italic', 'strike']);
});

test('adjacent runs with identical styles are merged', () => {
  assert.equal(ok('a\\*b &amp; c'), [text('a*b & c')]);
  assert.equal(ok('**a\\*b&#42;**'), [text('a*b*', { bold: true })]);
  assert.equal(ok('*a*_b_'), [text('ab', { italic: true })]);
});

test('soft and hard line breaks become \\n inside text', () => {
  assert.equal(ok('one\ntwo  \nthree\\\nfour'), [text('one\ntwo\nthree\nfour')]);
  assert.equal(ok('**a\nb**'), [text('a\nb', { bold: true })]);
});

test('links, autolinks and images', () => {
  assert.equal(ok('see [the **paper**](https://doi.org/10.1/x) now'), [
    text('see '),
    link('https://doi.org/10.1/x', text('the '), text('paper', { bold: true })),
    text(' now'),
  ]);
  assert.equal(ok('<https://example.com/a>'), [link('https://example.com/a', text('https://example.com/a'))]);
  assert.equal(ok('![a chart](https://img.example/c.png)'), [link('https://img.example/c.png', text('a chart'))]);
  assert.equal(ok('![](https://img.example/c.png)'), [link('https://img.example/c.png', text('https://img.example/c.png'))]);
  assert.equal(ok('**[x](/a)**'), [link('/a', text('x', { bold: true }))]);
  assert.equal(ok('[x](<a b>)'), [link('a b', text('x'))], 'targets are kept as written, not percent-encoded');
  assert.equal(ok('[é](https://de.wikipedia.org/wiki/Müller)'), [link('https://de.wikipedia.org/wiki/Müller', text('é'))]);
});

test('bare URLs, raw HTML and unsafe link targets stay text', () => {
  assert.equal(ok('go to https://example.com now'), [text('go to https://example.com now')]);
  assert.equal(ok('a <b>bold</b>'), [text('a <b>bold</b>')]);
  assert.equal(ok('[x](javascript:alert(1))'), [text('[x](javascript:alert(1))')]);
  assert.equal(ok('[x](java&#9;script:alert(1))'), [text('[x](java\tscript:alert(1))')]);
  assert.equal(ok('"quotes" -- and ... (c)'), [text('"quotes" -- and ... (c)')], 'no typographer');
});

test('HTML entities are decoded', () => {
  assert.equal(ok('&copy; &#65; &#x42; &amp;amp; &nbsp;x'), [text('© A B &amp; \u00a0x')]);
});

test('citations: distinct exact https link targets in order of first appearance', () => {
  const r = parseInline(
    '[a](https://b.example/2) [b](http://a.example) [c](/rel) [d](https://a.example/1) <https://b.example/2> ' +
      '![img](https://img.example/i.png) https://bare.example [e](https:nohost) [f](<https://sp ace.example>)',
  ) as Extract<InlineResult, { ok: true }>;
  assert.ok(r.ok);
  assert.equal(r.citations, ['https://b.example/2', 'https://a.example/1', 'https://img.example/i.png']);
  assert.ok(isCitation('https://example.com'));
  assert.ok(isCitation('HTTPS://EXAMPLE.COM/a?b#c'));
  assert.not.ok(isCitation('http://example.com'));
  assert.not.ok(isCitation('https:/example.com'));
  assert.not.ok(isCitation(' https://example.com'));
  assert.not.ok(isCitation('https://'));
  assert.not.ok(isCitation('//example.com'));
});

test('the one-block check names what it found and what to do', () => {
  const cases: [string, RegExp][] = [
    ['# Title', /found a heading — set type to heading/],
    ['Title\n=====', /found a heading/],
    ['one\n\ntwo', /found a second paragraph \(a blank line starts a new block\)/],
    ['- item', /found a bullet list — send one bulletListItem/],
    ['* item', /found a bullet list/],
    ['1. item', /found a numbered list — send one numberedListItem/],
    ['```js\nx\n```', /found a fenced code block — send a codeBlock/],
    ['    indented', /found an indented code block/],
    ['> quoted', /found a block quote — set type to quote/],
    ['---', /found a thematic break/],
    ['***', /found a thematic break/],
    ['| a | b |\n| - | - |\n| 1 | 2 |', /found a table — send a table block with rows/],
    ['[ref]: https://example.com', /found a link reference definition/],
    ['text\n- item', /found a paragraph followed by a bullet list/],
    ['text\n# heading', /found a paragraph followed by a heading/],
  ];
  for (const [md, re] of cases) {
    const message = refused(md);
    assert.ok(message.startsWith('markdown must be exactly one block of inline content; found '), message);
    assert.match(message, re);
  }
  // Not block syntax: stays one paragraph.
  assert.equal(ok('a\n2. b'), [text('a\n2. b')]);
  assert.equal(ok('#hashtag and C#'), [text('#hashtag and C#')]);
  assert.equal(ok('1.5 million'), [text('1.5 million')]);
});

test('parseInline is fast enough to run on every edit', () => {
  const sentence = 'Prices rose **5%** in 2024, according to [the survey](https://example.org/survey/2024).';
  for (let i = 0; i < 2000; i++) parseInline(sentence);
  const n = 20000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) parseInline(sentence);
  const us = ((performance.now() - t0) * 1000) / n;
  assert.ok(us < 50, `parseInline took ${us.toFixed(2)} µs`);
});

// ---- inlineToMarkdown ----

test('inlineToMarkdown writes readable Markdown for ordinary content', () => {
  assert.is(inlineToMarkdown(ok('a **b** *c* ~~d~~ `e` [f](https://x.org/a_(b))')), 'a **b** *c* ~~d~~ `e` [f](https://x.org/a_\\(b\\))');
  assert.is(inlineToMarkdown([text('bold italic', { bold: true, italic: true })]), '**_bold italic_**');
  assert.is(inlineToMarkdown([text('a\nb')]), 'a\nb');
  assert.is(inlineToMarkdown([text('# not a heading')]), '\\# not a heading');
  assert.is(inlineToMarkdown([text('1. not a list')]), '1\\. not a list');
  assert.is(inlineToMarkdown([text('x*y*z [a] <b> |c| \\')]), 'x\\*y\\*z \\[a\\] \\<b> \\|c\\| \\\\');
  assert.is(inlineToMarkdown([text(' padded ')]), '&#32;padded&#32;');
  assert.is(inlineToMarkdown([text('tick ` inside', { code: true })]), '``tick ` inside``');
  assert.is(inlineToMarkdown([link('a b', text('x'))]), '[x](<a b>)');
  assert.is(inlineToMarkdown([]), '');
});

test('inlineToMarkdown repairs delimiters the flanking rules would ignore', () => {
  const cases: InlineContent[][] = [
    [text('x'), text('y.', { bold: true }), text('z')],
    [text('a'), text('b', { italic: true }), text('c')],
    [text(' spaced ', { bold: true })],
    [text('a'), text('b', { italic: true }), text('c', { bold: true })],
    [text('end\n', { strike: true })],
    [text('!'), link('https://x.org', text('not an image'))],
    [text('(', { bold: true }), link('/a', text('x')), text(')', { bold: true })],
  ];
  for (const c of cases) assert.equal(ok(inlineToMarkdown(c)), c, inlineToMarkdown(c));
});

// A generator of inline content over an alphabet rich in Markdown syntax.
const alphabet = fc.constantFrom(
  ...'ab Z09 \n\t*_~`[]()!<>&#;|\\-+=:.,"\'é中。“”€\u00a0'.split(''),
  '😀',
  'word',
  '&amp;',
  '1.',
  '# ',
  '- ',
  '![',
  '](',
  '**',
);
const anyText = fc.array(alphabet, { minLength: 1, maxLength: 8 }).map((a) => a.join(''));
const anyStyles = fc
  .record({ bold: fc.boolean(), italic: fc.boolean(), strike: fc.boolean(), code: fc.boolean() })
  .map(({ bold, italic, strike, code }) => {
    const s: Styles = {};
    if (bold) s.bold = true;
    if (italic) s.italic = true;
    if (strike) s.strike = true;
    if (code) s.code = true;
    return s;
  });
// Code spans cannot hold line breaks (CommonMark reads them as spaces).
const anyRun = fc.tuple(anyText, anyStyles).map(([t, s]) => text(s.code ? t.replace(/\n/g, ' ') : t, s));
const anyHref = fc.oneof(fc.constantFrom('https://example.com/a?b=1&c=2', '/rel', 'http://x', 'https://x.org/a_(b)', 'a b', 'https://x/&amp;', ''), fc.webUrl());
// A code span with "]" as the very first thing of the text could read as a reference definition.
const linkRun = anyRun.filter((t) => !(t.styles.code && t.text.includes(']')));
const anyLink = fc.tuple(anyHref, fc.array(linkRun, { maxLength: 3 })).map(([h, c]) => link(h, ...c));
const anyContent = fc.array(fc.oneof({ weight: 3, arbitrary: anyRun }, { weight: 1, arbitrary: anyLink }), { maxLength: 7 });

function mergeRuns(runs: readonly StyledText[]): StyledText[] {
  const out: StyledText[] = [];
  for (const r of runs) {
    if (r.text === '') continue;
    const last = out[out.length - 1];
    if (last && JSON.stringify(last.styles) === JSON.stringify(r.styles)) last.text += r.text;
    else out.push({ type: 'text', text: r.text, styles: { ...r.styles } });
  }
  return out;
}
function merged(content: readonly InlineContent[]): InlineContent[] {
  const out: InlineContent[] = [];
  let run: StyledText[] = [];
  for (const item of content) {
    if (item.type === 'text') run.push(item);
    else {
      out.push(...mergeRuns(run));
      run = [];
      out.push({ type: 'link', href: item.href, content: mergeRuns(item.content) });
    }
  }
  out.push(...mergeRuns(run));
  return out;
}

test('property: parseInline(inlineToMarkdown(c)) equals c after merging', () => {
  fc.assert(
    fc.property(anyContent, (c) => {
      const md = inlineToMarkdown(c);
      const r = parseInline(md);
      assert.ok(r.ok, md);
      assert.equal(r.ok && r.content, merged(c), md);
    }),
    { numRuns: 3000 },
  );
});

test('property: the one-line shortcut reads text as the block parser does', () => {
  // "a\n" + x goes through the block parser; x alone (one line) may not.
  const oneLine = anyContent.map((c) => inlineToMarkdown(c)).filter((md) => md !== '' && !md.includes('\n'));
  fc.assert(
    fc.property(oneLine, (md) => {
      const whole = ok(`a\n${md}`);
      assert.equal(whole, merged([text('a\n'), ...ok(md)]), md);
    }),
    { numRuns: 2000 },
  );
});

test('property: parsing is idempotent through the writer', () => {
  fc.assert(
    fc.property(anyContent, (c) => {
      const once = ok(inlineToMarkdown(c));
      assert.equal(ok(inlineToMarkdown(once)), once);
    }),
    { numRuns: 1000 },
  );
});

test.run();
