import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { importBlockNote, type ImportedBlock } from './blocknote-import.ts';
import { renderBlockJson } from './blocknote.ts';
import { inlineToMarkdown, type InlineContent, type Styles } from './inline-markdown.ts';
import type { BlockRecord } from './model.ts';

type Fields = Omit<BlockRecord, 'p' | 'o'>;
interface Spec {
  id: string;
  rec: Fields;
  children?: Spec[];
}

function renderSpecs(specs: readonly Spec[]): string {
  return `[${specs.map((s) => renderBlockJson(s.id, { p: null, o: 'a0', ...s.rec }, s.children ? [renderSpecs(s.children).slice(1, -1)].filter(Boolean) : [])).join(',')}]`;
}
function renderImported(blocks: readonly ImportedBlock[]): unknown[] {
  const text = (b: ImportedBlock): string =>
    renderBlockJson(b.id ?? 'none', { p: null, o: 'a0', ...b.rec }, b.children.map(text));
  return blocks.map((b) => JSON.parse(text(b)));
}
function imported(blocks: unknown): ImportedBlock[] {
  const r = importBlockNote(blocks);
  if (!r.ok) throw new Error(JSON.stringify(r.fieldErrors));
  return r.blocks;
}
function roundTrips(blocks: unknown): void {
  assert.equal(renderImported(imported(blocks)), blocks);
}

const allEight: Spec[] = [
  { id: 'h', rec: { t: 'heading', md: 'Title *one*', lv: 2 } },
  {
    id: 'p',
    rec: { t: 'paragraph', md: 'See **this** [source](https://example.org/a) and `code`\nnext line' },
    children: [{ id: 'p.c', rec: { t: 'paragraph', md: 'nested' } }],
  },
  {
    id: 'b',
    rec: { t: 'bulletListItem', md: 'bullet ~~gone~~' },
    children: [
      { id: 'b.1', rec: { t: 'numberedListItem', md: 'one' } },
      { id: 'b.2', rec: { t: 'checkListItem', md: 'task', ck: true } },
    ],
  },
  { id: 'c', rec: { t: 'checkListItem', md: '', ck: false } },
  { id: 'q', rec: { t: 'quote', md: 'quoted' } },
  { id: 'k', rec: { t: 'codeBlock', code: 'x = 1\n', lang: 'python' } },
  { id: 'k2', rec: { t: 'codeBlock', code: '' } },
  { id: 't', rec: { t: 'table', rows: [['a', '**b**'], ['[c](https://c.example)', '']] } },
];

test('round trip: render(import(x)) equals x for all eight types', () => {
  const x = JSON.parse(renderSpecs(allEight));
  roundTrips(x);
});

test('import gives Markdown records with the editor ids and children', () => {
  const blocks = imported(JSON.parse(renderSpecs(allEight)));
  assert.equal(
    blocks.map((b) => [b.id, b.rec]),
    allEight.map((s) => [s.id, s.rec]),
  );
  assert.equal(blocks[2]!.children.map((c) => c.rec), [
    { t: 'numberedListItem', md: 'one' },
    { t: 'checkListItem', md: 'task', ck: true },
  ]);
});

test('what Markdown cannot carry is kept in extra, so the JSON round-trips exactly', () => {
  const x = [
    {
      id: 'p1',
      type: 'paragraph',
      props: { backgroundColor: 'yellow', textColor: 'red', textAlignment: 'center' },
      content: [
        { type: 'text', text: 'under', styles: { underline: true } },
        { type: 'text', text: ' colour', styles: { bold: true, textColor: 'blue' } },
      ],
      children: [],
    },
    {
      id: 'h1',
      type: 'heading',
      props: { backgroundColor: 'default', textColor: 'default', textAlignment: 'left', level: 5, isToggleable: true },
      content: [{ type: 'text', text: 'deep', styles: {} }],
      children: [],
    },
    {
      id: 'n1',
      type: 'numberedListItem',
      props: { backgroundColor: 'default', textColor: 'default', textAlignment: 'left', start: 3 },
      content: [],
      children: [],
    },
    {
      id: 't1',
      type: 'table',
      props: { textColor: 'default' },
      content: {
        type: 'tableContent',
        columnWidths: [120, null],
        rows: [
          {
            cells: [
              { type: 'tableCell', content: [{ type: 'text', text: 'a', styles: {} }], props: { colspan: 1, rowspan: 1, backgroundColor: 'red', textColor: 'default', textAlignment: 'left' } },
              { type: 'tableCell', content: [], props: { colspan: 1, rowspan: 1, backgroundColor: 'default', textColor: 'default', textAlignment: 'right' } },
            ],
          },
        ],
      },
      children: [],
    },
  ];
  roundTrips(x);
  const [p, h, n, t] = imported(x);
  assert.equal(p!.rec.md, 'under **colour**');
  assert.equal(p!.rec.extra!.props, { backgroundColor: 'yellow', textColor: 'red', textAlignment: 'center' });
  assert.equal(h!.rec.lv, 3);
  assert.equal(h!.rec.extra, { props: { level: 5, isToggleable: true } });
  assert.equal(n!.rec.extra, { props: { start: 3 } });
  assert.equal(t!.rec.rows, [['a', '']]);
  assert.ok(t!.rec.extra!.content);
});

test('blocks outside the grammar are kept verbatim in raw, children imported', () => {
  const x = [
    { id: 'i', type: 'image', props: { backgroundColor: 'default', textAlignment: 'left', name: '', url: 'https://x/i.png', caption: '', showPreview: true }, children: [] },
    { id: 'd', type: 'divider', props: {}, children: [] },
    {
      id: 'tg',
      type: 'toggleListItem',
      props: { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' },
      content: [{ type: 'text', text: 'toggle', styles: {} }],
      children: [{ id: 'in', type: 'paragraph', props: { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' }, content: [], children: [] }],
    },
  ];
  roundTrips(x);
  const [i, d, tg] = imported(x);
  assert.equal(i!.rec, { t: 'image', raw: { type: 'image', props: x[0]!.props } });
  assert.equal(d!.rec, { t: 'divider', raw: { type: 'divider', props: {} } });
  assert.equal(tg!.children[0]!.rec, { t: 'paragraph', md: '' });
});

test('an editor table without a header row, or with widths, keeps its content', () => {
  const cell = (t: string) => ({ type: 'tableCell', content: [{ type: 'text', text: t, styles: {} }], props: { colspan: 1, rowspan: 1, backgroundColor: 'default', textColor: 'default', textAlignment: 'left' } });
  const x = [{ id: 't', type: 'table', props: { textColor: 'default' }, content: { type: 'tableContent', columnWidths: [null, null], rows: [{ cells: [cell('a'), cell('b')] }] }, children: [] }];
  roundTrips(x);
  const [t] = imported(x);
  assert.equal(t!.rec.rows, [['a', 'b']]);
});

test('malformed input gives field errors with dot-separated paths', () => {
  const bad = importBlockNote([
    { type: 'paragraph', content: 'text' },
    { id: 3, type: 'heading' },
    { type: 'paragraph', children: [{ props: [] }] },
    'nope',
    { type: 'checkListItem', props: { checked: 'yes' } },
    { type: 'table', content: { rows: [] } },
    { type: 'paragraph', content: [{ type: 'link', href: 'x' }, { type: 'text', text: 1 }] },
  ]);
  assert.ok(!bad.ok);
  assert.equal(
    !bad.ok && bad.fieldErrors.map((e) => e.field),
    [
      'blocks.0.content',
      'blocks.1.id',
      'blocks.2.children.0.type',
      'blocks.2.children.0.props',
      'blocks.3',
      'blocks.4.props.checked',
      'blocks.5.content',
      'blocks.6.content.0',
      'blocks.6.content.1',
    ],
  );
  assert.equal(importBlockNote({ blocks: [] }), { ok: false, fieldErrors: [{ field: 'blocks', message: 'must be an array of BlockNote blocks' }] });
  assert.equal(importBlockNote(null, 'document.blocks'), { ok: false, fieldErrors: [{ field: 'document.blocks', message: 'must be an array of BlockNote blocks' }] });
});

test('a document as a BlockNote 0.55 editor serialises it imports without extras', () => {
  // Shapes from @blocknote/core 0.55 (nodeToBlock + default schema), as JSON.stringify(editor.document) gives them.
  const d = { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' };
  const t = (text: string, styles: Styles = {}) => ({ type: 'text', text, styles });
  const cell = (text: string) => ({ type: 'tableCell', content: [t(text)], props: { colspan: 1, rowspan: 1, backgroundColor: 'default', textColor: 'default', textAlignment: 'left' } });
  const x = [
    { id: '1', type: 'heading', props: { ...d, level: 1, isToggleable: false }, content: [t('Main Title')], children: [] },
    { id: '2', type: 'paragraph', props: d, content: [t('An intro with '), t('bold', { bold: true }), t(' and '), t('italic', { italic: true }), t(' text.')], children: [] },
    { id: '5', type: 'bulletListItem', props: d, content: [t('Second bullet point')], children: [{ id: '6', type: 'bulletListItem', props: d, content: [t('Nested point')], children: [] }] },
    { id: '7', type: 'quote', props: { backgroundColor: 'default', textColor: 'default' }, content: [t('A notable quote')], children: [] },
    { id: '9', type: 'codeBlock', props: { language: 'javascript' }, content: [t('function hello() {\n  return "world";\n}')], children: [] },
    { id: '10', type: 'divider', props: {}, children: [] },
    { id: '12', type: 'numberedListItem', props: d, content: [t('Step one')], children: [] },
    { id: '13', type: 'checkListItem', props: { ...d, checked: true }, content: [t('Done')], children: [] },
    {
      id: '15',
      type: 'table',
      props: { textColor: 'default' },
      content: { type: 'tableContent', columnWidths: [null, null], headerRows: 1, rows: [{ cells: [cell('Feature'), cell('Status')] }, { cells: [cell('Bold'), cell('Done')] }] },
      children: [],
    },
    { id: '16', type: 'image', props: { backgroundColor: 'default', textAlignment: 'left', name: 'Image', url: 'https://example.com/image.png', caption: '', showPreview: true }, children: [] },
    { id: '17', type: 'paragraph', props: d, content: [t('Final paragraph with '), { type: 'link', href: 'https://example.com', content: [t('a link')] }, t('.')], children: [] },
    { id: '18', type: 'paragraph', props: d, content: [], children: [] },
  ];
  roundTrips(x);
  const flat = (bs: ImportedBlock[]): ImportedBlock[] => bs.flatMap((b) => [b, ...flat(b.children)]);
  for (const b of flat(imported(x))) {
    if (b.rec.raw) continue;
    assert.is(b.rec.extra, undefined, `${b.id} needed extra: ${JSON.stringify(b.rec.extra)}`);
  }
  assert.equal(imported(x)[1]!.rec.md, 'An intro with **bold** and *italic* text.');
  assert.equal(imported(x)[8]!.rec.rows, [['Feature', 'Status'], ['Bold', 'Done']]);
});

test('readable Markdown for whitespace at the edge of emphasis; the exact content stays in extra', () => {
  const x = [{ id: 'p', type: 'paragraph', props: { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' }, content: [{ type: 'text', text: 'bold ', styles: { bold: true } }, { type: 'text', text: 'text', styles: {} }], children: [] }];
  roundTrips(x);
  const [p] = imported(x);
  assert.is(p!.rec.md, '**bold** text');
  assert.equal(p!.rec.extra, { content: x[0]!.content });
});

test('partial editor blocks (no props, content or children) import with defaults', () => {
  const [b] = imported([{ type: 'heading', content: [{ type: 'text', text: 'Hi', styles: { bold: true } }] }]);
  assert.equal(b, { rec: { t: 'heading', md: '**Hi**', lv: 1 }, children: [] });
});

// Random BlockNote-shaped blocks of the eight types, as renderBlockJson produces them.
const word = fc.constantFrom('alpha', 'b*c', '_x_', '[y]', 'z`', '#', '1.', 'é', ' ', '\\', 'a|b', '<t>');
const styles = fc.record({ bold: fc.boolean(), italic: fc.boolean(), strike: fc.boolean(), code: fc.boolean() }).map((s) => {
  const out: Styles = {};
  for (const k of ['bold', 'italic', 'strike', 'code'] as const) if (s[k]) out[k] = true;
  return out;
});
const run = fc.tuple(fc.array(word, { minLength: 1, maxLength: 3 }), styles).map(([w, s]): InlineContent => ({ type: 'text', text: w.join(''), styles: s }));
const inline = fc.array(
  fc.oneof(run, fc.tuple(fc.webUrl(), fc.array(run, { maxLength: 2 })).map(([href, c]): InlineContent => ({ type: 'link', href, content: c as never }))),
  { maxLength: 4 },
);
const md = inline.map((c) => inlineToMarkdown(c));
const fields: fc.Arbitrary<Fields> = fc.oneof(
  md.map((m) => ({ t: 'paragraph', md: m })),
  fc.tuple(md, fc.constantFrom(1 as const, 2 as const, 3 as const)).map(([m, lv]) => ({ t: 'heading', md: m, lv })),
  md.map((m) => ({ t: 'bulletListItem', md: m })),
  md.map((m) => ({ t: 'numberedListItem', md: m })),
  fc.tuple(md, fc.boolean()).map(([m, ck]) => ({ t: 'checkListItem', md: m, ck })),
  md.map((m) => ({ t: 'quote', md: m })),
  fc.tuple(fc.string(), fc.option(fc.constantFrom('js', 'python', 'a b'), { nil: undefined })).map(([code, lang]) => (lang ? { t: 'codeBlock', code, lang } : { t: 'codeBlock', code })),
  fc.array(fc.array(md, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }).map((rows) => ({ t: 'table', rows })),
);
const tree: fc.Arbitrary<Spec[]> = fc.letrec<{ list: Spec[] }>((tie) => ({
  list: fc.array(
    fc.tuple(fields, fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant([] as Spec[]), tie('list'))).map(([rec, children]) => ({ id: 'x', rec, children })),
    { maxLength: 3 },
  ),
})).list;

test('property: render(import(render(records))) equals render(records)', () => {
  let n = 0;
  const number = (specs: Spec[]): Spec[] => specs.map((s) => ({ ...s, id: `b${n++}`, children: number(s.children ?? []) }));
  fc.assert(
    fc.property(tree, (specs) => {
      const x = JSON.parse(renderSpecs(number(specs)));
      assert.equal(renderImported(imported(x)), x);
    }),
    { numRuns: 300 },
  );
});

test.run();
