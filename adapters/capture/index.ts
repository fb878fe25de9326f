/**
 * Node capture adapters for the link library: the safe fetcher and the HTML/PDF extractor.
 * @module
 */
import type { Extractor } from '../../src/library/capture-port.ts';
import { detectContent } from './detect.ts';
import { decodeHtml, extractHtml } from './html-text.ts';
import { extractPdf } from './pdf-text.ts';

export { nodeFetcher, type NodeFetcherOptions, type Resolver } from './node-fetcher.ts';
export { detectContent } from './detect.ts';
export { extractHtml, decodeHtml } from './html-text.ts';
export { extractPdf } from './pdf-text.ts';

/** The extractor: content detection by bytes, Readability over linkedom for HTML, unpdf for PDF. */
export function contentExtractor(): Extractor {
  return {
    detect: detectContent,
    async extract(kind, bytes, url, charset) {
      return kind === 'pdf' ? extractPdf(bytes) : extractHtml(decodeHtml(bytes, charset), url);
    },
  };
}
