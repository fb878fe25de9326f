/**
 * Serialising documents without re-stringifying their canonical JSON.
 * @module
 */
import type { DocumentView } from './types.ts';

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

/** The Document object as a plain value (parses the canonical JSON once). */
export function documentData(view: DocumentView): Record<string, unknown> {
  return JSON.parse(documentDataJson(view)) as Record<string, unknown>;
}
