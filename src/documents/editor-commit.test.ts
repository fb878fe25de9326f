/**
 * `documents.commitEditorBlocks`: an editor's blocks committed as the next version through the
 * mutation path (precondition, operationRef, receipt, idempotency), writing only what differs.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as Y from 'yjs';
import { accountActor, errorOf, freshKey, mutate, newDocument, testEngine } from '../../fixtures/engine-kit.ts';

const actor = accountActor();

async function withDoc() {
  const engine = testEngine(7);
  const { ref, revision } = await newDocument(engine, actor);
  const made = await mutate(engine, actor, ref, revision, {
    kind: 'create',
    parentBlockId: null,
    beforeBlockId: null,
    blocks: [{ type: 'paragraph', markdown: 'one' }, { type: 'paragraph', markdown: 'two', children: [{ type: 'bulletListItem', markdown: 'kid' }] }, { type: 'paragraph', markdown: 'three' }],
  });
  return { engine, ref, doc: made.document, blocks: JSON.parse(made.document.documentJson).blocks as any[] };
}

const commit = (engine: ReturnType<typeof testEngine>, ref: string, ifRevision: string, editorBlocks: unknown, idempotencyKey = freshKey()) =>
  engine.documents.commitEditorBlocks(actor, ref, { idempotencyKey, ifRevision, editorBlocks });

test('a typed character becomes one version writing one block record, with a receipt and an operationRef', async () => {
  const { engine, ref, doc, blocks } = await withDoc();
  const edited = structuredClone(blocks);
  edited[2].content[0].text = 'three!';
  const storedBefore = (await engine.deps.storage.loadUpdates(ref, doc.version))!;
  const out = await commit(engine, ref, doc.revision, edited);
  assert.ok(out);
  assert.is(out.document.version, doc.version + 1);
  assert.match(out.receipt.operationRef, /^docop_[a-f0-9]{48}$/);
  assert.equal(out.receipt.affectedBlockIds, [blocks[2].id]);
  assert.equal(JSON.parse(out.document.documentJson).blocks, edited);
  const logged = (await engine.deps.storage.loadUpdates(ref, doc.version))!;
  assert.is(logged.length, storedBefore.length + 1);
  const { structs } = Y.decodeUpdate(logged[logged.length - 1]!.update);
  assert.is(structs.length, 1, 'the update sets one record');
  assert.match(JSON.stringify((structs[0] as Y.Item).content.getContent()), 'three!');
  await engine.close();
});

test('equal blocks make no version; a stale revision is PRECONDITION_FAILED; a replayed key returns the same receipt', async () => {
  const { engine, ref, doc, blocks } = await withDoc();
  assert.is(await commit(engine, ref, doc.revision, blocks), null);
  const edited = structuredClone(blocks);
  edited[0].content = [];
  const key = freshKey();
  const first = await commit(engine, ref, doc.revision, edited, key);
  const again = await commit(engine, ref, doc.revision, edited, key);
  assert.is(again!.receipt.operationRef, first!.receipt.operationRef);
  assert.is(again!.idempotency.idempotency, 'replayed');
  assert.is((await errorOf(commit(engine, ref, doc.revision, blocks))).code, 'PRECONDITION_FAILED');
  await engine.close();
});

test('moves, nesting, deletions and new blocks with editor ids; bad blocks are INVALID_REQUEST and change nothing', async () => {
  const { engine, ref, doc, blocks } = await withDoc();
  const [one, two, three] = blocks;
  const kid = two.children[0];
  const next = [
    { ...three, children: [{ ...one, children: [] }] },
    { ...kid, children: [] },
    { id: 'editor-new-1', type: 'quote', props: { backgroundColor: 'default', textColor: 'default' }, content: [{ type: 'text', text: 'quoted', styles: {} }], children: [] },
  ];
  const out = (await commit(engine, ref, doc.revision, next))!;
  assert.equal(JSON.parse(out.document.documentJson).blocks, next);
  assert.ok(out.receipt.affectedBlockIds.includes(two.id), 'the deleted block is affected');
  const bad = await errorOf(commit(engine, ref, out.document.revision, [{ id: 'x', type: 'paragraph', props: {}, content: 'nope', children: [] }]));
  assert.is(bad.code, 'INVALID_REQUEST');
  assert.ok(bad.fields[0]!.startsWith('editorBlocks.0'));
  assert.is((await engine.documents.head(actor, ref)).version, out.document.version);
  await engine.close();
});

test.run();
