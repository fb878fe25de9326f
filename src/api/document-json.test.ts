/**
 * The hand-written serialisers of the hot path against JSON.stringify / the text path.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { documentDataBody, documentDataJson, receiptJson } from './document-json.ts';
import type { MutationReceipt } from '../documents/types.ts';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { accountActor, freshKey, mutate, newDocument } from '../../fixtures/engine-kit.ts';
import { createEngine } from '../engine.ts';
import { sha256Hex } from '../hash.ts';

const alice = accountActor('alice');

test('receiptJson is JSON.stringify of a receipt', () => {
  const receipts: MutationReceipt[] = [
    { v: 1, documentRef: `sdoc_${'a'.repeat(48)}`, operationRef: `docop_${'b'.repeat(48)}`, baseVersion: 3, resultingVersion: 4, contentSha256: 'c'.repeat(64), affectedBlockIds: [] },
    { v: 1, documentRef: 'sdoc_x', operationRef: 'docop_y', baseVersion: 1, resultingVersion: 2, contentSha256: 'd', affectedBlockIds: ['b1', 'a.b:c$d-e', 'q"\\\u2028'] },
  ];
  for (const r of receipts) assert.is(receiptJson(r), JSON.stringify(r));
});

test('documentDataBody: text for small documents; for large ones UTF-8 pieces that re-encode only the edited chunk', async () => {
  const engine = createEngine({ storage: memoryStorage() });
  const { ref, revision } = await newDocument(engine, alice);
  const empty = await engine.documents.read(alice, ref, 'rich-json');
  if (empty.format !== 'rich-json') throw new Error('rich-json expected');
  assert.is(documentDataBody(empty.document), documentDataJson(empty.document), 'a small document is served as text');
  // 600 top-level paragraphs with multi-byte text: several chunks, well over the text threshold.
  const blocks = Array.from({ length: 50 }, (_, i) => ({ type: 'paragraph', markdown: `é😀 paragraph ${i} ${'x'.repeat(60)}` }));
  let rev = revision;
  let out;
  for (let batch = 0; batch < 12; batch++) {
    out = await mutate(engine, alice, ref, rev, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks }, freshKey());
    rev = out.document.revision;
  }
  const first = out!.document;
  const pieces = documentDataBody(first);
  assert.ok(Array.isArray(pieces), 'a large document is served as byte pieces');
  const decoded = (ps: readonly Uint8Array[]) => ps.map((p) => new TextDecoder().decode(p)).join('');
  assert.is(decoded(pieces as Uint8Array[]), documentDataJson(first));
  assert.is(first.contentSha256, sha256Hex(JSON.stringify(JSON.parse(first.documentJson))));

  const edited = await mutate(engine, alice, ref, rev, { kind: 'edit', blockId: out!.receipt.affectedBlockIds[5]!, block: { type: 'paragraph', markdown: 'changed' } }, freshKey());
  const next = documentDataBody(edited.document) as Uint8Array[];
  assert.is(decoded(next), documentDataJson(edited.document));
  assert.is(edited.document.contentSha256, sha256Hex(edited.document.documentJson));
  const shared = next.filter((p) => (pieces as Uint8Array[]).includes(p)).length;
  assert.ok(next.length > 4, `several chunks (${next.length} pieces)`);
  assert.is(shared, next.length - 2, 'all but the head and the edited chunk are the bytes of the version before');
  // The earlier version still reads as itself (its pieces are encoded again where the tree moved on).
  assert.is(decoded(documentDataBody(first) as Uint8Array[]), documentDataJson(first));
});

test.run();
