/**
 * The wire JSON of documents and receipts, built without re-stringifying the canonical document JSON.
 * @module
 */
import type { DocumentView, MutationReceipt } from '../documents/types.ts';

/**
 * The compact JSON text of the contract's Document object, with the canonical `document` text
 * spliced in as is (so `sha256(JSON.stringify(JSON.parse(text).document)) === contentSha256`).
 */
export function documentDataJson(view: DocumentView): string {
  return (
    `{"v":1,"documentRef":${JSON.stringify(view.documentRef)},"spaceRef":${JSON.stringify(view.spaceRef)}` +
    `,"title":${JSON.stringify(view.title)},"version":${view.version},"format":"service-rich-document"` +
    `,"formatGeneration":1,"contentSha256":"${view.contentSha256}","browserHref":${JSON.stringify(view.browserHref)}` +
    `,"document":${view.documentJson}}`
  );
}

const encoder = new TextEncoder();
/** The bytes of the most recently served large views (a view is per document version). */
const encoded = new Map<DocumentView, Uint8Array>();
/** At most this many encoded views are kept (up to ~2 MB each). */
const ENCODED_MAX = 8;

/** Document JSON longer than this (UTF-16 units) is served as cached bytes, see {@link documentDataBody}. */
const BYTES_FROM = 32 * 1024;

/**
 * {@link documentDataJson} as an HTTP body piece: the text for a small document; for a large one its
 * UTF-8 bytes, encoded once per view and kept for the {@link ENCODED_MAX} most recently served views
 * (views are cached per version, so repeated reads of one version send the same bytes without
 * building, measuring or encoding a megabyte string each time).
 */
export function documentDataBody(view: DocumentView): string | Uint8Array {
  if (view.documentJson.length <= BYTES_FROM) return documentDataJson(view);
  let bytes = encoded.get(view);
  if (bytes === undefined) {
    bytes = encoder.encode(documentDataJson(view));
    if (encoded.size >= ENCODED_MAX) encoded.delete(encoded.keys().next().value!);
  } else encoded.delete(view);
  encoded.set(view, bytes);
  return bytes;
}

/** The Document object as a plain value (parses the canonical JSON once). */
export function documentData(view: DocumentView): Record<string, unknown> {
  return JSON.parse(documentDataJson(view)) as Record<string, unknown>;
}

/**
 * `JSON.stringify(receipt)` for a {@link MutationReceipt}, written field by field (same keys, same
 * order, as the engine builds receipts): about four times faster, and it runs on every mutation.
 */
export function receiptJson(r: MutationReceipt): string {
  let ids = '';
  for (let i = 0; i < r.affectedBlockIds.length; i++) ids += (i ? ',' : '') + JSON.stringify(r.affectedBlockIds[i]);
  return (
    `{"v":${r.v},"documentRef":${JSON.stringify(r.documentRef)},"operationRef":${JSON.stringify(r.operationRef)}` +
    `,"baseVersion":${r.baseVersion},"resultingVersion":${r.resultingVersion},"contentSha256":${JSON.stringify(r.contentSha256)}` +
    `,"affectedBlockIds":[${ids}]}`
  );
}
