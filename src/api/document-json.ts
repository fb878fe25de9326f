/**
 * The wire JSON of documents and receipts, built without re-stringifying the canonical document JSON.
 * @module
 */
import type { DocumentView, MutationReceipt } from '../documents/types.ts';
import { viewContent } from '../documents/view.ts';

/** The Document object's JSON text up to (not including) its `document` member. */
function documentHeadJson(view: DocumentView): string {
  return (
    `{"v":1,"documentRef":${JSON.stringify(view.documentRef)},"spaceRef":${JSON.stringify(view.spaceRef)}` +
    `,"title":${JSON.stringify(view.title)},"version":${view.version},"format":"service-rich-document"` +
    `,"formatGeneration":1,"contentSha256":"${view.contentSha256}","browserHref":${JSON.stringify(view.browserHref)}`
  );
}

/**
 * The compact JSON text of the contract's Document object, with the canonical `document` text
 * spliced in as is (so `sha256(JSON.stringify(JSON.parse(text).document)) === contentSha256`).
 */
export function documentDataJson(view: DocumentView): string {
  return `${documentHeadJson(view)},"document":${view.documentJson}}`;
}

const utf8 = new TextEncoder();
const CLOSE = utf8.encode('}');

/** The text bodies of small documents' views, kept while the view is (a view lives as long as its version is the loaded one). */
const smallBodies = new WeakMap<DocumentView, string>();

/** Document JSON longer than this (UTF-16 units) is served as bytes, see {@link documentDataBody}. */
const BYTES_FROM = 32 * 1024;

/**
 * {@link documentDataJson} as an HTTP body piece: the text for a small document; for a large one its
 * UTF-8 bytes in pieces, taken from the version's content (src/documents/content.ts).
 * @remarks The content's bytes are the block tree's per-chunk encodings, kept until a chunk changes:
 * after a one-block edit one chunk is encoded again, the document text is never joined, and the
 * SHA-256 is taken over those same bytes. The pieces are copied once, into the response body.
 */
export function documentDataBody(view: DocumentView): string | readonly Uint8Array[] {
  const content = viewContent(view);
  if (content === undefined || content.length <= BYTES_FROM) {
    // A view is built once per version and then served to every read of it: its text is built once too.
    let text = smallBodies.get(view);
    if (text === undefined) smallBodies.set(view, (text = documentDataJson(view)));
    return text;
  }
  const bytes = content.bytes; // first, so that the hash (read by the head) is taken over them
  return [utf8.encode(`${documentHeadJson(view)},"document":`), ...bytes, CLOSE];
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
