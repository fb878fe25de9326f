/**
 * The transport-neutral edge: a plain request in, a plain response out. Plain values only, so a
 * request or response crosses a worker boundary by structured clone.
 * @module
 */

/** A request as every transport hands it to the handler. Header names are lowercase. */
export interface PlainRequest {
  method: string;
  /** Path and query, e.g. `/api/v1/documents?limit=5`. */
  url: string;
  headers: Record<string, string>;
  /** The raw body, or null when there is none. Transports stop reading past the body limit and set `bodyTooLarge`. */
  body: Uint8Array | null;
  /** True when the transport stopped reading because the body exceeded the limit. */
  bodyTooLarge?: boolean;
  /**
   * The body as it arrives, in place of `body`, for operations that take raw bytes (uploads), when
   * the transport streams them (see {@link Handler.streamsBody}); the handler enforces the limit.
   * Not structured-cloneable: only the node:http listener sets it.
   */
  bodyStream?: AsyncIterable<Uint8Array>;
  /** Peer address, for logs only. */
  remoteAddress?: string;
  /** Aborted when the client disconnects (event streams stop on it). */
  signal?: AbortSignal;
}

/** A response: a complete body, or a stream of chunks (event streams). */
export interface PlainResponse {
  status: number;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  stream?: AsyncIterable<string | Uint8Array>;
}

/** What every transport mounts. */
export type Handler = ((request: PlainRequest) => Promise<PlainResponse>) & {
  /**
   * The largest body the operation at `method` and `url` accepts (256 KB for JSON bodies, more for
   * uploads), so that a transport reads no more than that. Absent: the contract's 256 KB.
   */
  bodyLimit?: (method: string, url: string) => number;
  /**
   * True when the operation at `method` and `url` takes raw bytes that it reads as a stream, so that a
   * transport able to stream hands it `bodyStream` instead of reading the whole body first. Absent: never.
   */
  streamsBody?: (method: string, url: string) => boolean;
};

export { MAX_REQUEST_BODY, MAX_RESPONSE_BODY } from '../limits.ts';
