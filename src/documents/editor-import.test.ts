/**
 * Documents started from BlockNote editor blocks: the eight grammar types read back exactly, blocks
 * outside the grammar stay verbatim and make `blocks` and `markdown` answer CONFLICT.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accountActor, errorOf, freshKey, mutate, testEngine } from '../../fixtures/engine-kit.ts';

const alice = accountActor();
const props = { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' };
const text = (t: string, styles = {}) => ({ type: 'text', text: t, styles });

const editorBlocks = [
  { id: 'h1', type: 'heading', props: { ...props, level: 2, isToggleable: false }, content: [text('Plan')], children: [] },
  {
    id: 'p1',
    type: 'paragraph',
    props,
    content: [text('See '), { type: 'link', href: 'https://example.com/a', content: [text('this', { bold: true })] }, text('.')],
    children: [{ id: 'c1', type: 'checkListItem', props: { ...props, checked: true }, content: [text('done')], children: [] }],
  },
];

test('BlockNote blocks of the grammar types read back exactly and keep their ids', async () => {
  const engine = testEngine();
  const out = await engine.documents.create(alice, { idempotencyKey: freshKey(), body: { v: 1, title: 'From editor' }, editorBlocks });
  assert.equal(JSON.parse(out.document.documentJson), { type: 'blocks', blocks: editorBlocks });
  assert.is(out.document.version, 1);
  const blocks = await engine.documents.read(alice, out.document.documentRef, 'blocks');
  if (blocks.format !== 'blocks') throw new Error('format');
  assert.equal(blocks.blocks.map((b) => [b.id, b.parentBlockId, b.markdown]), [
    ['h1', null, 'Plan'],
    ['p1', null, 'See [**this**](https://example.com/a).'],
    ['c1', 'p1', 'done'],
  ]);
  assert.equal(blocks.blocks[1]!.citations, ['https://example.com/a']);
  const edited = await mutate(engine, alice, out.document.documentRef, out.document.revision, { kind: 'edit', blockId: 'h1', block: { type: 'heading', level: 1, markdown: 'Plan B' } });
  assert.is(edited.document.version, 2);
});

test('an editor block outside the grammar stays verbatim; blocks and markdown reads answer CONFLICT', async () => {
  const engine = testEngine();
  const image = { id: 'img', type: 'image', props: { url: 'https://example.com/x.png', caption: '' }, content: undefined, children: [] };
  const out = await engine.documents.create(alice, { idempotencyKey: freshKey(), body: { v: 1, title: 'Mixed' }, editorBlocks: [editorBlocks[0], image] });
  const ref = out.document.documentRef;
  const rich = JSON.parse(out.document.documentJson) as { blocks: { id: string; type: string; props: unknown }[] };
  assert.is(rich.blocks[1]!.type, 'image');
  assert.equal(rich.blocks[1]!.props, image.props);
  for (const format of ['blocks', 'markdown']) {
    const e = await errorOf(engine.documents.read(alice, ref, format));
    assert.is(e.code, 'CONFLICT');
    assert.match(e.message, /rich-json/);
  }
  const bad = await errorOf(engine.documents.create(alice, { idempotencyKey: freshKey(), body: { v: 1, title: 'x' }, editorBlocks: 'nope' }));
  assert.is(bad.code, 'INVALID_REQUEST');
  assert.equal(bad.fields, ['editorBlocks']);
});

test.run();
