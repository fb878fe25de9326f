/**
 * API scenarios (see ./suite.ts): Semantic block mutations: create, edit, move, delete, fences, receipts, replays and preconditions.
 * @module
 */
import * as assert from 'uvu/assert';
import { F, hex, newKey, sha256 } from './client.ts';
import { around, childIds, find, ids, parentOf, textOf, type RichBlock } from './tree.ts';
import { show, expectEnvelope, expectError, checkMutationResult } from './assert.ts';
import type { Kit, Suite } from './scenario-kit.ts';


/** Register these scenarios on the suite. */
export function mutationScenarios(s: Suite, k: Kit): void {
  const { c, createDoc, read, snapshot, mutate, add, p } = k;

  // ---- mutations ----------------------------------------------------------------------------

  s('create mutation: server-assigned ids, nested children, affectedBlockIds in document order, receipts', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const before = await snapshot(token, doc.documentRef);
    const initial = ids(before.blocks);
    const r = await mutate(
      token,
      doc.documentRef,
      {
        kind: 'create',
        parentBlockId: null,
        beforeBlockId: null,
        blocks: [{ type: 'heading', level: 1, markdown: 'Heading' }, p('Parent', [p('Child one'), p('Child two')]), p('Last')],
      },
      { revision: before.rev },
    );
    const data = checkMutationResult(r, { documentRef: doc.documentRef, baseVersion: before.version, idempotency: 'created' });
    const affected: string[] = data.receipt.affectedBlockIds;
    assert.is(affected.length, 5, 'five blocks were created (children included)');
    assert.is(new Set(affected).size, 5, 'ids are distinct');
    const blocks: RichBlock[] = data.document.document.blocks;
    assert.equal(ids(blocks), [...initial, ...affected], 'appended at the root end; affectedBlockIds in document order');
    const [hd, parent, c1, c2, last] = affected;
    assert.equal(childIds(blocks, null).slice(-3), [hd, parent, last]);
    assert.equal(childIds(blocks, parent!), [c1, c2]);
    assert.is(textOf(find(blocks, c2!)!.content), 'Child two');
    assert.is(data.document.contentSha256, sha256(JSON.stringify(data.document.document)));

    const after = await snapshot(token, doc.documentRef);
    assert.is(after.version, data.receipt.resultingVersion, 'reads see the resulting version');
    assert.is.not(after.rev, before.rev, 'the revision changed');
    assert.equal(after.doc, data.document, 'the mutation result document is what a read returns');

    // Insert before a given sibling, at the root and under a parent.
    const [x] = await add(token, doc.documentRef, [p('Before last')], null, last!);
    const [y] = await add(token, doc.documentRef, [p('Between children')], parent!, c2!);
    const now = (await snapshot(token, doc.documentRef)).blocks;
    assert.equal(childIds(now, null).slice(-2), [x, last]);
    assert.equal(childIds(now, parent!), [c1, y, c2]);
  });

  s('create mutation whose beforeBlockId is not a child of parentBlockId is 409 CONFLICT and changes nothing', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const [a, , b] = await add(token, doc.documentRef, [p('A', [p('A1')]), p('B')]);
    const snap = await snapshot(token, doc.documentRef);
    const r = await mutate(token, doc.documentRef, { kind: 'create', parentBlockId: a, beforeBlockId: b, blocks: [p('X')] }, { revision: snap.rev });
    expectError(r, 409, 'CONFLICT');
    const r2 = await mutate(token, doc.documentRef, { kind: 'create', parentBlockId: 'no-such-block', beforeBlockId: null, blocks: [p('X')] }, { revision: snap.rev });
    expectError(r2, 409, 'CONFLICT');
    const after = await snapshot(token, doc.documentRef);
    assert.is(after.rev, snap.rev);
    assert.is(after.version, snap.version);
  });

  s('edit mutation replaces the block own fields (type included) and keeps its id and children', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const [parent, c1, c2] = await add(token, doc.documentRef, [p('Original', [p('C1'), p('C2')])]);
    const snap = await snapshot(token, doc.documentRef);
    const r = await mutate(token, doc.documentRef, { kind: 'edit', blockId: parent, block: { type: 'heading', level: 2, markdown: 'Now a *heading*' } }, { revision: snap.rev });
    const data = checkMutationResult(r, { documentRef: doc.documentRef, baseVersion: snap.version });
    assert.ok(data.receipt.affectedBlockIds.includes(parent), 'affectedBlockIds names the edited block');
    const blocks: RichBlock[] = data.document.document.blocks;
    const edited = find(blocks, parent!)!;
    assert.ok(edited, 'the id is kept');
    assert.is(edited.type, 'heading');
    assert.is(edited.props.level, 2);
    assert.is(textOf(edited.content), 'Now a heading');
    assert.equal(childIds(blocks, parent!), [c1, c2], 'children are kept');
    assert.is(ids(blocks).length, ids(snap.blocks).length);
  });

  s('edit mutation with children is 400 INVALID_REQUEST; edit of an unknown block is 409 CONFLICT', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const [a] = await add(token, doc.documentRef, [p('A')]);
    const snap = await snapshot(token, doc.documentRef);
    const bad = await mutate(token, doc.documentRef, { kind: 'edit', blockId: a, block: p('A', [p('new child')]) }, { revision: snap.rev });
    expectError(bad, 400, 'INVALID_REQUEST');
    const unknown = await mutate(token, doc.documentRef, { kind: 'edit', blockId: 'missing-block', block: p('x') }, { revision: snap.rev });
    expectError(unknown, 409, 'CONFLICT');
    assert.is((await snapshot(token, doc.documentRef)).rev, snap.rev);
  });

  s('move mutation keeps order and identity, and can nest a block', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const initial = childIds((await snapshot(token, doc.documentRef)).blocks, null);
    const [x1, x2, x3, x4] = await add(token, doc.documentRef, [p('x1'), p('x2'), p('x3'), p('x4')]);
    let snap = await snapshot(token, doc.documentRef);
    const r = await mutate(token, doc.documentRef, { kind: 'move', blockIds: [x3, x4], beforeBlockId: x1, newParentBlockId: null }, { revision: snap.rev });
    const data = checkMutationResult(r, { documentRef: doc.documentRef, baseVersion: snap.version });
    assert.equal(childIds(data.document.document.blocks, null), [...initial, x3, x4, x1, x2]);
    assert.equal(new Set(data.receipt.affectedBlockIds), new Set(data.receipt.affectedBlockIds.filter((id: string) => [x1, x2, x3, x4].includes(id))));
    assert.ok(data.receipt.affectedBlockIds.includes(x3) && data.receipt.affectedBlockIds.includes(x4), 'moved ids are affected');
    assert.is(textOf(find(data.document.document.blocks, x3!)!.content), 'x3', 'a moved block keeps its id and content');

    snap = await snapshot(token, doc.documentRef);
    const nest = await mutate(token, doc.documentRef, { kind: 'move', blockIds: [x2], beforeBlockId: null, newParentBlockId: x3 }, { revision: snap.rev });
    const nested = checkMutationResult(nest, { documentRef: doc.documentRef });
    assert.equal(childIds(nested.document.document.blocks, x3!), [x2]);
    assert.is(parentOf(nested.document.document.blocks, x2!), x3);
  });

  s('move mutation that breaks the tree rules is 409 CONFLICT and changes nothing', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const [a, a1, b, cc] = await add(token, doc.documentRef, [p('a', [p('a1')]), p('b'), p('c')]);
    const snap = await snapshot(token, doc.documentRef);
    const cases: [string, object][] = [
      ['under itself', { kind: 'move', blockIds: [a], beforeBlockId: null, newParentBlockId: a }],
      ['under a descendant', { kind: 'move', blockIds: [a], beforeBlockId: null, newParentBlockId: a1 }],
      ['blocks of different parents', { kind: 'move', blockIds: [a1, b], beforeBlockId: null, newParentBlockId: cc }],
      ['before one of the moved blocks', { kind: 'move', blockIds: [b, cc], beforeBlockId: cc, newParentBlockId: null }],
      ['before a block of another parent', { kind: 'move', blockIds: [cc], beforeBlockId: a1, newParentBlockId: null }],
      ['an unknown block', { kind: 'move', blockIds: ['nope-block'], beforeBlockId: null, newParentBlockId: null }],
    ];
    for (const [label, mutation] of cases) {
      const r = await mutate(token, doc.documentRef, mutation, { revision: snap.rev });
      assert.is(r.status, 409, `${label}: ${show(r)}`);
      expectError(r, 409, 'CONFLICT');
    }
    const after = await snapshot(token, doc.documentRef);
    assert.is(after.rev, snap.rev, 'nothing changed');
    assert.equal(after.blocks, snap.blocks);
  });

  s('move fences are checked when supplied (as sets) and a mismatch is 409 CONFLICT naming the fence', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const [x1, x2, x3, x4, x5] = await add(token, doc.documentRef, [p('x1'), p('x2'), p('x3'), p('x4'), p('x5')]);
    const snap = await snapshot(token, doc.documentRef);
    const oldSiblings = around(snap.blocks, null, [x4!]);
    assert.equal(oldSiblings, [x3, x5]);
    const base = { kind: 'move', blockIds: [x4], beforeBlockId: x2, newParentBlockId: null };
    const wrong: [string, object][] = [
      ['oldParentBlockId', { ...base, oldParentBlockId: x1 }],
      ['oldSiblingBlockIds', { ...base, oldSiblingBlockIds: [x1] }],
      ['newSiblingBlockIds', { ...base, newSiblingBlockIds: [x3] }],
    ];
    for (const [fence, mutation] of wrong) {
      const r = await mutate(token, doc.documentRef, mutation, { revision: snap.rev });
      const error = expectError(r, 409, 'CONFLICT');
      assert.ok(
        Array.isArray(error.fieldErrors) && error.fieldErrors.some((fe: any) => String(fe.field).split('.').pop() === fence),
        `a fieldError names ${fence}: ${JSON.stringify(error.fieldErrors)}`,
      );
    }
    assert.is((await snapshot(token, doc.documentRef)).rev, snap.rev, 'fence mismatches change nothing');
    // Correct fences, siblings given in reverse order (they are compared as sets).
    const ok = await mutate(
      token,
      doc.documentRef,
      { ...base, oldParentBlockId: null, oldSiblingBlockIds: [x5, x3], newSiblingBlockIds: [x2, x1] },
      { revision: snap.rev },
    );
    const data = checkMutationResult(ok, { documentRef: doc.documentRef });
    assert.equal(childIds(data.document.document.blocks, null).slice(-5), [x1, x4, x2, x3, x5]);
  });

  s('fences derived across parents: moving between nested parents and deleting runs with every fence supplied', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const [a, a1, a2, a3, b, b1] = await add(token, doc.documentRef, [p('a', [p('a1'), p('a2'), p('a3')]), p('b', [p('b1')])]);
    let snap = await snapshot(token, doc.documentRef);
    // a2 to the end of b: old parent a, old siblings {a1, a3}, new siblings {b1} (nothing after the end).
    let r = await mutate(
      token,
      doc.documentRef,
      { kind: 'move', blockIds: [a2], beforeBlockId: null, newParentBlockId: b, oldParentBlockId: a, oldSiblingBlockIds: [a3, a1], newSiblingBlockIds: [b1] },
      { revision: snap.rev },
    );
    let data = checkMutationResult(r, { documentRef: doc.documentRef });
    assert.equal(childIds(data.document.document.blocks, a!), [a1, a3]);
    assert.equal(childIds(data.document.document.blocks, b!), [b1, a2]);
    // a1 and a3 (the whole of a) before b1: no old siblings, new siblings {b1} (nothing before the start).
    snap = await snapshot(token, doc.documentRef);
    r = await mutate(
      token,
      doc.documentRef,
      { kind: 'move', blockIds: [a1, a3], beforeBlockId: b1, newParentBlockId: b, oldParentBlockId: a, oldSiblingBlockIds: [], newSiblingBlockIds: [b1] },
      { revision: snap.rev },
    );
    data = checkMutationResult(r, { documentRef: doc.documentRef });
    assert.equal(childIds(data.document.document.blocks, b!), [a1, a3, b1, a2]);
    assert.equal(childIds(data.document.document.blocks, a!), []);
    // Delete a3 and a2 (both under b): parents {b}; siblings {a1, b1}.
    snap = await snapshot(token, doc.documentRef);
    r = await mutate(token, doc.documentRef, { kind: 'delete', blockIds: [a3, a2], parentBlockIds: [b], siblingBlockIds: [b1, a1] }, { revision: snap.rev });
    data = checkMutationResult(r, { documentRef: doc.documentRef });
    assert.equal(childIds(data.document.document.blocks, b!), [a1, b1]);
    // A wrong old parent names the fence even when the blocks really share one parent.
    snap = await snapshot(token, doc.documentRef);
    r = await mutate(token, doc.documentRef, { kind: 'move', blockIds: [b1], beforeBlockId: null, newParentBlockId: null, oldParentBlockId: null }, { revision: snap.rev });
    const error = expectError(r, 409, 'CONFLICT');
    assert.ok(error.fieldErrors?.some((fe: any) => String(fe.field).split('.').pop() === 'oldParentBlockId'), JSON.stringify(error.fieldErrors));
  });

  s('delete mutation removes each block with its whole subtree; fences checked when supplied', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const [y1, c1, c2, y2, y3] = await add(token, doc.documentRef, [p('y1', [p('c1'), p('c2')]), p('y2'), p('y3')]);
    let snap = await snapshot(token, doc.documentRef);
    const siblings = around(snap.blocks, null, [y1!]);
    const wrongParents = await mutate(token, doc.documentRef, { kind: 'delete', blockIds: [c1], parentBlockIds: [y2] }, { revision: snap.rev });
    let error = expectError(wrongParents, 409, 'CONFLICT');
    assert.ok(error.fieldErrors?.some((fe: any) => String(fe.field).split('.').pop() === 'parentBlockIds'), `names parentBlockIds: ${JSON.stringify(error.fieldErrors)}`);
    const wrongSiblings = await mutate(token, doc.documentRef, { kind: 'delete', blockIds: [y1], siblingBlockIds: [y3] }, { revision: snap.rev });
    error = expectError(wrongSiblings, 409, 'CONFLICT');
    assert.ok(error.fieldErrors?.some((fe: any) => String(fe.field).split('.').pop() === 'siblingBlockIds'), `names siblingBlockIds: ${JSON.stringify(error.fieldErrors)}`);
    assert.is((await snapshot(token, doc.documentRef)).rev, snap.rev);

    const del = await mutate(token, doc.documentRef, { kind: 'delete', blockIds: [y1], parentBlockIds: [], siblingBlockIds: [...siblings].reverse() }, { revision: snap.rev });
    const data = checkMutationResult(del, { documentRef: doc.documentRef, baseVersion: snap.version });
    const left = ids(data.document.document.blocks);
    for (const gone of [y1, c1, c2]) assert.not.ok(left.includes(gone!), `${gone} removed with the subtree`);
    assert.ok(left.includes(y2!) && left.includes(y3!));
    assert.ok(data.receipt.affectedBlockIds.includes(y1));

    snap = await snapshot(token, doc.documentRef);
    const [k1] = await add(token, doc.documentRef, [p('k1')], y2!);
    snap = await snapshot(token, doc.documentRef);
    const nested = await mutate(token, doc.documentRef, { kind: 'delete', blockIds: [k1], parentBlockIds: [y2] }, { revision: snap.rev });
    checkMutationResult(nested, { documentRef: doc.documentRef });
  });

  s('a structural conflict applies nothing: delete of a known and an unknown block is 409 and keeps both', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const [a] = await add(token, doc.documentRef, [p('keep me')]);
    const snap = await snapshot(token, doc.documentRef);
    const r = await mutate(token, doc.documentRef, { kind: 'delete', blockIds: [a, 'unknown-block-id'] }, { revision: snap.rev });
    expectError(r, 409, 'CONFLICT');
    const after = await snapshot(token, doc.documentRef);
    assert.ok(find(after.blocks, a!), 'the known block is still there');
    assert.is(after.version, snap.version);
    assert.is(after.rev, snap.rev);
  });

  s('mutation replay: exact repeat answers replayed; same key with another body is 409 IDEMPOTENCY_CONFLICT', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const snap = await snapshot(token, doc.documentRef);
    const key = newKey();
    const mutation = { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [p('once')] };
    const first = checkMutationResult(await mutate(token, doc.documentRef, mutation, { key, revision: snap.rev, intent: 'add once' }), {
      documentRef: doc.documentRef,
      idempotency: 'created',
    });
    const again = await mutate(token, doc.documentRef, mutation, { key, revision: snap.rev, intent: 'add once' });
    const replay = checkMutationResult(again, { documentRef: doc.documentRef, idempotency: 'replayed' });
    assert.is(replay.receipt.operationRef, first.receipt.operationRef);
    assert.is(replay.receipt.resultingVersion, first.receipt.resultingVersion);
    assert.equal(replay.receipt.affectedBlockIds, first.receipt.affectedBlockIds);
    const now = await snapshot(token, doc.documentRef);
    assert.is(now.version, first.receipt.resultingVersion, 'the replay applied nothing');
    const other = await mutate(token, doc.documentRef, mutation, { key, revision: snap.rev, intent: 'a different intent' });
    expectError(other, 409, 'IDEMPOTENCY_CONFLICT');
    // Same key and body at another revision is not an exact repeat (key, body and revision).
    const moved = await mutate(token, doc.documentRef, mutation, { key, revision: now.rev, intent: 'add once' });
    expectError(moved, 409, 'IDEMPOTENCY_CONFLICT');
    assert.is((await snapshot(token, doc.documentRef)).version, now.version, 'nothing was applied');
    // A later mutation does not turn the exact repeat into a stale write.
    checkMutationResult(await mutate(token, doc.documentRef, { ...mutation, blocks: [p('later')] }, { revision: now.rev }), { documentRef: doc.documentRef });
    const late = await mutate(token, doc.documentRef, mutation, { key, revision: snap.rev, intent: 'add once' });
    const lateData = checkMutationResult(late, { documentRef: doc.documentRef, idempotency: 'replayed', laterMutations: true });
    assert.is(lateData.receipt.operationRef, first.receipt.operationRef);
  });

  s('mutation with a stale revision is 412 PRECONDITION_FAILED; without one 428 PRECONDITION_REQUIRED; without key 400', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const stale = (await snapshot(token, doc.documentRef)).rev;
    await add(token, doc.documentRef, [p('moves the revision on')]);
    const current = await snapshot(token, doc.documentRef);
    const m = { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [p('x')] };
    expectError(await mutate(token, doc.documentRef, m, { revision: stale }), 412, 'PRECONDITION_FAILED');
    expectError(await mutate(token, doc.documentRef, m), 428, 'PRECONDITION_REQUIRED');
    const noKey = await c.call('POST', `/api/v1/documents/${doc.documentRef}/mutations`, {
      token,
      revision: current.rev,
      body: { v: 1, intent: 'no key', mutation: m },
    });
    expectError(noKey, 400, 'IDEMPOTENCY_REQUIRED');
    // The ETag is never a write precondition.
    const etag = (await read(token, doc.documentRef)).headers.get('etag')!;
    if (etag !== current.rev) {
      const r = await mutate(token, doc.documentRef, m, { revision: etag });
      assert.ok(r.status === 412 || r.status === 400, `ETag as Service-If-Revision is refused: ${show(r)}`);
    }
    const after = await snapshot(token, doc.documentRef);
    assert.is(after.rev, current.rev, 'refused writes change nothing');
  });

  s('mutation bodies outside the schema are 400 INVALID_REQUEST with dotted fieldErrors', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const [a] = await add(token, doc.documentRef, [p('a')]);
    const { rev } = await snapshot(token, doc.documentRef);
    const create = (blocks: unknown[]) => ({ kind: 'create', parentBlockId: null, beforeBlockId: null, blocks });
    const bodies: [string, unknown][] = [
      ['empty intent', { v: 1, intent: '', mutation: create([p('x')]) }],
      ['intent over 500', { v: 1, intent: 'i'.repeat(501), mutation: create([p('x')]) }],
      ['extra member', { v: 1, intent: 'x', mutation: create([p('x')]), extra: 1 }],
      ['unknown kind', { v: 1, intent: 'x', mutation: { kind: 'rename', blockId: a } }],
      ['no blocks', { v: 1, intent: 'x', mutation: create([]) }],
      ['51 blocks', { v: 1, intent: 'x', mutation: create(Array.from({ length: 51 }, () => p('x'))) }],
      ['markdown over 41000', { v: 1, intent: 'x', mutation: create([p('m'.repeat(41001))]) }],
      ['unknown block type', { v: 1, intent: 'x', mutation: create([{ type: 'image', markdown: 'x' }]) }],
      ['heading level 4', { v: 1, intent: 'x', mutation: create([{ type: 'heading', level: 4, markdown: 'x' }]) }],
      ['65 ids to delete', { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: Array.from({ length: 65 }, (_, i) => `b${i}`) } }],
      ['v 2', { v: 2, intent: 'x', mutation: create([p('x')]) }],
      ['51 children', { v: 1, intent: 'x', mutation: create([p('x', Array.from({ length: 51 }, () => p('c')))]) }],
      ['code over 50000', { v: 1, intent: 'x', mutation: create([{ type: 'codeBlock', code: 'c'.repeat(50001) }]) }],
      ['language over 80', { v: 1, intent: 'x', mutation: create([{ type: 'codeBlock', code: 'x', language: 'l'.repeat(81) }]) }],
      ['table of 51 rows', { v: 1, intent: 'x', mutation: create([{ type: 'table', rows: Array.from({ length: 51 }, () => ['c']) }]) }],
      ['table row of 31 cells', { v: 1, intent: 'x', mutation: create([{ type: 'table', rows: [Array.from({ length: 31 }, () => 'c')] }]) }],
      ['table cell over 5000', { v: 1, intent: 'x', mutation: create([{ type: 'table', rows: [['c'.repeat(5001)]] }]) }],
      ['table without rows', { v: 1, intent: 'x', mutation: create([{ type: 'table', rows: [] }]) }],
      ['blockId starting with a hyphen', { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: ['-bad'] } }],
      ['blockId over 128', { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: ['b'.repeat(129)] } }],
      ['65 ids to move', { v: 1, intent: 'x', mutation: { kind: 'move', blockIds: Array.from({ length: 65 }, (_, i) => `b${i}`), beforeBlockId: null, newParentBlockId: null } }],
      ['3 new siblings', { v: 1, intent: 'x', mutation: { kind: 'move', blockIds: [a], beforeBlockId: null, newParentBlockId: null, newSiblingBlockIds: ['b1', 'b2', 'b3'] } }],
      ['3 old siblings', { v: 1, intent: 'x', mutation: { kind: 'move', blockIds: [a], beforeBlockId: null, newParentBlockId: null, oldSiblingBlockIds: ['b1', 'b2', 'b3'] } }],
      ['move without newParentBlockId', { v: 1, intent: 'x', mutation: { kind: 'move', blockIds: [a], beforeBlockId: null } }],
      ['65 delete parents', { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: [a], parentBlockIds: Array.from({ length: 65 }, (_, i) => `b${i}`) } }],
      ['129 delete siblings', { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: [a], siblingBlockIds: Array.from({ length: 129 }, (_, i) => `b${i}`) } }],
      ['edit without block', { v: 1, intent: 'x', mutation: { kind: 'edit', blockId: a } }],
      ['create without parentBlockId', { v: 1, intent: 'x', mutation: { kind: 'create', beforeBlockId: null, blocks: [p('x')] } }],
      ['no mutation', { v: 1, intent: 'x' }],
    ];
    for (const [label, body] of bodies) {
      const r = await c.call('POST', `/api/v1/documents/${doc.documentRef}/mutations`, { token, key: newKey(), revision: rev, body });
      assert.is(r.status, 400, `${label}: ${show(r)}`);
      const error = expectError(r, 400, 'INVALID_REQUEST');
      for (const fe of error.fieldErrors ?? []) assert.match(fe.field, F.fieldErrorField, `${label}: field ${fe.field}`);
    }
    const nested = await c.call('POST', `/api/v1/documents/${doc.documentRef}/mutations`, {
      token,
      key: newKey(),
      revision: rev,
      body: { v: 1, intent: 'x', mutation: create([p('ok'), p('m'.repeat(41001))]) },
    });
    const error = expectError(nested, 400, 'INVALID_REQUEST');
    assert.ok(error.fieldErrors?.length >= 1, 'fieldErrors for a nested field');
    for (const fe of error.fieldErrors) assert.match(fe.field, F.fieldErrorField, `nested field ${fe.field} uses dotted names`);
    assert.is((await snapshot(token, doc.documentRef)).rev, rev);
  });

  s('mutation limits are inclusive: 50 blocks, 50 children, 41000-char markdown, 50x30 table, 500-char intent', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const fifty = await add(token, doc.documentRef, Array.from({ length: 50 }, (_, i) => p(`block ${i}`)));
    assert.is(fifty.length, 50);
    const nested = await add(token, doc.documentRef, [p('parent', Array.from({ length: 50 }, (_, i) => p(`child ${i}`)))]);
    assert.is(nested.length, 51);
    const [long] = await add(token, doc.documentRef, [p('m'.repeat(41000))]);
    assert.ok(long);
    const [table] = await add(token, doc.documentRef, [{ type: 'table', rows: Array.from({ length: 50 }, () => Array.from({ length: 30 }, () => 'c')) }]);
    assert.ok(table);
    const { rev } = await snapshot(token, doc.documentRef);
    const r = await mutate(token, doc.documentRef, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [p('x')] }, { revision: rev, intent: 'i'.repeat(500) });
    checkMutationResult(r, { documentRef: doc.documentRef });
  });

  s('a block markdown holds exactly one block: multi-block Markdown is refused or stays one block', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    for (const markdown of ['first paragraph\n\nsecond paragraph', '# not a heading', '- not a list']) {
      const { rev } = await snapshot(token, doc.documentRef);
      const r = await mutate(token, doc.documentRef, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [p(markdown)] }, { revision: rev });
      if (r.status === 400) expectError(r, 400, 'INVALID_REQUEST');
      else {
        const data = checkMutationResult(r, { documentRef: doc.documentRef });
        assert.is(data.receipt.affectedBlockIds.length, 1, `${JSON.stringify(markdown)} made one block`);
        assert.is(find(data.document.document.blocks, data.receipt.affectedBlockIds[0])!.type, 'paragraph');
      }
    }
  });

  s('a create whose receipt would name more than 256 blocks is refused, never answered with an oversized receipt', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const { rev } = await snapshot(token, doc.documentRef);
    const blocks = Array.from({ length: 6 }, (_, i) => p(`p${i}`, Array.from({ length: 50 }, (_, j) => p(`c${j}`))));
    const r = await mutate(token, doc.documentRef, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks }, { revision: rev });
    if (r.status === 200) {
      const n = r.json.data.receipt.affectedBlockIds.length;
      assert.ok(n <= 256, `306 blocks created and affectedBlockIds has ${n} items (contract: 1-256)`);
    } else {
      assert.ok(r.status === 400 || r.status === 409, show(r));
      expectEnvelope(r);
    }
  });

  s('mutation of an unknown document is 404 NOT_FOUND', async () => {
    const token = await c.token();
    // A revision the server did issue (of another document), so only the document is unknown.
    const real = (await snapshot(token, (await createDoc(token)).documentRef)).rev;
    const m = { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [p('x')] };
    expectError(await mutate(token, `sdoc_${hex(48)}`, m, { revision: real }), 404, 'NOT_FOUND');
    // With a made-up revision, 404 (unknown document) and 400 (header outside the schema) are both readings.
    const made = await mutate(token, `sdoc_${hex(48)}`, m, { revision: 'any-revision' });
    assert.ok(made.status === 404 || made.status === 400, show(made));
    expectEnvelope(made);
  });
}
