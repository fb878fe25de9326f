/**
 * The ports the library's capture uses: a {@link Fetcher} that brings a page's bytes under the
 * address policy and limits, and an {@link Extractor} that turns HTML or PDF bytes into readable
 * text. Node implementations live in adapters/capture.
 * @module
 */

/** Why a capture failed; stored on the item as `capture.reason.code`. */
export const CAPTURE_FAILURE_CODES = [
  'forbidden-address',
  'bad-url',
  'too-many-redirects',
  'timeout',
  'network',
  'sign-in-required',
  'http-error',
  'unsupported-type',
  'too-large',
  'extract-failed',
  'not-configured',
] as const;
export type CaptureFailureCode = (typeof CAPTURE_FAILURE_CODES)[number];

/**
 * A capture that could not be made, with a stable code. Recognised by `name`.
 * @remarks Thrown by fetchers and extractors; the library keeps the item and marks its capture failed.
 */
export class CaptureFailure extends Error {
  override readonly name = 'CaptureFailure';
  constructor(
    readonly code: CaptureFailureCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** True for a {@link CaptureFailure}, also across module copies. */
export function isCaptureFailure(e: unknown): e is CaptureFailure {
  return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'CaptureFailure' && typeof (e as { code?: unknown }).code === 'string';
}

/** Limits and policy of one fetch, decided by the library. */
export interface FetchOptions {
  signal: AbortSignal;
  /** Fetch private, loopback, link-local … addresses too (the `--capture-allow-private` switch). */
  allowPrivate: boolean;
  /** Bytes of body kept; a longer body is cut there and reported `truncated`. */
  maxBytes: number;
  /** Whole fetch, all hops and the body included. */
  timeoutMs: number;
  maxRedirects: number;
}

/** What a fetch brought back (any status; the library judges it). */
export interface FetchedPage {
  /** The URL of the last hop. */
  url: string;
  status: number;
  /** The Content-Type header, lowercased, without parameters; '' when absent. */
  contentType: string;
  /** The Content-Type charset parameter, lowercased; null when absent. */
  charset: string | null;
  bytes: Uint8Array;
  /** True when the body was longer than `maxBytes` and was cut. */
  truncated: boolean;
}

/** Brings pages over the network. Must refuse forbidden addresses with `forbidden-address`. */
export interface Fetcher {
  fetch(url: string, options: FetchOptions): Promise<FetchedPage>;
}

/** What content sniffing found: a kind the library captures, or another media type it refuses. */
export type DetectedContent = { kind: 'html' | 'pdf'; mime: string } | { kind: 'other'; mime: string; ext: string | null };

/** Readable text of a page: a title and paragraphs in reading order. */
export interface ExtractedText {
  title: string | null;
  byline: string | null;
  paragraphs: string[];
  /** Set when the page is a sign-in form rather than content (HTML only). */
  loginWall: boolean;
}

/** Turns bytes into readable text, and tells content kinds apart by their bytes. */
export interface Extractor {
  /** Decide what `bytes` are by their content (magic numbers, markup), not by a declared type. */
  detect(bytes: Uint8Array): Promise<DetectedContent>;
  /**
   * Readable text of an HTML page or a PDF. `url` resolves relative links; `charset` is the declared
   * one (HTML without it is sniffed from its meta tag, then UTF-8). `holder`: whose page it is (an
   * account): an extractor that queues pages takes turns between holders.
   */
  extract(kind: 'html' | 'pdf', bytes: Uint8Array, url: string, charset?: string | null, holder?: string): Promise<ExtractedText>;
}
