/**
 * The hand-written serialisers of the hot path against JSON.stringify / the text path.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { documentDataBody, documentDataJson, receiptJson } from './document-json.ts';
import type { DocumentView, MutationReceipt } from '../documents/types.ts';

test('receiptJson is JSON.stringify of a receipt', () => {
  const receipts: MutationReceipt[] = [
    { v: 1, documentRef: `sdoc_${'a'.repeat(48)}`, operationRef: `docop_${'b'.repeat(48)}`, baseVersion: 3, resultingVersion: 4, contentSha256: 'c'.repeat(64), affectedBlockIds: [] },
    { v: 1, documentRef: 'sdoc_x', operationRef: 'docop_y', baseVersion: 1, resultingVersion: 2, contentSha256: 'd', affectedBlockIds: ['b1', 'a.b:c$d-e', 'q"\\\u2028'] },
  ];
  for (const r of receipts) assert.is(receiptJson(r), JSON.stringify(r));
});

test('documentDataBody: text for small documents, the same text as UTF-8 bytes (cached) for large ones', () => {
  const view = (documentJson: string): DocumentView => ({
    v: 1,
    documentRef: `sdoc_${'a'.repeat(48)}`,
    spaceRef: `ksp_${'b'.repeat(48)}`,
    title: 'Tïtle "q"',
    version: 2,
    format: 'service-rich-document',
    formatGeneration: 1,
    contentSha256: 'c'.repeat(64),
    browserHref: '/documents/x',
    documentJson,
    revision: 'r',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  });
  const small = view('{"type":"blocks","blocks":[]}');
  assert.is(documentDataBody(small), documentDataJson(small));
  const large = view(`{"type":"blocks","blocks":[${'{"id":"é😀"},'.repeat(5000)}{"id":"z"}]}`);
  const bytes = documentDataBody(large);
  assert.ok(bytes instanceof Uint8Array);
  assert.is(new TextDecoder().decode(bytes as Uint8Array), documentDataJson(large));
  assert.is(documentDataBody(large), bytes, 'encoded once per view');
});

test.run();
