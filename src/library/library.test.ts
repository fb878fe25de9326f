import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { alice, pageServerFor, bob, itemOf, key, libraryEngine, refusal, run, saveAndCapture } from '../../fixtures/pages/library-kit.ts';
import type { ReaderPage } from './reader-page.ts';
import { selectPassage } from './selection.ts';
import { manualClock } from '../clock.ts';

const server = pageServerFor(test);

async function readerPage(engine: ReturnType<typeof libraryEngine>, sourceId: string): Promise<ReaderPage> {
  const r = await run(engine, alice, { type: 'reader-page', sourceId });
  if (r.type !== 'reader-page') throw new Error('not a reader page');
  return r.page;
}

test('save-link stores the item at once as pending; the capture then makes it ready', async () => {
  const engine = libraryEngine(server());
  const saved = await itemOf(engine, alice, { type: 'save-link', url: `${server().origin}/slow.html?ms=300`, idempotencyKey: key() });
  assert.is(saved.created, true);
  assert.is(saved.kind, 'source');
  assert.is(saved.capture?.state, 'pending');
  assert.is(saved.revision, 1);
  const listed = await run(engine, alice, { type: 'list' });
  assert.is(listed.type === 'list' && listed.items[0]?.capture?.state, 'pending');
  await engine.library.idle();
  const got = await itemOf(engine, alice, { type: 'get', itemId: saved.itemId });
  assert.is(got.capture?.state, 'ready');
  assert.is(got.capture?.format, 'html');
  assert.is(got.title, 'Slow');
  assert.is(got.revision, 2);
  await engine.close();
});

test('an HTML article is captured as readable paragraphs with selection-ready identifiers', async () => {
  const engine = libraryEngine(server());
  const item = await saveAndCapture(engine, alice, `${server().origin}/article.html`);
  assert.is(item.capture?.state, 'ready');
  assert.is(item.title, 'Why rivers meander | Field Journal');
  const page = await readerPage(engine, item.itemId);
  assert.ok(page.capture);
  assert.is(page.capture!.captureId, item.capture!.captureId);
  assert.is(page.capture!.representationId, item.capture!.representationId);
  assert.is(page.capture!.byline, 'By Ada Brook');
  const texts = page.capture!.blocks.map((b) => b.text);
  assert.ok(texts[0]!.startsWith('A river that runs across a flat plain'));
  assert.ok(texts.some((t) => t.includes('oxbow lake')));
  assert.not.ok(texts.some((t) => t.includes('Subscribe') || t.includes('Archive')), 'navigation and asides are left out');
  for (const b of page.capture!.blocks) assert.is(b.length, Array.from(b.text).length);
  await engine.close();
});

test('a PDF is captured with its text', async () => {
  const engine = libraryEngine(server());
  const item = await saveAndCapture(engine, alice, `${server().origin}/tide-pools.pdf`);
  assert.is(item.capture?.state, 'ready');
  assert.is(item.capture?.format, 'pdf');
  const page = await readerPage(engine, item.itemId);
  assert.match(page.capture!.blocks.map((b) => b.text).join(' '), /Anemones close when the tide goes out\./);
  await engine.close();
});

test('a retry with the same key and command returns the same item; another command on the key conflicts', async () => {
  const engine = libraryEngine(server());
  const k = key();
  const command = { type: 'save-link', url: `${server().origin}/article.html`, idempotencyKey: k };
  const [a, b] = await Promise.all([itemOf(engine, alice, command), itemOf(engine, alice, command)]);
  const c = await itemOf(engine, alice, command);
  assert.is(a.itemId, b.itemId);
  assert.is(a.itemId, c.itemId);
  assert.equal([a.created, b.created, c.created].filter(Boolean).length, 1);
  const conflict = await refusal(run(engine, alice, { ...command, url: `${server().origin}/tide-pools.pdf` }));
  assert.is(conflict.code, 'IDEMPOTENCY_CONFLICT');
  await engine.library.idle();
  const listed = await run(engine, alice, { type: 'list' });
  assert.is(listed.type === 'list' && listed.items.length, 1);
  await engine.close();
});

test('items are private to their account', async () => {
  const engine = libraryEngine(server());
  const item = await saveAndCapture(engine, alice, `${server().origin}/article.html`);
  assert.is((await refusal(run(engine, bob, { type: 'get', itemId: item.itemId }))).code, 'NOT_FOUND');
  assert.is((await refusal(run(engine, bob, { type: 'reader-page', sourceId: item.itemId }))).code, 'NOT_FOUND');
  assert.is((await refusal(run(engine, bob, { type: 'create-note', sourceId: item.itemId, markdown: 'mine now', idempotencyKey: key() }))).code, 'NOT_FOUND');
  const listed = await run(engine, bob, { type: 'list' });
  assert.equal(listed.type === 'list' && listed.items, []);
  // The same key in another account is another intent, not a conflict.
  const k = key();
  const mine = await itemOf(engine, alice, { type: 'create-note', sourceId: item.itemId, markdown: 'a', idempotencyKey: k });
  const theirs = await itemOf(engine, bob, { type: 'save-link', url: `${server().origin}/article.html`, idempotencyKey: k });
  assert.is.not(mine.itemId, theirs.itemId);
  await engine.library.idle();
  await engine.close();
});

test('highlights that match are stored; a miss by one character refuses the whole highlight and stores nothing', async () => {
  const engine = libraryEngine(server());
  const source = await saveAndCapture(engine, alice, `${server().origin}/article.html`);
  const page = await readerPage(engine, source.itemId);
  const cap = { captureId: page.capture!.captureId, representationId: page.capture!.representationId, blocks: page.capture!.blocks };
  const first = selectPassage(cap, 'p2', 'oxbow lake')!;
  const second = selectPassage(cap, 'p5', 'Naïve straight lines are rare in nature')!;
  assert.ok(first && second);
  const made = await itemOf(engine, alice, { type: 'highlight', sourceId: source.itemId, selections: [first, second], idempotencyKey: key() });
  assert.is(made.kind, 'highlight');
  assert.is(made.sourceId, source.itemId);
  assert.equal(made.selections, [first, second]);

  const before = await run(engine, alice, { type: 'list' });
  const misses = [
    { ...second, exact: 'Naive straight lines are rare in nature' },
    { ...second, end: second.end - 1 },
    { ...second, prefix: `x${second.prefix.slice(1)}` },
    { ...second, suffix: second.suffix.slice(0, -1) + 'X' },
    { ...second, blockId: 'p99' },
    { ...second, captureId: `lcap_${'0'.repeat(24)}` },
  ];
  const fields = ['exact', 'exact', 'prefix', 'suffix', 'blockId', 'captureId'];
  for (let i = 0; i < misses.length; i++) {
    const r = await refusal(run(engine, alice, { type: 'highlight', sourceId: source.itemId, selections: [first, first, misses[i]], idempotencyKey: key() }));
    assert.is(r.code, 'INVALID_REQUEST');
    assert.equal(r.fields, [`selections.2.${fields[i]}`]);
  }
  const after = await run(engine, alice, { type: 'list' });
  assert.equal(after, before);
  await engine.close();
});

test('a highlight needs captured text; a pending or failed capture is a conflict', async () => {
  const engine = libraryEngine(server());
  const failed = await saveAndCapture(engine, alice, `${server().origin}/status/404`);
  const sel = { captureId: `lcap_${'1'.repeat(24)}`, representationId: `lrep_${'1'.repeat(24)}`, blockId: 'p1', start: 0, end: 1, exact: 'S', prefix: '', suffix: '' };
  const r = await refusal(run(engine, alice, { type: 'highlight', sourceId: failed.itemId, selections: [sel], idempotencyKey: key() }));
  assert.is(r.code, 'CONFLICT');
  assert.equal(r.fields, ['sourceId']);
  await engine.close();
});

test('notes attach to sources only', async () => {
  const engine = libraryEngine(server());
  const source = await saveAndCapture(engine, alice, `${server().origin}/article.html`);
  const note = await itemOf(engine, alice, { type: 'create-note', sourceId: source.itemId, markdown: 'Compare with **braided** rivers.', idempotencyKey: key() });
  assert.is(note.kind, 'note');
  assert.is(note.markdown, 'Compare with **braided** rivers.');
  assert.is(note.sourceId, source.itemId);
  const onNote = await refusal(run(engine, alice, { type: 'create-note', sourceId: note.itemId, markdown: 'x', idempotencyKey: key() }));
  assert.equal([onNote.code, onNote.fields], ['INVALID_REQUEST', ['sourceId']]);
  assert.is((await refusal(run(engine, alice, { type: 'create-note', sourceId: `litm_${'9'.repeat(24)}`, markdown: 'x', idempotencyKey: key() }))).code, 'NOT_FOUND');
  await engine.close();
});

test('set-reading-state needs the current revision; a stale one leaves the item unchanged', async () => {
  const engine = libraryEngine(server());
  const source = await saveAndCapture(engine, alice, `${server().origin}/article.html`);
  const k = key();
  const command = { type: 'set-reading-state', itemId: source.itemId, expectedRevision: source.revision, read: true, archived: true, idempotencyKey: k };
  const updated = await itemOf(engine, alice, command);
  assert.equal([updated.read, updated.archived, updated.revision, updated.created], [true, true, source.revision + 1, true]);
  const replay = await itemOf(engine, alice, command);
  assert.equal([replay.revision, replay.created], [updated.revision, false]);
  const stale = await refusal(run(engine, alice, { ...command, read: false, idempotencyKey: key() }));
  assert.equal([stale.code, stale.fields], ['PRECONDITION_FAILED', ['expectedRevision']]);
  const now = await itemOf(engine, alice, { type: 'get', itemId: source.itemId });
  assert.equal([now.read, now.archived, now.revision], [true, true, updated.revision]);
  await engine.close();
});

test('list pages newest first with a cursor bound to the credential', async () => {
  const clock = manualClock();
  const engine = libraryEngine(server(), { clock });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    clock.advance(1000);
    const source = await saveAndCapture(engine, alice, `${server().origin}/article-${i}.html`);
    clock.advance(1000);
    ids.push((await itemOf(engine, alice, { type: 'create-note', sourceId: source.itemId, markdown: `n${i}`, idempotencyKey: key() })).itemId);
  }
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await run(engine, alice, cursor ? { type: 'list', limit: 3, cursor } : { type: 'list', limit: 3 });
    if (page.type !== 'list') throw new Error('not a list');
    seen.push(...page.items.map((i) => i.itemId));
    cursor = page.nextCursor ?? undefined;
    if (cursor) {
      const other = await refusal(run(engine, { ...alice, credentialRef: 'scred_0000000000000000000000ff' }, { type: 'list', cursor }));
      assert.equal([other.code, other.fields], ['INVALID_REQUEST', ['cursor']]);
    }
  } while (cursor);
  assert.is(seen.length, 10);
  assert.is(new Set(seen).size, 10);
  assert.is(seen[0], ids[4], 'the newest item comes first');
  assert.is((await refusal(run(engine, alice, { type: 'list', cursor: 'garbage' }))).code, 'INVALID_REQUEST');
  await engine.close();
});

test('prepare-import is refused for every ordinary credential, naming the operator migration plan', async () => {
  const engine = libraryEngine(server());
  const r = await refusal(run(engine, alice, { type: 'prepare-import', idempotencyKey: key() }));
  assert.is(r.code, 'FORBIDDEN');
  assert.match(r.message, /operator migration plan/);
  await engine.close();
});

test.run();
