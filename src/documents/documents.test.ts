import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accountActor, errorOf, freshKey, mutate, newDocument, richIds, testEngine } from '../../fixtures/engine-kit.ts';
import { sha256Hex } from '../hash.ts';
import { Patterns } from '../ids.ts';

/** The fields of a create at the end of the root. */
const atRoot = { kind: 'create', beforeBlockId: null, parentBlockId: null } as const;

const alice = accountActor('alice');
const bob = accountActor('bob', 'scred_000000000000000000000002');

const para = (markdown: string, children?: unknown[]) => ({ type: 'paragraph', markdown, ...(children ? { children } : {}) });

test('create answers version 1 with an empty canonical document whose hash a client can recompute', async () => {
  const engine = testEngine();
  const { out } = await newDocument(engine, alice, 'First');
  const d = out.document;
  assert.is(d.version, 1);
  assert.is(d.title, 'First');
  assert.match(d.documentRef, Patterns.documentRef);
  assert.match(d.spaceRef, Patterns.spaceRef);
  assert.is(d.documentJson, '{"type":"blocks","blocks":[]}');
  assert.is(d.contentSha256, sha256Hex(JSON.stringify(JSON.parse(d.documentJson))));
  assert.is(out.idempotency.idempotency, 'created');
  assert.match(out.idempotency.receiptRef, Patterns.receiptRef);
});

test('create replays an exact repeat and refuses the key with another body', async () => {
  const engine = testEngine();
  const key = freshKey();
  const a = await engine.documents.create(alice, { idempotencyKey: key, body: { v: 1, title: 'T' } });
  const b = await engine.documents.create(alice, { idempotencyKey: key, body: { v: 1, title: 'T' } });
  assert.is(b.idempotency.idempotency, 'replayed');
  assert.is(b.document.documentRef, a.document.documentRef);
  assert.is(b.idempotency.receiptRef, a.idempotency.receiptRef);
  const e = await errorOf(engine.documents.create(alice, { idempotencyKey: key, body: { v: 1, title: 'Other' } }));
  assert.is(e.code, 'IDEMPOTENCY_CONFLICT');
  const page = await engine.documents.list(alice, {});
  assert.is(page.items.length, 1);
});

test('idempotency keys are scoped to the account', async () => {
  const engine = testEngine();
  const key = freshKey();
  const a = await engine.documents.create(alice, { idempotencyKey: key, body: { v: 1, title: 'T' } });
  const b = await engine.documents.create(bob, { idempotencyKey: key, body: { v: 1, title: 'T' } });
  assert.is(b.idempotency.idempotency, 'created');
  assert.is.not(a.document.documentRef, b.document.documentRef);
});

test('create validates key, body and boundary', async () => {
  const engine = testEngine();
  assert.is((await errorOf(engine.documents.create(alice, { idempotencyKey: undefined, body: { v: 1, title: 'x' } }))).code, 'IDEMPOTENCY_REQUIRED');
  assert.is((await errorOf(engine.documents.create(alice, { idempotencyKey: 'short', body: { v: 1, title: 'x' } }))).code, 'INVALID_REQUEST');
  const extra = await errorOf(engine.documents.create(alice, { idempotencyKey: freshKey(), body: { v: 1, title: 'x', more: 1 } }));
  assert.is(extra.code, 'INVALID_REQUEST');
  assert.equal(extra.fields, ['more']);
  assert.equal((await errorOf(engine.documents.create(alice, { idempotencyKey: freshKey(), body: { v: 1, title: '' } }))).fields, ['title']);
  await engine.documents.create(alice, { idempotencyKey: freshKey(), body: { v: 1, title: 'x'.repeat(240) } });
  assert.equal((await errorOf(engine.documents.create(alice, { idempotencyKey: freshKey(), body: { v: 1, title: 'x'.repeat(241) } }))).fields, ['title']);
  assert.equal((await errorOf(engine.documents.create(alice, { idempotencyKey: freshKey(), body: [] }))).code, 'INVALID_REQUEST');
  const { ref } = await newDocument(engine, alice);
  const bound = { ...alice, documentRef: ref };
  assert.is((await errorOf(engine.documents.create(bound, { idempotencyKey: freshKey(), body: { v: 1, title: 'x' } }))).code, 'FORBIDDEN');
});

test('create mutation nests children, assigns ids in document order and raises the version by one', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const out = await mutate(engine, alice, ref, revision, {
    ...atRoot,
    blocks: [
      { type: 'heading', level: 2, markdown: 'Intro' },
      { type: 'bulletListItem', markdown: 'one', children: [{ type: 'bulletListItem', markdown: 'one.a' }] },
      { type: 'codeBlock', code: 'let x = 1', language: 'ts' },
      { type: 'table', rows: [['a', 'b'], ['1', '2']] },
    ],
  });
  assert.is(out.receipt.baseVersion, 1);
  assert.is(out.receipt.resultingVersion, 2);
  assert.is(out.document.version, 2);
  assert.is.not(out.document.revision, revision);
  assert.is(out.receipt.affectedBlockIds.length, 5);
  assert.equal(richIds(out.document.documentJson), out.receipt.affectedBlockIds);
  assert.is(out.receipt.contentSha256, sha256Hex(out.document.documentJson));
  const read = await engine.documents.read(alice, ref, 'blocks');
  assert.ok(read.format === 'blocks');
  if (read.format !== 'blocks') return;
  const nested = read.blocks[2]!;
  assert.is(nested.parentBlockId, read.blocks[1]!.id);
  assert.is(nested.index, 0);
  assert.is(read.blocks[3]!.index, 2);
});

test('create before a sibling and under a parent; a beforeBlockId of another parent conflicts', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const first = await mutate(engine, alice, ref, revision, { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: [para('a'), para('c')] });
  const [a, c] = first.receipt.affectedBlockIds as [string, string];
  const second = await mutate(engine, alice, ref, first.document.revision, { kind: 'create', beforeBlockId: c, parentBlockId: null, blocks: [para('b')] });
  const b = second.receipt.affectedBlockIds[0]!;
  assert.equal(richIds(second.document.documentJson), [a, b, c]);
  const third = await mutate(engine, alice, ref, second.document.revision, { kind: 'create', beforeBlockId: null, parentBlockId: b, blocks: [para('b1')] });
  const e = await errorOf(mutate(engine, alice, ref, third.document.revision, { kind: 'create', beforeBlockId: a, parentBlockId: b, blocks: [para('x')] }));
  assert.is(e.code, 'CONFLICT');
  assert.equal(e.fields, ['mutation.beforeBlockId']);
  const unknown = await errorOf(mutate(engine, alice, ref, third.document.revision, { kind: 'create', beforeBlockId: null, parentBlockId: 'nope', blocks: [para('x')] }));
  assert.equal(unknown.fields, ['mutation.parentBlockId']);
  assert.is((await engine.documents.head(alice, ref)).version, 4);
});

test('edit replaces type and content and keeps id and children; children in an edit are refused', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const made = await mutate(engine, alice, ref, revision, { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: [para('p', [para('kid')])] });
  const [p, kid] = made.receipt.affectedBlockIds as [string, string];
  const edited = await mutate(engine, alice, ref, made.document.revision, { kind: 'edit', blockId: p, block: { type: 'heading', level: 3, markdown: 'Now a **heading**' } });
  assert.equal(edited.receipt.affectedBlockIds, [p]);
  const doc = JSON.parse(edited.document.documentJson) as { blocks: { id: string; type: string; props: { level: number }; children: { id: string }[] }[] };
  assert.is(doc.blocks[0]!.id, p);
  assert.is(doc.blocks[0]!.type, 'heading');
  assert.is(doc.blocks[0]!.props.level, 3);
  assert.is(doc.blocks[0]!.children[0]!.id, kid);
  const e = await errorOf(mutate(engine, alice, ref, edited.document.revision, { kind: 'edit', blockId: p, block: para('x', [para('y')]) }));
  assert.is(e.code, 'INVALID_REQUEST');
  assert.equal(e.fields, ['mutation.block.children']);
  const missing = await errorOf(mutate(engine, alice, ref, edited.document.revision, { kind: 'edit', blockId: 'ghost', block: para('x') }));
  assert.is(missing.code, 'CONFLICT');
});

test('block fields must fit the type and markdown must be exactly one inline block', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const create = (blocks: unknown[]) => mutate(engine, alice, ref, revision, { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks });
  assert.equal((await errorOf(create([{ type: 'paragraph', markdown: '# title' }]))).fields, ['mutation.blocks.0.markdown']);
  assert.equal((await errorOf(create([para('ok'), { type: 'paragraph', markdown: 'one\n\ntwo' }]))).fields, ['mutation.blocks.1.markdown']);
  assert.equal((await errorOf(create([{ type: 'paragraph', level: 2 }]))).fields, ['mutation.blocks.0.level']);
  assert.equal((await errorOf(create([{ type: 'table' }]))).fields, ['mutation.blocks.0.rows']);
  assert.equal((await errorOf(create([{ type: 'table', rows: [[]] }]))).fields, ['mutation.blocks.0.rows.0']);
  assert.equal((await errorOf(create([{ type: 'codeBlock', markdown: 'x' }]))).fields, ['mutation.blocks.0.markdown']);
  assert.equal((await errorOf(create([{ type: 'heading', level: 4 }]))).fields, ['mutation.blocks.0.level']);
  assert.equal((await errorOf(create([{ type: 'paragraph', markdown: 'x'.repeat(41_001) }]))).fields, ['mutation.blocks.0.markdown']);
  assert.equal((await errorOf(create([para('a', [para('b', [{ type: 'quote', markdown: '- list' }])])]))).fields, ['mutation.blocks.0.children.0.children.0.markdown']);
  assert.is((await errorOf(create(Array.from({ length: 51 }, () => para('x'))))).code, 'INVALID_REQUEST');
  assert.is((await engine.documents.head(alice, ref)).version, 1);
});

test('move keeps order and identity, checks fences, and refuses moving under a descendant', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const made = await mutate(engine, alice, ref, revision, {
    ...atRoot,
    blocks: [para('a'), para('b'), para('c'), para('d', [para('d1')])],
  });
  const [a, b, c, d, d1] = made.receipt.affectedBlockIds as [string, string, string, string, string];
  let rev = made.document.revision;
  const wrongFence = await errorOf(
    mutate(engine, alice, ref, rev, { kind: 'move', blockIds: [b, c], beforeBlockId: null, newParentBlockId: d, oldSiblingBlockIds: [a] }),
  );
  assert.is(wrongFence.code, 'CONFLICT');
  assert.equal(wrongFence.fields, ['mutation.oldSiblingBlockIds']);
  const moved = await mutate(engine, alice, ref, rev, {
    kind: 'move',
    blockIds: [c, b],
    beforeBlockId: d1,
    newParentBlockId: d,
    oldParentBlockId: null,
    oldSiblingBlockIds: [d, a],
    newSiblingBlockIds: [d1],
  });
  assert.equal(richIds(moved.document.documentJson), [a, d, c, b, d1]);
  rev = moved.document.revision;
  const cycle = await errorOf(mutate(engine, alice, ref, rev, { kind: 'move', blockIds: [d], beforeBlockId: null, newParentBlockId: c }));
  assert.is(cycle.code, 'CONFLICT');
  const self = await errorOf(mutate(engine, alice, ref, rev, { kind: 'move', blockIds: [d], beforeBlockId: null, newParentBlockId: d }));
  assert.is(self.code, 'CONFLICT');
  const mixed = await errorOf(mutate(engine, alice, ref, rev, { kind: 'move', blockIds: [a, c], beforeBlockId: null, newParentBlockId: null }));
  assert.is(mixed.code, 'CONFLICT');
  const oldParent = await errorOf(mutate(engine, alice, ref, rev, { kind: 'move', blockIds: [c], beforeBlockId: null, newParentBlockId: null, oldParentBlockId: null }));
  assert.equal(oldParent.fields, ['mutation.oldParentBlockId']);
  const dup = await errorOf(mutate(engine, alice, ref, rev, { kind: 'move', blockIds: [c, c], beforeBlockId: null, newParentBlockId: null }));
  assert.is(dup.code, 'INVALID_REQUEST');
  const back = await mutate(engine, alice, ref, rev, { kind: 'move', blockIds: [b], beforeBlockId: a, newParentBlockId: null, newSiblingBlockIds: [a] });
  assert.equal(richIds(back.document.documentJson), [b, a, d, c, d1]);
});

test('delete removes whole subtrees and checks its fences', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const made = await mutate(engine, alice, ref, revision, {
    ...atRoot,
    blocks: [para('a'), para('b', [para('b1'), para('b2')]), para('c')],
  });
  const [a, b, , , c] = made.receipt.affectedBlockIds as [string, string, string, string, string];
  const rev = made.document.revision;
  const bad = await errorOf(mutate(engine, alice, ref, rev, { kind: 'delete', blockIds: [b], siblingBlockIds: [a] }));
  assert.equal(bad.fields, ['mutation.siblingBlockIds']);
  const badParent = await errorOf(mutate(engine, alice, ref, rev, { kind: 'delete', blockIds: [b], parentBlockIds: [a] }));
  assert.equal(badParent.fields, ['mutation.parentBlockIds']);
  const out = await mutate(engine, alice, ref, rev, { kind: 'delete', blockIds: [b], siblingBlockIds: [c, a], parentBlockIds: [] });
  assert.equal(richIds(out.document.documentJson), [a, c]);
  assert.equal(out.receipt.affectedBlockIds, [b]);
  const gone = await errorOf(mutate(engine, alice, ref, out.document.revision, { kind: 'delete', blockIds: [b] }));
  assert.is(gone.code, 'CONFLICT');
});

test('revision preconditions: missing is 428, stale is 412, malformed is 400, and none changes state', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const first = await mutate(engine, alice, ref, revision, { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: [para('a')] });
  const body = { v: 1, intent: 'x', mutation: { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: [para('b')] } };
  const missing = await errorOf(engine.documents.mutate(alice, ref, { idempotencyKey: freshKey(), ifRevision: undefined, body }));
  assert.is(missing.code, 'PRECONDITION_REQUIRED');
  const stale = await errorOf(engine.documents.mutate(alice, ref, { idempotencyKey: freshKey(), ifRevision: revision, body }));
  assert.is(stale.code, 'PRECONDITION_FAILED');
  const junk = await errorOf(engine.documents.mutate(alice, ref, { idempotencyKey: freshKey(), ifRevision: 'W/"nope"', body }));
  assert.is(junk.code, 'INVALID_REQUEST');
  const noKey = await errorOf(engine.documents.mutate(alice, ref, { idempotencyKey: undefined, ifRevision: revision, body }));
  assert.is(noKey.code, 'IDEMPOTENCY_REQUIRED');
  const head = await engine.documents.head(alice, ref);
  assert.is(head.version, 2);
  assert.is(head.revision, first.document.revision);
});

test('an exact retry replays even after the document moved on; another intent or revision under the key conflicts', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const key = freshKey();
  const m = { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: [para('a')] };
  const first = await mutate(engine, alice, ref, revision, m, key);
  await mutate(engine, alice, ref, first.document.revision, { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: [para('b')] });
  const again = await mutate(engine, alice, ref, revision, m, key);
  assert.is(again.idempotency.idempotency, 'replayed');
  assert.equal(again.receipt, first.receipt);
  assert.is(again.idempotency.receiptRef, first.idempotency.receiptRef);
  const otherIntent = await errorOf(
    engine.documents.mutate(alice, ref, { idempotencyKey: key, ifRevision: revision, body: { v: 1, intent: 'different', mutation: m } }),
  );
  assert.is(otherIntent.code, 'IDEMPOTENCY_CONFLICT');
  const otherRevision = await errorOf(mutate(engine, alice, ref, first.document.revision, m, key));
  assert.is(otherRevision.code, 'IDEMPOTENCY_CONFLICT');
  assert.is((await engine.documents.head(alice, ref)).version, 3);
});

test('a duplicate arriving while the first is applied waits and replays it', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const key = freshKey();
  const m = { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: [para('a')] };
  const results = await Promise.all([1, 2, 3].map(() => mutate(engine, alice, ref, revision, m, key)));
  assert.equal(results.map((r) => r.idempotency.idempotency).sort(), ['created', 'replayed', 'replayed']);
  assert.is((await engine.documents.head(alice, ref)).version, 2);
  const racers = await Promise.allSettled([1, 2].map(() => mutate(engine, alice, ref, results[0]!.document.revision, m)));
  assert.equal(racers.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
});

test('documents outside the boundary are NOT_FOUND', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  const other = await newDocument(engine, alice, 'Other');
  assert.is((await errorOf(engine.documents.read(bob, ref))).code, 'NOT_FOUND');
  assert.is((await errorOf(mutate(engine, bob, ref, revision, { kind: 'delete', blockIds: ['x'] }))).code, 'NOT_FOUND');
  const bound = { ...alice, documentRef: other.ref };
  assert.is((await errorOf(engine.documents.read(bound, ref))).code, 'NOT_FOUND');
  assert.is((await errorOf(engine.documents.head(bound, ref))).code, 'NOT_FOUND');
  assert.is((await errorOf(engine.documents.read(alice, 'sdoc_nothex'))).code, 'NOT_FOUND');
  const listed = await engine.documents.list(bound, {});
  assert.equal(listed.items.map((i) => i.documentRef), [other.ref]);
  assert.is((await errorOf(engine.documents.read(alice, ref, 'html'))).code, 'INVALID_REQUEST');
});

test('list is newest first, paginated by an opaque cursor bound to the list and credential', async () => {
  const engine = testEngine();
  const clock = engine.deps.clock as unknown as { advance(ms: number): void };
  const refs: string[] = [];
  for (let i = 0; i < 5; i++) {
    clock.advance(1000);
    refs.push((await newDocument(engine, alice, `D${i}`)).ref);
  }
  const p1 = await engine.documents.list(alice, { limit: 2 });
  assert.equal(p1.items.map((d) => d.documentRef), [refs[4], refs[3]]);
  assert.ok(p1.nextCursor);
  const p2 = await engine.documents.list(alice, { limit: 2, cursor: p1.nextCursor! });
  assert.equal(p2.items.map((d) => d.documentRef), [refs[2], refs[1]]);
  const p3 = await engine.documents.list(alice, { limit: 2, cursor: p2.nextCursor! });
  assert.equal(p3.items.map((d) => d.documentRef), [refs[0]]);
  assert.is(p3.nextCursor, null);
  const otherCred = { ...alice, credentialRef: 'scred_000000000000000000000009' };
  assert.is((await errorOf(engine.documents.list(otherCred, { cursor: p1.nextCursor! }))).code, 'INVALID_REQUEST');
  assert.is((await errorOf(engine.documents.list(alice, { cursor: 'garbage!' }))).code, 'INVALID_REQUEST');
  for (const bad of [0, 51, -1, Number.NaN, 1.5]) assert.is((await errorOf(engine.documents.list(alice, { limit: bad }))).code, 'INVALID_REQUEST');
  assert.is((await engine.documents.list(alice, { limit: 50 })).items.length, 5);
  assert.is((await engine.documents.list(bob, {})).items.length, 0);
});

test('the outline is bounded at 10,000 blocks', async () => {
  const engine = testEngine();
  const { ref } = await newDocument(engine, alice);
  let rev = (await engine.documents.head(alice, ref)).revision;
  const batch = Array.from({ length: 50 }, (_, i) => para(`p${i}`, Array.from({ length: 3 }, () => para('c'))));
  for (let i = 0; i < 50; i++) {
    const out = await mutate(engine, alice, ref, rev, { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: batch });
    rev = out.document.revision;
  }
  const e = await errorOf(mutate(engine, alice, ref, rev, { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: [para('one too many')] }));
  assert.is(e.code, 'CONFLICT');
  assert.is((await engine.documents.head(alice, ref)).version, 51);
});

test('a mutation that would push the document past the 2 MB response limit is refused and changes nothing', async () => {
  const engine = testEngine();
  const { ref } = await newDocument(engine, alice);
  let rev = (await engine.documents.head(alice, ref)).revision;
  const big = (n: number) => Array.from({ length: n }, () => para('x'.repeat(40_000)));
  const out = await mutate(engine, alice, ref, rev, { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: big(45) });
  rev = out.document.revision;
  const e = await errorOf(mutate(engine, alice, ref, rev, { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: big(10) }));
  assert.is(e.code, 'CONFLICT');
  assert.match(e.message, /2 MB/);
  const read = await engine.documents.read(alice, ref);
  assert.is(read.version, 2);
  if (read.format === 'rich-json') assert.is(richIds(read.document.documentJson).length, 45);
});

test('markdown and blocks representations agree with rich-json', async () => {
  const engine = testEngine();
  const { ref, revision } = await newDocument(engine, alice);
  await mutate(engine, alice, ref, revision, {
    ...atRoot,
    blocks: [
      { type: 'heading', level: 1, markdown: 'Title' },
      para('See [the spec](https://example.com/spec) and [local](/x).'),
      { type: 'checkListItem', checked: true, markdown: 'done' },
    ],
  });
  const md = await engine.documents.read(alice, ref, 'markdown');
  assert.ok(md.format === 'markdown');
  if (md.format !== 'markdown') return;
  assert.ok(md.markdown.includes('# Title'));
  assert.ok(md.markdown.includes('[the spec](https://example.com/spec)'));
  assert.is(md.lossCount, 0);
  const blocks = await engine.documents.read(alice, ref, 'blocks');
  const rich = await engine.documents.read(alice, ref, 'rich-json');
  if (blocks.format !== 'blocks' || rich.format !== 'rich-json') throw new Error('formats');
  assert.equal(blocks.blocks.map((b) => b.id), richIds(rich.document.documentJson));
  assert.equal(blocks.blocks[1]!.citations, ['https://example.com/spec']);
  assert.is(blocks.revision, rich.revision);
  assert.is(md.revision, rich.revision);
});

test('documents.watch: called after each committed version of its document only, not for a refused write, and no more once stopped', async () => {
  const engine = testEngine();
  const alice = accountActor('alice');
  const a = await newDocument(engine, alice);
  const b = await newDocument(engine, alice);
  let calls = 0;
  const stop = engine.documents.watch(a.ref, () => calls++);
  const para = (markdown: string) => ({ kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown }] });
  const v2 = (await mutate(engine, alice, a.ref, a.revision, para('one'))).document.revision;
  assert.is(calls, 1, 'a version of the watched document');
  await mutate(engine, alice, b.ref, b.revision, para('elsewhere'));
  assert.is(calls, 1, 'another document: not called');
  assert.is((await errorOf(mutate(engine, alice, a.ref, a.revision, para('stale')))).code, 'PRECONDITION_FAILED');
  assert.is(calls, 1, 'a refused write: not called');
  stop();
  stop();
  await mutate(engine, alice, a.ref, v2, para('two'));
  assert.is(calls, 1, 'stopped');
  await engine.close();
});

test.run();
