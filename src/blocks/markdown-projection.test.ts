import fc from 'fast-check';
import MarkdownIt from 'markdown-it';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inlineToMarkdown, parseInline, type InlineContent, type Styles } from './inline-markdown.ts';
import { projectMarkdown, type MarkdownLoss, type ProjectionEntry } from './markdown-projection.ts';
import type { BlockRecord } from './model.ts';

type Fields = Omit<BlockRecord, 'p' | 'o'>;
interface Spec {
  id?: string;
  rec: Fields;
  children?: Spec[];
}

function entries(specs: readonly Spec[]): ProjectionEntry[] {
  let n = 0;
  const out: ProjectionEntry[] = [];
  const walk = (list: readonly Spec[], depth: number, parentType: string | null): void =>
    list.forEach((s, indexInParent) => {
      out.push({ id: s.id ?? `b${n++}`, rec: { p: null, o: 'a0', ...s.rec }, depth, parentType, indexInParent });
      walk(s.children ?? [], depth + 1, s.rec.t);
    });
  walk(specs, 0, null);
  return out;
}
function project(specs: readonly Spec[]): { markdown: string; losses: MarkdownLoss[] } {
  const r = projectMarkdown(entries(specs));
  if ('outsideGrammar' in r) throw new Error(`outside grammar: ${r.outsideGrammar.join(',')}`);
  return r;
}
const p = (md: string, children?: Spec[]): Spec => (children ? { rec: { t: 'paragraph', md }, children } : { rec: { t: 'paragraph', md } });

test('each block type has its Markdown form', () => {
  const { markdown, losses } = project([
    { rec: { t: 'heading', md: 'Title', lv: 1 } },
    { rec: { t: 'heading', md: 'Sub *it*', lv: 3 } },
    p('A paragraph with [a source](https://example.org).\nSecond line.'),
    { rec: { t: 'bulletListItem', md: 'bullet' } },
    { rec: { t: 'checkListItem', md: 'open', ck: false } },
    { rec: { t: 'checkListItem', md: 'done', ck: true } },
    { rec: { t: 'numberedListItem', md: 'one' } },
    { rec: { t: 'numberedListItem', md: 'two' } },
    { rec: { t: 'quote', md: 'quoted\ntwice' } },
    { rec: { t: 'codeBlock', code: 'let a = 1;\nlet b = 2;', lang: 'js' } },
    { rec: { t: 'codeBlock', code: '' } },
    { rec: { t: 'table', rows: [['Name', 'Score'], ['a|b', '**1**']] } },
  ]);
  assert.is(
    markdown,
    [
      '# Title',
      '',
      '### Sub *it*',
      '',
      'A paragraph with [a source](https://example.org).\nSecond line.',
      '',
      '- bullet\n- [ ] open\n- [x] done',
      '',
      '1. one\n2. two',
      '',
      '> quoted\n> twice',
      '',
      '```js\nlet a = 1;\nlet b = 2;\n```',
      '',
      '```\n```',
      '',
      '| Name | Score |\n| --- | --- |\n| a\\|b | **1** |',
      '',
    ].join('\n'),
  );
  assert.equal(losses, []);
});

test('list items nest their children by indentation', () => {
  const { markdown, losses } = project([
    {
      rec: { t: 'bulletListItem', md: 'parent' },
      children: [
        { rec: { t: 'bulletListItem', md: 'child' }, children: [{ rec: { t: 'checkListItem', md: 'grandchild', ck: true } }] },
        p('a paragraph in the item'),
        { rec: { t: 'codeBlock', code: 'x\n\ny', lang: 'py' } },
      ],
    },
    {
      rec: { t: 'numberedListItem', md: 'first' },
      children: [{ rec: { t: 'numberedListItem', md: 'inner one' } }, { rec: { t: 'numberedListItem', md: 'inner two\nwrapped' } }],
    },
    { rec: { t: 'numberedListItem', md: 'second' } },
  ]);
  assert.is(
    markdown,
    '- parent\n  - child\n    - [x] grandchild\n\n  a paragraph in the item\n\n  ```py\n  x\n  \n  y\n  ```\n\n' +
      '1. first\n   1. inner one\n   2. inner two\n      wrapped\n2. second\n',
  );
  assert.equal(losses, []);
});

test('numbering restarts after a block that is not a numbered item', () => {
  const { markdown } = project([
    { rec: { t: 'numberedListItem', md: 'a' } },
    { rec: { t: 'numberedListItem', md: 'b' } },
    p('break'),
    { rec: { t: 'numberedListItem', md: 'c' } },
  ]);
  assert.is(markdown, '1. a\n2. b\n\nbreak\n\n1. c\n');
});

test('children of blocks Markdown cannot nest under follow their parent, one loss per parent', () => {
  const { markdown, losses } = project([
    { id: 'h', rec: { t: 'heading', md: 'Head', lv: 2 }, children: [p('under heading', [p('deeper')]), p('second child')] },
    { id: 'q', rec: { t: 'quote', md: 'q' }, children: [{ rec: { t: 'bulletListItem', md: 'x' } }] },
    { id: 'k', rec: { t: 'codeBlock', code: 'c' }, children: [p('after code')] },
    { id: 't', rec: { t: 'table', rows: [['a']] }, children: [p('after table')] },
  ]);
  assert.is(markdown, '## Head\n\nunder heading\n\ndeeper\n\nsecond child\n\n> q\n\n- x\n\n```\nc\n```\n\nafter code\n\n| a |\n| --- |\n\nafter table\n');
  assert.equal(losses, [
    { blockId: 'h', reason: 'children of a heading are flattened' },
    { blockId: 'b0', reason: 'children of a paragraph are flattened' },
    { blockId: 'q', reason: 'children of a quote are flattened' },
    { blockId: 'k', reason: 'children of a code block are flattened' },
    { blockId: 't', reason: 'children of a table are flattened' },
  ]);
});

test('extra props and styles are losses, one per kind per block', () => {
  const { markdown, losses } = project([
    {
      id: 'p',
      rec: {
        t: 'paragraph',
        md: 'under **x**',
        extra: {
          props: { textColor: 'red', backgroundColor: 'blue', textAlignment: 'center' },
          content: [
            { type: 'text', text: 'under', styles: { underline: true } },
            { type: 'text', text: ' ', styles: { underline: true } },
            { type: 'text', text: 'x', styles: { bold: true, textColor: 'red', backgroundColor: 'yellow' } },
          ],
        },
      },
    },
    { id: 'h', rec: { t: 'heading', md: 'Deep', lv: 3, extra: { props: { level: 5, isToggleable: true } } } },
    { id: 'n', rec: { t: 'numberedListItem', md: 'from three', extra: { props: { start: 3 } } } },
    { id: 'n2', rec: { t: 'numberedListItem', md: 'restart', extra: { props: { start: 1 } } } },
    {
      id: 't',
      rec: {
        t: 'table',
        rows: [['a', 'b']],
        extra: {
          content: {
            type: 'tableContent',
            columnWidths: [100, null],
            rows: [
              {
                cells: [
                  { type: 'tableCell', content: [{ type: 'text', text: 'a', styles: { underline: true } }], props: { colspan: 2, rowspan: 1, backgroundColor: 'red', textColor: 'default', textAlignment: 'center' } },
                  { type: 'tableCell', content: [], props: { colspan: 1, rowspan: 1, backgroundColor: 'default', textColor: 'default', textAlignment: 'left' } },
                ],
              },
            ],
          },
        },
      },
    },
  ]);
  assert.is(markdown, 'under **x**\n\n##### Deep\n\n3. from three\n4. restart\n\n| a | b |\n| --- | --- |\n');
  assert.equal(losses, [
    { blockId: 'p', reason: 'text color' },
    { blockId: 'p', reason: 'background color' },
    { blockId: 'p', reason: 'text alignment' },
    { blockId: 'p', reason: 'underline' },
    { blockId: 'p', reason: 'text color in the text' },
    { blockId: 'p', reason: 'background color in the text' },
    { blockId: 'h', reason: 'toggleable heading' },
    { blockId: 'n2', reason: 'numbered list restart' },
    { blockId: 't', reason: 'table column widths' },
    { blockId: 't', reason: 'a table without a header row (Markdown makes the first row one)' },
    { blockId: 't', reason: 'underline' },
    { blockId: 't', reason: 'merged table cells' },
    { blockId: 't', reason: 'table cell colors' },
    { blockId: 't', reason: 'table cell alignment' },
  ]);
});

test('line breaks in headings and table cells are losses; tables are padded and escaped', () => {
  const { markdown, losses } = project([
    { id: 'h', rec: { t: 'heading', md: 'two\nlines', lv: 1 } },
    { id: 't', rec: { t: 'table', rows: [['h1', 'h2', 'h3'], ['one\ntwo', '`a|b`'], ['x']] } },
  ]);
  assert.is(markdown, '# two lines\n\n| h1 | h2 | h3 |\n| --- | --- | --- |\n| one two | `a\\|b` |  |\n| x |  |  |\n');
  assert.equal(losses, [
    { blockId: 'h', reason: 'line break in a heading' },
    { blockId: 't', reason: 'line break in a table cell' },
  ]);
});

test('text that would change meaning in its Markdown context is escaped', () => {
  const { markdown } = project([
    { rec: { t: 'heading', md: 'Issue #', lv: 2 } },
    { rec: { t: 'bulletListItem', md: '[ ] not a task' } },
    { rec: { t: 'numberedListItem', md: '[x] not a task' } },
    { rec: { t: 'codeBlock', code: '```\ninner\n```', lang: 'md' } },
    { rec: { t: 'codeBlock', code: 'x', lang: 'we`ird' } },
  ]);
  assert.is(markdown, '## Issue \\#\n\n- \\[ ] not a task\n\n1. \\[x] not a task\n\n````md\n```\ninner\n```\n````\n\n~~~we`ird\nx\n~~~\n');
});

test('empty blocks', () => {
  assert.equal(project([]), { markdown: '', losses: [] });
  assert.equal(project([p(''), { rec: { t: 'bulletListItem', md: '' } }, { rec: { t: 'checkListItem', md: '' } }, { rec: { t: 'quote', md: '' } }, { rec: { t: 'heading', md: '', lv: 2 } }]), {
    markdown: '-\n- [ ]\n\n>\n\n##\n',
    losses: [],
  });
  assert.equal(project([{ id: 't', rec: { t: 'table', rows: [] } }]), { markdown: '', losses: [{ blockId: 't', reason: 'empty table' }] });
});

test('blocks outside the grammar: the ids of all of them, nothing else', () => {
  const r = projectMarkdown(
    entries([
      p('fine'),
      { id: 'img', rec: { t: 'image', raw: { type: 'image', props: {} } } },
      { rec: { t: 'bulletListItem', md: 'x' }, children: [{ id: 'tog', rec: { t: 'toggleListItem', raw: { type: 'toggleListItem' } } }] },
    ]),
  );
  assert.equal(r, { outsideGrammar: ['img', 'tog'] });
});

// ---- Reading the projection back with a GFM parser: the tree must come back unchanged ----

const gfm = new MarkdownIt('commonmark', { html: false }).enable(['table', 'strikethrough']);
gfm.normalizeLink = (u: string) => u;
gfm.normalizeLinkText = (u: string) => u;
gfm.validateLink = () => true;

interface Read {
  t: string;
  content?: InlineContent[];
  lv?: number;
  ck?: boolean;
  code?: string;
  lang?: string;
  rows?: InlineContent[][];
  children: Read[];
}

const inlineOf = (source: string): InlineContent[] => {
  const r = parseInline(source);
  if (!r.ok) throw new Error(`cell or text did not parse: ${source}`);
  return r.content;
};

/** Rebuild a block tree from markdown-it block tokens (task items by their `[ ]`/`[x]` prefix). */
function readBack(markdown: string): Read[] {
  const tokens = gfm.parse(markdown, {});
  const sources = new Map<Read, string>();
  let i = 0;
  const blocks = (until: string): Read[] => {
    const out: Read[] = [];
    while (i < tokens.length && tokens[i]!.type !== until) {
      const t = tokens[i]!;
      if (t.type === 'paragraph_open') {
        const para: Read = { t: 'paragraph', content: inlineOf(tokens[i + 1]!.content), children: [] };
        sources.set(para, tokens[i + 1]!.content);
        out.push(para);
        i += 3;
      } else if (t.type === 'heading_open') {
        out.push({ t: 'heading', lv: Number(t.tag.slice(1)), content: inlineOf(tokens[i + 1]!.content), children: [] });
        i += 3;
      } else if (t.type === 'fence') {
        out.push({ t: 'codeBlock', code: t.content.replace(/\n$/, ''), lang: t.info, children: [] });
        i += 1;
      } else if (t.type === 'blockquote_open') {
        i++;
        const inner = blocks('blockquote_close');
        i++;
        out.push({ t: 'quote', content: inner[0]?.content ?? [], children: [] });
      } else if (t.type === 'bullet_list_open' || t.type === 'ordered_list_open') {
        const ordered = t.type === 'ordered_list_open';
        i++;
        while (tokens[i]!.type === 'list_item_open') {
          i++;
          const inner = blocks('list_item_close');
          i++;
          const first = inner[0]?.t === 'paragraph' ? inner.shift()! : undefined;
          out.push(listItem(ordered, first ? sources.get(first)! : '', inner));
        }
        i++;
      } else if (t.type === 'table_open') {
        const rows: InlineContent[][] = [];
        let row: InlineContent[] = [];
        for (i++; tokens[i]!.type !== 'table_close'; i++) {
          const x = tokens[i]!;
          if (x.type === 'tr_open') row = [];
          if (x.type === 'inline') row.push(inlineOf(x.content) as never);
          if (x.type === 'tr_close') rows.push(row);
        }
        i++;
        out.push({ t: 'table', rows, children: [] });
      } else {
        throw new Error(`unexpected token ${t.type}`);
      }
    }
    return out;
  };
  return blocks('<end>');
}

/** GFM task items are recognised in the source: `[ ]` or `[x]` and whitespace at the item's start. */
function listItem(ordered: boolean, source: string, children: Read[]): Read {
  const task = /^\[([ xX])\](?:[ \t\n]|$)/.exec(source);
  if (!ordered && task) return { t: 'checkListItem', ck: task[1] !== ' ', content: inlineOf(source.slice(3)), children };
  return { t: ordered ? 'numberedListItem' : 'bulletListItem', content: inlineOf(source), children };
}

/** What a lossless spec should read back as. */
function expected(specs: readonly Spec[]): Read[] {
  return specs
    .filter((s) => !(s.rec.t === 'paragraph' && (s.rec.md ?? '').trim() === ''))
    .map((s) => {
      const r = s.rec;
      const children = expected(s.children ?? []);
      if (r.t === 'codeBlock') return { t: 'codeBlock', code: r.code ?? '', lang: r.lang ?? '', children };
      if (r.t === 'table') {
        const cols = Math.max(...(r.rows ?? []).map((row) => row.length));
        return { t: 'table', rows: (r.rows ?? []).map((row) => Array.from({ length: cols }, (_, c) => inlineOf(row[c] ?? '')) as never), children };
      }
      const read: Read = { t: r.t, content: inlineOf(r.md ?? ''), children };
      if (r.t === 'heading') read.lv = r.lv ?? 1;
      if (r.t === 'checkListItem') read.ck = r.ck ?? false;
      return read;
    });
}

test('the projection reads back as the same tree (worked example)', () => {
  const specs: Spec[] = [
    { rec: { t: 'heading', md: 'A *b*', lv: 2 } },
    { rec: { t: 'bulletListItem', md: 'x' }, children: [{ rec: { t: 'table', rows: [['a', 'b|c']] } }, { rec: { t: 'quote', md: 'q\nr' } }, { rec: { t: 'checkListItem', md: '', ck: true } }] },
    { rec: { t: 'checkListItem', md: '**t**', ck: false } },
    { rec: { t: 'numberedListItem', md: '' }, children: [{ rec: { t: 'heading', md: 'h', lv: 3 } }] },
  ];
  assert.equal(readBack(project(specs).markdown), expected(specs));
});

// Random lossless trees: grammar blocks without extras, nested only under list items.
const word = fc.constantFrom('alpha', 'b*c', '_x_', '[y]', 'z`', '#', '1.', '- ', '> ', 'é', ' ', '\\', 'a|b', '<t>', '---', '[ ] ', '\n');
const styles = fc.record({ bold: fc.boolean(), italic: fc.boolean(), strike: fc.boolean(), code: fc.boolean() }).map((s) => {
  const out: Styles = {};
  for (const k of ['bold', 'italic', 'strike', 'code'] as const) if (s[k]) out[k] = true;
  return out;
});
const run = fc
  .tuple(fc.array(word, { minLength: 1, maxLength: 3 }), styles)
  .map(([w, s]): InlineContent => ({ type: 'text', text: s.code ? w.join('').replace(/\n/g, ' ') : w.join(''), styles: s }));
const inline = fc.array(
  fc.oneof({ weight: 3, arbitrary: run }, { weight: 1, arbitrary: fc.tuple(fc.webUrl(), fc.array(run, { maxLength: 2 })).map(([href, c]): InlineContent => ({ type: 'link', href, content: c as never })) }),
  { maxLength: 4 },
);
const md = inline.map((c) => inlineToMarkdown(c));
const oneLineMd = inline.map((c) => inlineToMarkdown(c.map((i) => (i.type === 'text' ? { ...i, text: i.text.replace(/\n/g, ' ') } : { ...i, content: i.content.map((t) => ({ ...t, text: t.text.replace(/\n/g, ' ') })) }))));
const leaf: fc.Arbitrary<Fields> = fc.oneof(
  md.map((m) => ({ t: 'paragraph', md: m })),
  fc.tuple(oneLineMd, fc.constantFrom(1 as const, 2 as const, 3 as const)).map(([m, lv]) => ({ t: 'heading', md: m, lv })),
  md.map((m) => ({ t: 'quote', md: m })),
  fc.tuple(fc.array(fc.constantFrom('a', '`', '```', '~~~', '    x', '', '\t', '-'), { maxLength: 4 }), fc.constantFrom('', 'js', 'c++')).map(([lines, lang]) =>
    lang ? { t: 'codeBlock', code: lines.join('\n'), lang } : { t: 'codeBlock', code: lines.join('\n') },
  ),
  fc.array(fc.array(oneLineMd, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }).map((rows) => ({ t: 'table', rows })),
);
const item: fc.Arbitrary<Fields> = fc.oneof(
  md.map((m) => ({ t: 'bulletListItem', md: m })),
  md.map((m) => ({ t: 'numberedListItem', md: m })),
  fc.tuple(md, fc.boolean()).map(([m, ck]) => ({ t: 'checkListItem', md: m, ck })),
);
const forest: fc.Arbitrary<Spec[]> = fc.letrec<{ list: Spec[] }>((tie) => ({
  list: fc.array(
    fc.oneof(
      leaf.map((rec): Spec => ({ rec })),
      fc.tuple(item, fc.oneof({ depthSize: 'small' }, fc.constant([] as Spec[]), tie('list'))).map(([rec, children]): Spec => ({ rec, children })),
    ),
    { maxLength: 4 },
  ),
})).list;

test('property: a lossless tree projects with no losses and reads back unchanged', () => {
  fc.assert(
    fc.property(forest, (specs) => {
      const { markdown, losses } = project(specs);
      // The one loss such a tree can have: a paragraph first under a list item without text.
      for (const l of losses) assert.is(l.reason, 'the first paragraph under an empty list item reads as its text');
      fc.pre(losses.length === 0);
      assert.equal(readBack(markdown), expected(specs), markdown);
    }),
    { numRuns: 500 },
  );
});

test.run();
