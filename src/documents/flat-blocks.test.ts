import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accountActor, mutate, newDocument, testEngine } from '../../fixtures/engine-kit.ts';

const alice = accountActor('alice');

async function blocksOf(blocks: unknown[]) {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  await mutate(engine, alice, ref, revision, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks });
  const read = await engine.documents.read(alice, ref, 'blocks');
  if (read.format !== 'blocks') throw new Error('format');
  return read.blocks;
}

test('format=blocks gives a code block its fenced block, with a fence longer than any backtick run inside', async () => {
  const [plain, ticks, empty] = await blocksOf([
    { type: 'codeBlock', code: 'let a = 1;\nlet b = 2;', language: 'js' },
    { type: 'codeBlock', code: 'a ``` b ````', language: 'md' },
    { type: 'codeBlock', code: '' },
  ]);
  assert.is(plain!.markdown, '```js\nlet a = 1;\nlet b = 2;\n```');
  assert.is(plain!.code, 'let a = 1;\nlet b = 2;');
  assert.is(ticks!.markdown, '`````md\na ``` b ````\n`````');
  assert.is(empty!.markdown, '```\n```');
});

test('format=blocks gives a table its pipe table, pipes escaped and short rows padded', async () => {
  const [table] = await blocksOf([{ type: 'table', rows: [['Name', 'Score'], ['a|b', '**1** [x](https://example.com/)'], ['solo']] }]);
  assert.is(table!.markdown, '| Name | Score |\n| --- | --- |\n| a\\|b | **1** [x](https://example.com/) |\n| solo |  |');
  assert.equal(table!.rows, [['Name', 'Score'], ['a|b', '**1** [x](https://example.com/)'], ['solo']]);
  assert.equal(table!.citations, ['https://example.com/']);
});

test('text blocks keep their inline Markdown as their own Markdown', async () => {
  const [p, h] = await blocksOf([{ type: 'paragraph', markdown: 'some *text*' }, { type: 'heading', level: 2, markdown: 'Title' }]);
  assert.is(p!.markdown, 'some *text*');
  assert.is(h!.markdown, 'Title');
});

test.run();
