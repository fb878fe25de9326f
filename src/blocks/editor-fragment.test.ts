/**
 * BlockNote's collaboration fragment from and to block JSON, and merging an API version into a
 * fragment a person is editing.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as Y from 'yjs';
import { EDITOR_FRAGMENT, isTrailingParagraph, readFragment, writeFragment, type EditorBlock } from './editor-fragment.ts';
import { applyVersion } from './editor-merge.ts';

const P = { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' };
const para = (id: string, text: string, children: EditorBlock[] = []): EditorBlock => ({
  id,
  type: 'paragraph',
  props: { ...P },
  content: text ? [{ type: 'text', text, styles: {} }] : [],
  children,
});

const RICH: EditorBlock[] = [
  { id: 'h1', type: 'heading', props: { ...P, level: 2, isToggleable: false }, content: [{ type: 'text', text: 'Title', styles: {} }], children: [] },
  {
    id: 'p1',
    type: 'paragraph',
    props: { ...P, textColor: 'red' },
    content: [
      { type: 'text', text: 'plain ', styles: {} },
      { type: 'text', text: 'bold', styles: { bold: true, italic: true } },
      { type: 'link', href: 'https://example.org', content: [{ type: 'text', text: 'a link', styles: {} }, { type: 'text', text: ' code', styles: { code: true } }] },
      { type: 'text', text: ' line\nbreak', styles: { underline: true, textColor: 'blue' } },
    ],
    children: [para('c1', 'child', [para('g1', 'grandchild')])],
  },
  { id: 'k1', type: 'checkListItem', props: { ...P, checked: true }, content: [{ type: 'text', text: 'done', styles: {} }], children: [] },
  { id: 'code1', type: 'codeBlock', props: { language: 'ts' }, content: [{ type: 'text', text: 'let a = 1;\nlet b = *2*;', styles: {} }], children: [] },
  {
    id: 't1',
    type: 'table',
    props: { textColor: 'default' },
    content: {
      type: 'tableContent',
      columnWidths: [null, 120],
      headerRows: 1,
      rows: [
        { cells: [{ type: 'tableCell', content: [{ type: 'text', text: 'A', styles: {} }], props: { colspan: 1, rowspan: 1, backgroundColor: 'default', textColor: 'default', textAlignment: 'left' } }, { type: 'tableCell', content: [{ type: 'text', text: 'B', styles: { bold: true } }], props: { colspan: 1, rowspan: 1, backgroundColor: 'default', textColor: 'default', textAlignment: 'left' } }] },
        { cells: [{ type: 'tableCell', content: [], props: { colspan: 1, rowspan: 1, backgroundColor: 'default', textColor: 'default', textAlignment: 'center' } }, { type: 'tableCell', content: [{ type: 'text', text: '2', styles: {} }], props: { colspan: 1, rowspan: 1, backgroundColor: 'default', textColor: 'default', textAlignment: 'left' } }] },
      ],
    },
    children: [],
  },
  { id: 'img1', type: 'image', props: { backgroundColor: 'default', textAlignment: 'left', name: 'cat', url: 'https://example.org/cat.png', caption: '', showPreview: true, previewWidth: 512 }, children: [] },
  para('e1', ''),
];

function fragmentOf(blocks: readonly EditorBlock[]): { doc: Y.Doc; fragment: Y.XmlFragment } {
  const doc = new Y.Doc();
  const fragment = doc.getXmlFragment(EDITOR_FRAGMENT);
  doc.transact(() => writeFragment(fragment, blocks));
  return { doc, fragment };
}

test('blocks written to the fragment read back equal: styles, links, hard breaks, nesting, code, tables, content-less blocks', () => {
  const { fragment } = fragmentOf(RICH);
  assert.equal(readFragment(fragment), RICH);
});

test('the fragment has BlockNote 0.55 shape: blockGroup > blockContainer{id} > content element {props} + blockGroup', () => {
  const { fragment } = fragmentOf([para('a', 'x', [para('b', 'y')])]);
  const group = fragment.get(0) as Y.XmlElement;
  assert.is(fragment.length, 1);
  assert.is(group.nodeName, 'blockGroup');
  const container = group.get(0) as Y.XmlElement;
  assert.is(container.nodeName, 'blockContainer');
  assert.equal(container.getAttributes(), { id: 'a' });
  const content = container.get(0) as Y.XmlElement;
  assert.is(content.nodeName, 'paragraph');
  assert.equal(content.getAttributes(), P);
  assert.ok(content.get(0) instanceof Y.XmlText);
  assert.is((container.get(1) as Y.XmlElement).nodeName, 'blockGroup');
  const { fragment: rich } = fragmentOf(RICH.slice(1, 2));
  const text = ((rich.get(0) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlElement;
  const delta = (text.get(0) as Y.XmlText).toDelta();
  assert.equal(delta[1], { insert: 'bold', attributes: { bold: {}, italic: {} } });
  assert.equal(delta[2].attributes, { link: { href: 'https://example.org' } });
  assert.is((text.get(1) as Y.XmlElement).nodeName, 'hardBreak');
});

test('the trailing paragraph: empty, childless and unknown to the API', () => {
  assert.ok(isTrailingParagraph(para('t', ''), () => false));
  assert.not.ok(isTrailingParagraph(para('t', ''), (id) => id === 't'), 'an API block stays');
  assert.not.ok(isTrailingParagraph(para('t', 'x'), () => false));
  assert.not.ok(isTrailingParagraph(para('t', '', [para('c', '')]), () => false));
});

test('an API version merges into a fragment a person is editing: both edits kept, in one update', () => {
  const base = [para('a', 'alpha'), para('b', 'beta'), para('c', 'gamma', [para('d', 'delta')])];
  const { doc, fragment } = fragmentOf(base);
  // The person types into block a (not committed yet) and deletes block b.
  const textA = (((fragment.get(0) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlText;
  textA.insert(5, ' typed');
  (fragment.get(0) as Y.XmlElement).delete(1, 1);
  // The agent edits c, inserts n before c, moves d to the root end, adds e.
  const next = [para('a', 'alpha'), para('b', 'beta'), para('n', 'new'), para('c', 'GAMMA'), para('d', 'delta'), para('e', 'end')];
  const updates: Uint8Array[] = [];
  doc.on('update', (u: Uint8Array) => updates.push(u));
  doc.transact(() => applyVersion(fragment, base, next));
  assert.is(updates.length, 1, 'one Yjs update for the whole version');
  const got = readFragment(fragment);
  assert.equal(got.map((b) => b.id), ['a', 'n', 'c', 'd', 'e'], "the person's delete of b stays; the agent's blocks are placed");
  assert.equal(got[0]!.content, [{ type: 'text', text: 'alpha typed', styles: {} }]);
  assert.equal(got[2]!.content, [{ type: 'text', text: 'GAMMA', styles: {} }]);
  assert.equal(got[2]!.children, []);
  // Another replica gets the same result from the update.
  const replica = new Y.Doc();
  Y.applyUpdate(replica, Y.encodeStateAsUpdate(doc));
  assert.equal(readFragment(replica.getXmlFragment(EDITOR_FRAGMENT)), got);
});

test('an API version deleting a block removes it, and an agent edit of a block the person deleted brings it back', () => {
  const base = [para('a', 'alpha'), para('b', 'beta'), para('c', 'gamma')];
  const { doc, fragment } = fragmentOf(base);
  (fragment.get(0) as Y.XmlElement).delete(1, 1); // the person deletes b
  doc.transact(() => applyVersion(fragment, base, [para('b', 'beta edited'), para('c', 'gamma')]));
  assert.equal(readFragment(fragment).map((b) => [b.id, (b.content as any[])[0]?.text]), [['b', 'beta edited'], ['c', 'gamma']]);
});

test('reordering siblings moves only the blocks out of order', () => {
  const base = [para('a', '1'), para('b', '2'), para('c', '3'), para('d', '4')];
  const { doc, fragment } = fragmentOf(base);
  const group = fragment.get(0) as Y.XmlElement;
  const before = group.toArray();
  doc.transact(() => applyVersion(fragment, base, [para('a', '1'), para('b', '2'), para('d', '4'), para('c', '3')]));
  assert.equal(readFragment(fragment).map((b) => b.id), ['a', 'b', 'd', 'c']);
  const now = (fragment.get(0) as Y.XmlElement).toArray();
  assert.is(before.filter((el) => now.includes(el as Y.XmlElement)).length, 3, 'three blocks keep their Yjs elements: one moved');
});

/** The XmlText of the root block at `i` in `fragment`. */
const textAt = (fragment: Y.XmlFragment, i: number) =>
  (((fragment.get(0) as Y.XmlElement).get(i) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlText;

/** Two replicas of `base`: the room's doc (where the agent's version is merged) and a person's editor. */
function replicas(base: readonly EditorBlock[]) {
  const room = fragmentOf(base);
  const person = new Y.Doc();
  Y.applyUpdate(person, Y.encodeStateAsUpdate(room.doc));
  const sync = () => {
    Y.applyUpdate(person, Y.encodeStateAsUpdate(room.doc, Y.encodeStateVector(person)));
    Y.applyUpdate(room.doc, Y.encodeStateAsUpdate(person, Y.encodeStateVector(room.doc)));
  };
  return { room, person: person.getXmlFragment(EDITOR_FRAGMENT), sync };
}

const plain = (fragment: Y.XmlFragment) => readFragment(fragment).map((b) => (b.content as { text: string }[]).map((c) => c.text).join(''));

test("an agent's edit at the start of a block merges with a person's concurrent typing at its end", () => {
  const base = [para('a', 'first'), para('x', 'alpha beta')];
  const { room, person, sync } = replicas(base);
  textAt(person, 1).insert(10, ' typed');
  room.doc.transact(() => applyVersion(room.fragment, base, [para('a', 'first'), para('x', 'The alpha beta')]));
  sync();
  assert.equal(plain(room.fragment), ['first', 'The alpha beta typed']);
  assert.equal(readFragment(person), readFragment(room.fragment));
});

test("an agent's deletion inside a block merges with a person's concurrent typing in it", () => {
  const base = [para('x', 'alpha beta gamma')];
  const { room, person, sync } = replicas(base);
  textAt(person, 0).insert(16, '!');
  textAt(person, 0).insert(0, '> ');
  room.doc.transact(() => applyVersion(room.fragment, base, [para('x', 'alpha gamma')]));
  sync();
  assert.equal(plain(room.fragment), ['> alpha gamma!']);
  assert.equal(readFragment(person), readFragment(room.fragment));
});

test("the changed span is found in text a person already changed: after its prefix, before its suffix, or by its context", () => {
  const cases: [string, string, (t: Y.XmlText) => void, string][] = [
    ['one two three', 'one 2 three', (t) => t.insert(13, '.'), 'one 2 three.'],
    ['one two three', 'one two 3', (t) => t.insert(0, 'so '), 'so one two 3'],
    ['one two three', 'one TWO three', (t) => (t.insert(13, '!'), t.insert(0, '¡')), '¡one TWO three!'],
  ];
  for (const [from, to, edit, want] of cases) {
    const base = [para('x', from)];
    const { doc, fragment } = fragmentOf(base);
    edit(textAt(fragment, 0)); // received from the person's editor, not committed yet
    doc.transact(() => applyVersion(fragment, base, [para('x', to)]));
    assert.equal(plain(fragment), [want], `${from} → ${to}`);
  }
});

test("an agent's formatting and props change keep the block's text node and a person's typing", () => {
  const base = [para('x', 'make this bold, please')];
  const { room, person, sync } = replicas(base);
  const node = textAt(room.fragment, 0);
  textAt(person, 0).insert(22, ' now');
  const next: EditorBlock[] = [
    {
      ...para('x', ''),
      props: { ...P, textAlignment: 'center' },
      content: [
        { type: 'text', text: 'make this ', styles: {} },
        { type: 'text', text: 'bold', styles: { bold: true } },
        { type: 'text', text: ', please', styles: {} },
      ],
    },
  ];
  room.doc.transact(() => applyVersion(room.fragment, base, next));
  assert.is(textAt(room.fragment, 0), node, 'the same Y.XmlText');
  sync();
  const [x] = readFragment(room.fragment);
  assert.equal(x!.props, { ...P, textAlignment: 'center' });
  assert.equal(x!.content, [
    { type: 'text', text: 'make this ', styles: {} },
    { type: 'text', text: 'bold', styles: { bold: true } },
    { type: 'text', text: ', please now', styles: {} },
  ]);
  assert.equal(readFragment(person), readFragment(room.fragment));
});

test("when a person already removed the span an agent changed, the agent's text is inserted and the person's kept", () => {
  const base = [para('x', 'one two three')];
  const { doc, fragment } = fragmentOf(base);
  const text = textAt(fragment, 0);
  text.delete(3, 4); // "one three"
  text.insert(0, 'A ');
  doc.transact(() => applyVersion(fragment, base, [para('x', 'one 2 three')]));
  assert.equal(plain(fragment), ['A one2 three']);
});

test.run();
