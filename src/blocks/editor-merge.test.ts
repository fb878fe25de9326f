/**
 * Merging an agent's version into a fragment a person is editing, where the block's shape is more
 * than one text node: hard breaks, type changes, tables, a block moved and edited in one version.
 * And the property behind all of it: with no person's edit pending, merging a version into the
 * fragment of its base gives exactly that version.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fc from 'fast-check';
import * as Y from 'yjs';
import { EDITOR_FRAGMENT, readFragment, writeFragment, type EditorBlock } from './editor-fragment.ts';
import { applyVersion } from './editor-merge.ts';

const P = { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' };
const text = (t: string, styles: Record<string, unknown> = {}) => ({ type: 'text', text: t, styles });
const para = (id: string, t: string, children: EditorBlock[] = []): EditorBlock => ({ id, type: 'paragraph', props: { ...P }, content: t ? [text(t)] : [], children });
const heading = (id: string, t: string): EditorBlock => ({ id, type: 'heading', props: { ...P, level: 2, isToggleable: false }, content: t ? [text(t)] : [], children: [] });
const code = (id: string, t: string): EditorBlock => ({ id, type: 'codeBlock', props: { language: 'text' }, content: t ? [text(t)] : [], children: [] });

const CELL = { colspan: 1, rowspan: 1, backgroundColor: 'default', textColor: 'default', textAlignment: 'left' };
const table = (id: string, rows: string[][], extra: { headerRows?: number; widths?: (number | null)[] } = {}): EditorBlock => ({
  id,
  type: 'table',
  props: { textColor: 'default' },
  content: {
    type: 'tableContent',
    columnWidths: extra.widths ?? rows[0]!.map(() => null),
    ...(extra.headerRows ? { headerRows: extra.headerRows } : {}),
    rows: rows.map((cells) => ({ cells: cells.map((c) => ({ type: 'tableCell', content: c ? [text(c)] : [], props: { ...CELL } })) })),
  },
  children: [],
});

/** The room's doc holding `base`, a person's editor synced from it, and a two-way sync. */
function replicas(base: readonly EditorBlock[]) {
  const room = new Y.Doc();
  const fragment = room.getXmlFragment(EDITOR_FRAGMENT);
  room.transact(() => writeFragment(fragment, base));
  const person = new Y.Doc();
  Y.applyUpdate(person, Y.encodeStateAsUpdate(room));
  const sync = () => {
    Y.applyUpdate(person, Y.encodeStateAsUpdate(room, Y.encodeStateVector(person)));
    Y.applyUpdate(room, Y.encodeStateAsUpdate(person, Y.encodeStateVector(room)));
  };
  return { room, fragment, person: person.getXmlFragment(EDITOR_FRAGMENT), sync };
}

/** The content element of root block `i`. */
const contentAt = (fragment: Y.XmlFragment, i: number) => ((fragment.get(0) as Y.XmlElement).get(i) as Y.XmlElement).get(0) as Y.XmlElement;

/** Plain text of each root block, a hard break as "\n". */
const plain = (fragment: Y.XmlFragment) =>
  readFragment(fragment).map((b) => (Array.isArray(b.content) ? (b.content as { text: string }[]).map((c) => c.text).join('') : null));

/** Text of the cells of root table `i`. */
const cells = (fragment: Y.XmlFragment, i: number) =>
  ((readFragment(fragment)[i]!.content as { rows: { cells: { content: { text: string }[] }[] }[] }).rows).map((r) => r.cells.map((c) => c.content.map((t) => t.text).join('')));

/** Merge `next` (from `base`) into the room while the person's edit is pending, then sync both ways. */
function merge(r: ReturnType<typeof replicas>, base: readonly EditorBlock[], next: readonly EditorBlock[]): number {
  let updates = 0;
  const count = () => updates++;
  r.room.on('update', count);
  r.room.transact(() => applyVersion(r.fragment, base, next));
  r.room.off('update', count);
  r.sync();
  assert.equal(readFragment(r.person), readFragment(r.fragment), 'the person and the room converge');
  return updates;
}

test('hard breaks: an agent edits one line of a paragraph while the person types in another', () => {
  const base = [para('x', 'first line\nsecond line\nthird')];
  const r = replicas(base);
  const lines = contentAt(r.person, 0);
  assert.is(lines.length, 5, 'text, break, text, break, text');
  (lines.get(4) as Y.XmlText).insert(5, ' typed');
  assert.is(merge(r, base, [para('x', 'FIRST line\nsecond line\nthird')]), 1, 'one update');
  assert.equal(plain(r.fragment), ['FIRST line\nsecond line\nthird typed']);
});

test('hard breaks: an agent adds and removes line breaks; the person keeps typing', () => {
  const base = [para('x', 'one two three')];
  const r = replicas(base);
  (contentAt(r.person, 0).get(0) as Y.XmlText).insert(13, '!');
  merge(r, base, [para('x', 'one\ntwo three')]);
  assert.equal(plain(r.fragment), ['one\ntwo three!']);
  const el = contentAt(r.fragment, 0);
  assert.equal(el.toArray().map((n) => (n instanceof Y.XmlText ? 'text' : (n as Y.XmlElement).nodeName)), ['text', 'hardBreak', 'text'], 'as y-prosemirror writes it');

  const base2 = [para('x', 'one\ntwo three!')];
  const r2 = replicas(base2);
  (contentAt(r2.person, 0).get(2) as Y.XmlText).insert(0, '>');
  merge(r2, base2, [para('x', 'one two three!')]);
  assert.equal(plain(r2.fragment), ['one >two three!'], "the break removed; the person's keystroke in the second line kept");
  assert.not.ok(contentAt(r2.fragment, 0).toArray().some((n) => n instanceof Y.XmlElement), 'no hardBreak left');

  const base3 = [para('x', 'a\n\nb')];
  const r3 = replicas(base3);
  merge(r3, base3, [para('x', 'a\nb\n')]);
  assert.equal(plain(r3.fragment), ['a\nb\n']);
});

test("a type change keeps the person's pending text and merges the agent's text change", () => {
  const base = [para('x', 'Findings so far')];
  const r = replicas(base);
  (contentAt(r.person, 0).get(0) as Y.XmlText).insert(15, ' (draft)');
  r.sync(); // received by the room, not committed yet (Yjs cannot rename an element: text still in flight to the old one would not follow)
  merge(r, base, [heading('x', 'Findings')]);
  const [x] = readFragment(r.fragment);
  assert.is(x!.type, 'heading');
  assert.equal(x!.props, { ...P, level: 2, isToggleable: false });
  assert.equal(plain(r.fragment), ['Findings (draft)'], "the agent's deletion and the person's text");
});

test('a type change to and from a code block converts line breaks and drops marks', () => {
  const base: EditorBlock[] = [{ ...para('x', ''), content: [text('let a', { bold: true }), text('\nlet b')] }];
  const r = replicas(base);
  merge(r, base, [code('x', 'let a\nlet b')]);
  const [x] = readFragment(r.fragment);
  assert.equal(x, code('x', 'let a\nlet b'));
  assert.ok(contentAt(r.fragment, 0).get(0) instanceof Y.XmlText);
  assert.is(contentAt(r.fragment, 0).length, 1, 'a code block keeps "\\n" in its text');
  const back = replicas([code('y', 'a\nb')]);
  merge(back, [code('y', 'a\nb')], [para('y', 'a\nb c')]);
  assert.equal(plain(back.fragment), ['a\nb c']);
  assert.is(contentAt(back.fragment, 0).length, 3);
});

test("a type the person changed stays when the agent changed only the text", () => {
  const base = [para('x', 'title')];
  const r = replicas(base);
  // The person turned the paragraph into a heading (a new element, as BlockNote writes it).
  const container = (r.person.get(0) as Y.XmlElement).get(0) as Y.XmlElement;
  container.doc!.transact(() => {
    container.delete(0, 1);
    const h = new Y.XmlElement('heading');
    h.setAttribute('level', 1 as unknown as string);
    h.insert(0, [new Y.XmlText('title')]);
    container.insert(0, [h]);
  });
  r.sync();
  merge(r, base, [{ ...para('x', 'Title'), props: { ...P, textAlignment: 'center' } }]);
  const [x] = readFragment(r.fragment);
  assert.is(x!.type, 'heading');
  assert.equal(plain(r.fragment), ['Title']);
  assert.equal(x!.props, { level: 1 }, 'props the heading does not have are not added');
});

test("tables: an agent's cell edit merges with the person's typing in another cell and in the same cell", () => {
  const base = [table('t', [['A', 'B'], ['1', '2 pears']], { headerRows: 1 })];
  const r = replicas(base);
  const cellText = (f: Y.XmlFragment, row: number, col: number) =>
    (((contentAt(f, 0).get(row) as Y.XmlElement).get(col) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlText;
  const node = cellText(r.fragment, 1, 1);
  cellText(r.person, 1, 0).insert(1, '0');
  cellText(r.person, 1, 1).insert(7, ', ripe');
  assert.is(merge(r, base, [table('t', [['A', 'B'], ['1', 'two pears']], { headerRows: 1 })]), 1);
  assert.equal(cells(r.fragment, 0), [['A', 'B'], ['10', 'two pears, ripe']]);
  assert.is(cellText(r.fragment, 1, 1), node, 'the cell keeps its text node');
});

test('tables: rows and columns an agent adds or removes keep the other cells and their pending text', () => {
  const base = [table('t', [['a', 'b'], ['c', 'd']])];
  const r = replicas(base);
  const cellText = (row: number, col: number) => (((contentAt(r.person, 0).get(row) as Y.XmlElement).get(col) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlText;
  cellText(0, 0).insert(1, '1');
  cellText(1, 1).insert(1, '4');
  merge(r, base, [table('t', [['a', 'b', 'x'], ['c', 'd', 'y'], ['e', 'f', 'z']], { widths: [null, 80, null] })]);
  assert.equal(cells(r.fragment, 0), [['a1', 'b', 'x'], ['c', 'd4', 'y'], ['e', 'f', 'z']]);
  const content = readFragment(r.fragment)[0]!.content as { columnWidths: unknown[] };
  assert.equal(content.columnWidths, [null, 80, null]);

  const base2 = [table('t', [['a', 'b'], ['c', 'd'], ['e', 'f']])];
  const r2 = replicas(base2);
  ((((contentAt(r2.person, 0).get(2) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(1, '!');
  merge(r2, base2, [table('t', [['a', 'b'], ['e', 'f']])]);
  assert.equal(cells(r2.fragment, 0), [['a', 'b'], ['e!', 'f']]);
});

test('tables: a header row the agent adds rebuilds those cells with their current text', () => {
  const base = [table('t', [['A', 'B'], ['1', '2']])];
  const r = replicas(base);
  ((((contentAt(r.person, 0).get(0) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(1, 'a');
  r.sync();
  merge(r, base, [table('t', [['A', 'B'], ['1', '2']], { headerRows: 1 })]);
  assert.equal(cells(r.fragment, 0), [['Aa', 'B'], ['1', '2']]);
  assert.is(((contentAt(r.fragment, 0).get(0) as Y.XmlElement).get(0) as Y.XmlElement).nodeName, 'tableHeader');
  assert.is(((contentAt(r.fragment, 0).get(1) as Y.XmlElement).get(0) as Y.XmlElement).nodeName, 'tableCell');
});

test("a block moved and edited in one version keeps the person's pending text and its subtree", () => {
  const base = [para('a', 'alpha'), para('b', 'beta', [para('c', 'child')])];
  const r = replicas(base);
  ((((r.person.get(0) as Y.XmlElement).get(1) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(4, ' typed');
  r.sync();
  merge(r, base, [para('b', 'BETA', [para('c', 'child')]), para('a', 'alpha')]);
  assert.equal(plain(r.fragment), ['BETA typed', 'alpha']);
  assert.equal(readFragment(r.fragment)[0]!.children.map((c) => c.id), ['c']);
});

// ---------------------------------------------------------------------------------------------
// The property: merging a version into the fragment of its base gives exactly that version.

const STYLES = [{}, { bold: true }, { italic: true, textColor: 'red' }, { code: true }] as const;
const inline = fc.array(fc.record({ t: fc.stringMatching(/^[ab\n é😀]{1,6}$/u), s: fc.constantFrom(...STYLES) }), { maxLength: 4 });

/** Adjacent runs of equal styles joined, as a fragment reads them back (a hard break takes the styles before it). */
function canonical(runs: { t: string; s: object }[], plainText: boolean) {
  const out: { type: string; text: string; styles: object }[] = [];
  for (const { t, s } of runs) {
    const styles = plainText ? {} : s;
    const last = out[out.length - 1];
    if (last && JSON.stringify(last.styles) === JSON.stringify(styles)) last.text += t;
    else out.push({ type: 'text', text: t, styles });
  }
  return out;
}

const TYPES = ['paragraph', 'heading', 'codeBlock', 'table'] as const;
const PROPS: Record<(typeof TYPES)[number], object> = {
  paragraph: P,
  heading: { ...P, level: 1, isToggleable: false },
  codeBlock: { language: 'text' },
  table: { textColor: 'default' },
};

const blockOf = (id: string, type: (typeof TYPES)[number], runs: { t: string; s: object }[], grid: string[][]): EditorBlock => {
  if (type === 'table') return table(id, grid);
  // A hard break cannot start a styled run on its own in the editor; fold line breaks into plain runs for the canonical form.
  const content = canonical(type === 'codeBlock' ? runs : runs.map((r) => (r.t.includes('\n') ? { t: r.t, s: {} } : r)), type === 'codeBlock');
  return { id, type, props: { ...PROPS[type] }, content, children: [] };
};

const grid = fc.integer({ min: 1, max: 3 }).chain((cols) => fc.array(fc.array(fc.stringMatching(/^[xy z]{0,3}$/), { minLength: cols, maxLength: cols }), { minLength: 1, maxLength: 3 }));
const blockArb = (id: string) => fc.tuple(fc.constantFrom(...TYPES), inline, grid).map(([type, runs, g]) => blockOf(id, type, runs, g));

test('property: with no pending edit, merging a version into its base fragment gives exactly that version', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.nat(3)), { minLength: 1, maxLength: 4 }),
      fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'e'), fc.nat(3)), { minLength: 0, maxLength: 4 }),
      fc.array(blockArb('_'), { minLength: 8, maxLength: 8 }),
      (baseIds, nextIds, pool) => {
        const build = (ids: [string, number][], offset: number) => {
          const seen = new Set<string>();
          const out: EditorBlock[] = [];
          for (const [id, k] of ids) {
            if (seen.has(id)) continue;
            seen.add(id);
            out.push({ ...pool[(k + offset) % pool.length]!, id });
          }
          return out;
        };
        const base = build(baseIds, 0);
        const next = build(nextIds, 4);
        const doc = new Y.Doc();
        const fragment = doc.getXmlFragment(EDITOR_FRAGMENT);
        doc.transact(() => writeFragment(fragment, base));
        doc.transact(() => applyVersion(fragment, base, next));
        const expected = new Y.Doc().getXmlFragment(EDITOR_FRAGMENT);
        expected.doc!.transact(() => writeFragment(expected, next));
        assert.equal(readFragment(fragment), readFragment(expected));
      },
    ),
    { numRuns: 400, seed: 20 },
  );
});

/** Every XmlText under `el`, in document order. */
function texts(el: Y.XmlElement | Y.XmlFragment, out: Y.XmlText[] = []): Y.XmlText[] {
  for (const n of el.toArray()) {
    if (n instanceof Y.XmlText) out.push(n);
    else if (n instanceof Y.XmlElement) texts(n, out);
  }
  return out;
}

test("property: a person's keystroke the room received survives any version an agent makes of that block", () => {
  const textTypes = new Set(['paragraph', 'heading', 'codeBlock']);
  fc.assert(
    fc.property(
      fc.array(blockArb('_'), { minLength: 6, maxLength: 6 }),
      fc.array(fc.constantFrom(0, 1, 2, 3, 4, 5), { minLength: 3, maxLength: 3 }),
      fc.array(fc.constantFrom(0, 1, 2, 3, 4, 5), { minLength: 3, maxLength: 3 }),
      fc.nat(),
      fc.nat(),
      (pool, baseAt, nextAt, pick, offset) => {
        const base = ['a', 'b', 'c'].map((id, i) => ({ ...pool[baseAt[i]!]!, id }));
        const next = ['c', 'a', 'b'].map((id) => ({ ...pool[nextAt[['a', 'b', 'c'].indexOf(id)]!]!, id }));
        const r = replicas(base);
        const candidates = texts(r.person);
        if (candidates.length === 0) return;
        const target = candidates[pick % candidates.length]!;
        target.insert(offset % (target.length + 1), '§');
        let owner: Y.XmlElement | null = target.parent as Y.XmlElement;
        while (owner !== null && owner.nodeName !== 'blockContainer') owner = owner.parent as Y.XmlElement | null;
        const id = owner!.getAttribute('id') as string;
        const was = base.find((b) => b.id === id)!;
        const now = next.find((b) => b.id === id)!;
        // A table keeps every cell when its rows and columns stay (a row or column the agent removed goes, with what was typed in it).
        const shape = (b: EditorBlock) => JSON.stringify((b.content as { rows?: { cells: unknown[] }[] }).rows?.map((row) => row.cells.length));
        const kept = (was.type === now.type && (was.type !== 'table' || shape(was) === shape(now))) || (textTypes.has(was.type) && textTypes.has(now.type));
        r.sync();
        merge(r, base, next);
        const marks = (JSON.stringify(readFragment(r.fragment)).match(/§/g) ?? []).length;
        if (kept) assert.is(marks, 1, `${was.type} → ${now.type}`);
      },
    ),
    { numRuns: 400, seed: 21 },
  );
});

test('a reorder moves the blocks around the one a person is typing in, so a keystroke still on its way lands', () => {
  const base = [para('a', 'alpha'), para('x', 'typing here'), para('b', 'beta'), para('c', 'gamma')];
  const next = [para('a', 'alpha'), para('b', 'beta'), para('c', 'gamma'), para('x', 'typing here')];
  for (const busy of [true, false]) {
    const r = replicas(base);
    const element = ((r.fragment.get(0) as Y.XmlElement).get(1) as Y.XmlElement);
    (contentAt(r.person, 1).get(0) as Y.XmlText).insert(11, '!'); // in flight: not yet received
    r.room.transact(() => applyVersion(r.fragment, base, next, { busy: (id) => busy && id === 'x' }));
    r.sync();
    assert.equal(readFragment(r.fragment).map((b) => b.id), ['a', 'b', 'c', 'x']);
    assert.equal(readFragment(r.person), readFragment(r.fragment));
    const kept = (r.fragment.get(0) as Y.XmlElement).toArray().includes(element);
    if (busy) {
      assert.ok(kept, 'x keeps its element: b and c moved instead');
      assert.equal(plain(r.fragment), ['alpha', 'beta', 'gamma', 'typing here!']);
    } else {
      assert.not.ok(kept, 'without a person in it, the one block out of order is moved');
      assert.equal(plain(r.fragment), ['alpha', 'beta', 'gamma', 'typing here'], 'the keystroke sent into the old element is gone');
    }
  }
});

test.run();
