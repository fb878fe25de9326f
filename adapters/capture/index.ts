/**
 * Node capture adapters for the link library: the safe fetcher and the HTML/PDF extractor.
 * @module
 */
import type { Extractor } from '../../src/library/capture-port.ts';
import { detectContent } from './detect.ts';
import { ExtractorPool, type ExtractorPoolOptions } from './extract-pool.ts';
import { decodeHtml, extractHtml } from './html-text.ts';
import { extractPdf } from './pdf-text.ts';

export { nodeFetcher, type NodeFetcherOptions, type Resolver } from './node-fetcher.ts';
export { detectContent } from './detect.ts';
export { extractHtml, decodeHtml } from './html-text.ts';
export { extractPdf } from './pdf-text.ts';
export { ExtractorPool, type ExtractorPoolOptions, type ExtractorPoolStats } from './extract-pool.ts';
export { isExtractWorker, serveExtractions } from './extract-thread.ts';

/** Options of {@link contentExtractor}. */
export interface ContentExtractorOptions extends Omit<ExtractorPoolOptions, 'threads'> {
  /**
   * `false`: read pages on the calling thread, without limits (benchmarks' raw parse rate, tools).
   * Never for a server: one hostile page then stalls every request.
   */
  threads?: number | false | undefined;
}

/** An {@link Extractor} with a `close` that stops its threads. */
export interface ContentExtractor extends Extractor {
  /** The pool reading the pages (null when `threads: false`). */
  readonly pool: ExtractorPool | null;
  /** Stop the threads (a no-op for the shared default pool, whose idle threads never hold the process). */
  close(): Promise<void>;
}

let shared: ExtractorPool | null = null;

/**
 * The extractor: content detection by bytes (on the calling thread: it reads the first bytes only),
 * and the reading itself — Readability over linkedom for HTML, unpdf for PDF — on a pool of worker
 * threads with a time and a memory limit per page (see {@link ExtractorPool}).
 * @remarks Without options every call shares one process-wide pool with the defaults (20 s and
 * 256 MiB per page, one thread per spare core); any option builds a pool of its own.
 * @example
 * const engine = createEngine({ storage, fetcher: nodeFetcher(), extractor: contentExtractor() });
 * const strict = contentExtractor({ timeLimitMs: 2000, maxHeapMb: 64 }); // own pool; strict.close() stops it
 */
export function contentExtractor(options: ContentExtractorOptions = {}): ContentExtractor {
  if (options.threads === false) {
    return {
      pool: null,
      detect: detectContent,
      async extract(kind, bytes, url, charset) {
        return kind === 'pdf' ? extractPdf(bytes) : extractHtml(decodeHtml(bytes, charset), url);
      },
      close: async () => {},
    };
  }
  const own = Object.keys(options).length > 0;
  const { threads, ...rest } = options;
  const pool = own ? new ExtractorPool({ ...rest, ...(threads === undefined ? {} : { threads }) }) : (shared ??= new ExtractorPool());
  return {
    pool,
    detect: detectContent,
    extract: (kind, bytes, url, charset, holder) => pool.extract(kind, bytes, url, charset ?? null, holder),
    close: () => (own ? pool.close() : Promise.resolve()),
  };
}
