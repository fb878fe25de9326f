import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { blockContent, renderBlockJson, renderOwnPrefix, renderOwnPrefixSized } from './blocknote.ts';
import type { BlockRecord } from './model.ts';

const rec = (fields: Omit<BlockRecord, 'p' | 'o'>): BlockRecord => ({ p: null, o: 'a0', ...fields });
const json = (id: string, r: Omit<BlockRecord, 'p' | 'o'>, children: string[] = []): string => renderBlockJson(id, rec(r), children);

const DEFAULTS = '"backgroundColor":"default","textColor":"default","textAlignment":"left"';
const LINK_CONTENT =
  '[{"type":"text","text":"See ","styles":{}},{"type":"text","text":"this","styles":{"bold":true}},{"type":"text","text":" ","styles":{}},' +
  '{"type":"link","href":"https://example.org/a","content":[{"type":"text","text":"source","styles":{"italic":true}}]}]';

test('paragraph: default props and inline content, exact JSON', () => {
  assert.is(
    json('b1', { t: 'paragraph', md: 'See **this** [*source*](https://example.org/a)' }),
    `{"id":"b1","type":"paragraph","props":{${DEFAULTS}},"content":${LINK_CONTENT},"children":[]}`,
  );
  assert.is(json('b1', { t: 'paragraph', md: '' }), `{"id":"b1","type":"paragraph","props":{${DEFAULTS}},"content":[],"children":[]}`);
});

test('heading: level and isToggleable', () => {
  assert.is(
    json('h', { t: 'heading', md: 'Title', lv: 2 }),
    `{"id":"h","type":"heading","props":{${DEFAULTS},"level":2,"isToggleable":false},"content":[{"type":"text","text":"Title","styles":{}}],"children":[]}`,
  );
  assert.is(JSON.parse(json('h', { t: 'heading', md: 'x' })).props.level, 1);
});

test('bulletListItem and numberedListItem: default props, no start', () => {
  assert.is(
    json('l', { t: 'bulletListItem', md: 'item' }),
    `{"id":"l","type":"bulletListItem","props":{${DEFAULTS}},"content":[{"type":"text","text":"item","styles":{}}],"children":[]}`,
  );
  assert.is(
    json('n', { t: 'numberedListItem', md: '`x`' }),
    `{"id":"n","type":"numberedListItem","props":{${DEFAULTS}},"content":[{"type":"text","text":"x","styles":{"code":true}}],"children":[]}`,
  );
});

test('checkListItem: checked', () => {
  assert.is(
    json('c', { t: 'checkListItem', md: 'done', ck: true }),
    `{"id":"c","type":"checkListItem","props":{${DEFAULTS},"checked":true},"content":[{"type":"text","text":"done","styles":{}}],"children":[]}`,
  );
  assert.is(JSON.parse(json('c', { t: 'checkListItem', md: 'x' })).props.checked, false);
});

test('quote: only colours', () => {
  assert.is(
    json('q', { t: 'quote', md: '~~no~~' }),
    '{"id":"q","type":"quote","props":{"backgroundColor":"default","textColor":"default"},"content":[{"type":"text","text":"no","styles":{"strike":true}}],"children":[]}',
  );
});

test('codeBlock: language (default "text") and the code as one unstyled text item', () => {
  assert.is(
    json('k', { t: 'codeBlock', code: 'const a = **1**;\nreturn a;', lang: 'ts' }),
    '{"id":"k","type":"codeBlock","props":{"language":"ts"},"content":[{"type":"text","text":"const a = **1**;\\nreturn a;","styles":{}}],"children":[]}',
  );
  assert.is(json('k', { t: 'codeBlock', code: '' }), '{"id":"k","type":"codeBlock","props":{"language":"text"},"content":[],"children":[]}');
});

test('table: tableContent with column widths, one header row and tableCell cells', () => {
  const cell = (content: string): string =>
    `{"type":"tableCell","content":${content},"props":{"colspan":1,"rowspan":1,"backgroundColor":"default","textColor":"default","textAlignment":"left"}}`;
  assert.is(
    json('t', { t: 'table', rows: [['Name', '**Score**'], ['a', '']] }),
    '{"id":"t","type":"table","props":{"textColor":"default"},"content":{"type":"tableContent","columnWidths":[null,null],"headerRows":1,"rows":[' +
      `{"cells":[${cell('[{"type":"text","text":"Name","styles":{}}]')},${cell('[{"type":"text","text":"Score","styles":{"bold":true}}]')}]},` +
      `{"cells":[${cell('[{"type":"text","text":"a","styles":{}}]')},${cell('[]')}]}` +
      ']},"children":[]}',
  );
});

test('children are appended inside "children":[ … ]}', () => {
  const child = json('c1', { t: 'paragraph', md: 'child' });
  const parent = json('p1', { t: 'bulletListItem', md: 'parent' }, [child, child]);
  const parsed = JSON.parse(parent);
  assert.equal(parsed.children.map((c: { id: string }) => c.id), ['c1', 'c1']);
  assert.ok(renderOwnPrefix('p1', rec({ t: 'bulletListItem', md: 'parent' })).endsWith('"children":['));
});

test('extra props override and extend; extra content replaces the Markdown content', () => {
  const out = JSON.parse(
    json('x', {
      t: 'heading',
      md: 'Hi',
      lv: 3,
      extra: { props: { textColor: 'red', level: 5, isToggleable: true }, content: [{ type: 'text', text: 'Hi', styles: { underline: true } }] },
    }),
  );
  assert.equal(out.props, { backgroundColor: 'default', textColor: 'red', textAlignment: 'left', level: 5, isToggleable: true });
  assert.equal(Object.keys(out.props), ['backgroundColor', 'textColor', 'textAlignment', 'level', 'isToggleable']);
  assert.equal(out.content, [{ type: 'text', text: 'Hi', styles: { underline: true } }]);
  assert.equal(JSON.parse(json('n', { t: 'numberedListItem', md: 'x', extra: { props: { start: 4 } } })).props.start, 4);
});

test('raw blocks are written back as imported: id, type, props, content (if any), children', () => {
  assert.is(
    json('img', { t: 'image', raw: { props: { url: 'https://x/i.png', caption: '' }, type: 'image' } }),
    '{"id":"img","type":"image","props":{"url":"https://x/i.png","caption":""},"children":[]}',
  );
  assert.is(
    json('tg', { t: 'toggleListItem', raw: { type: 'toggleListItem', props: {}, content: [{ type: 'text', text: 't', styles: {} }] } }, [json('c', { t: 'paragraph', md: 'in' })]),
    '{"id":"tg","type":"toggleListItem","props":{},"content":[{"type":"text","text":"t","styles":{}}],"children":[' +
      `{"id":"c","type":"paragraph","props":{${DEFAULTS}},"content":[{"type":"text","text":"in","styles":{}}],"children":[]}]}`,
  );
  assert.is(json('d', { t: 'divider', raw: { type: 'divider', props: {}, content: undefined } }), '{"id":"d","type":"divider","props":{},"children":[]}');
});

test('Markdown that cannot be stored is still rendered, as plain text', () => {
  assert.equal(JSON.parse(json('p', { t: 'paragraph', md: '# not stored' })).content, [{ type: 'text', text: '# not stored', styles: {} }]);
});

test('the written content is exactly JSON.stringify of blockContent', () => {
  const records: Omit<BlockRecord, 'p' | 'o'>[] = [
    { t: 'paragraph', md: 'a **b** *c* ~~d~~ `e` [f **g**](https://x.org/"q") \\ "quotes" \u2028 é' },
    { t: 'quote', md: '' },
    { t: 'codeBlock', code: 'x "y"\n\tz' },
    { t: 'table', rows: [['**a**', ''], ['[b](/c)']] },
  ];
  for (const r of records) {
    const full = json('i', r);
    assert.ok(full.includes(`"content":${JSON.stringify(blockContent(rec(r)))},"children"`), full);
  }
});

test('renderOwnPrefixSized: the prefix of the full JSON and its exact UTF-8 length, whatever needs escaping', () => {
  // Short and long (over 64 units) text with quotes, backslashes, controls, 2- and 3-byte characters,
  // surrogate pairs and lone surrogates (JSON.stringify escapes those), in text, code, links and ids.
  const pieces = ['a', '"', '\\', '\u0001', '\u001f', '\u007f', 'é', '\u0800', '\u2028', '😀', '\ud800', '\udfff', ' ', '*', '`x`'];
  let seed = 7;
  const pick = (): string => pieces[(seed = (seed * 1103515245 + 12345) % 2147483648) % pieces.length]!;
  const text = (n: number): string => Array.from({ length: n }, pick).join('');
  const records: Omit<BlockRecord, 'p' | 'o'>[] = [];
  for (const n of [1, 3, 20, 40, 70, 200]) {
    records.push({ t: 'paragraph', md: `x${text(n)}y **${text(n)}b** [l${text(n)}](https://x.org/${text(3).replace(/[\s<>()\\]/g, '')})` });
    records.push({ t: 'codeBlock', code: text(n) });
    records.push({ t: 'table', rows: [[text(n), 'a'], [`*${text(n)}*`]] });
    records.push({ t: 'heading', lv: 2, md: text(n), extra: { props: { note: text(n) } } });
    records.push({ t: 'quote', md: 'q', extra: { content: [{ type: 'text', text: text(n), styles: {} }] } });
  }
  records.push({ t: 'image', raw: { type: 'image', props: { caption: text(30) } } });
  for (const [i, r] of records.entries()) {
    const id = `b${i}${text(2)}`;
    const sized = renderOwnPrefixSized(id, rec(r));
    assert.is(sized.text, renderOwnPrefix(id, rec(r)));
    assert.ok(json(id, r).startsWith(sized.text));
    assert.is(sized.bytes, Buffer.byteLength(sized.text), sized.text);
    if (r.md !== undefined && r.extra === undefined) assert.ok(sized.text.includes(`"content":${JSON.stringify(blockContent(rec(r)))},"children"`), sized.text);
  }
});

test('rendered JSON has string ids and no undefined values', () => {
  const s = json('7', { t: 'table', rows: [['a']] });
  assert.is(JSON.parse(s).id, '7');
  assert.not.match(s, /undefined/);
  assert.is(JSON.stringify(JSON.parse(s)), s, 'already compact');
});

test('renderOwnPrefix is cheap', () => {
  const r = rec({ t: 'paragraph', md: 'Prices rose **5%** in 2024, according to [the survey](https://example.org/survey/2024).' });
  for (let i = 0; i < 2000; i++) renderOwnPrefix('blk_1', r);
  const n = 20000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) renderOwnPrefix('blk_1', r);
  const us = ((performance.now() - t0) * 1000) / n;
  assert.ok(us < 80, `renderOwnPrefix took ${us.toFixed(2)} µs`);
});

test.run();
