/**
 * The document limits and input checks shared by the documents service and the edge.
 * @module
 */
import type { BlockTree } from '../blocks/tree.ts';
import { invalid } from '../errors.ts';
import { MAX_RESPONSE_BODY } from '../limits.ts';
import type { DocumentFormat } from './types.ts';

/** Room left in the 2 MB response limit for the envelope and receipt around the document JSON. */
export const MAX_DOCUMENT_JSON_BYTES = MAX_RESPONSE_BODY - 16 * 1024;

/** The read representations of a document. */
export { DOCUMENT_FORMATS } from './schemas.ts';
import { DOCUMENT_FORMATS } from './schemas.ts';
const FORMATS: ReadonlySet<string> = new Set<string>(DOCUMENT_FORMATS);

/** A read format (undefined: rich-json); anything else is INVALID_REQUEST on field `format`. */
export function requireFormat(format: string | undefined): DocumentFormat {
  if (format === undefined) return 'rich-json';
  if (!FORMATS.has(format)) {
    throw invalid('format must be rich-json, blocks or markdown.', [{ field: 'format', message: 'must be rich-json, blocks or markdown' }]);
  }
  return format as DocumentFormat;
}

/**
 * True when the tree's canonical JSON is over {@link MAX_DOCUMENT_JSON_BYTES}.
 * @remarks Cheap for small documents: UTF-8 bytes are counted (per cached chunk) only when the text
 * could be over the limit by its length alone.
 */
export function exceedsDocumentLimit(tree: BlockTree): boolean {
  const length = tree.jsonLength();
  if (length * 3 <= MAX_DOCUMENT_JSON_BYTES) return false;
  return length > MAX_DOCUMENT_JSON_BYTES || tree.jsonByteLength() > MAX_DOCUMENT_JSON_BYTES;
}
