/**
 * A fetch-compatible function over the plain handler: `Request → PlainRequest → PlainResponse →
 * Response`, with no socket. Lets fetch clients (ky, openapi clients, tests) talk to an embedded
 * engine exactly as they would over HTTP.
 * @module
 */
import { MAX_REQUEST_BODY, type Handler, type PlainRequest, type PlainResponse } from '../../src/api/types.ts';

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);
const encoder = new TextEncoder();

/** Read at most `limit` bytes of a body; report whether there was more. */
async function readBody(request: Request, limit: number): Promise<{ body: Uint8Array | null; tooLarge: boolean }> {
  if (request.body === null) return { body: null, tooLarge: false };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let tooLarge = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - size));
      size = limit;
      tooLarge = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  if (chunks.length === 1) return { body: chunks[0]!, tooLarge };
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { body, tooLarge };
}

/** Translate a fetch Request into the handler's plain request. */
export async function toPlainRequest(request: Request, signal: AbortSignal, maxBody = MAX_REQUEST_BODY): Promise<PlainRequest> {
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value; // Headers already lowercases names and joins repeats with ", "
  });
  const { body, tooLarge } = await readBody(request, maxBody);
  const plain: PlainRequest = {
    method: request.method.toUpperCase(),
    url: url.pathname + url.search,
    headers,
    body: body && body.byteLength === 0 && request.method === 'GET' ? null : body,
    remoteAddress: 'inproc',
    signal,
  };
  if (tooLarge) plain.bodyTooLarge = true;
  return plain;
}

/** A ReadableStream over the handler's chunk iterator; cancelling it aborts the request. */
function toReadable(stream: AsyncIterable<string | Uint8Array>, abort: AbortController): ReadableStream<Uint8Array> {
  const iterator = stream[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await iterator.next();
        if (done) controller.close();
        else controller.enqueue(typeof value === 'string' ? encoder.encode(value) : value);
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel() {
      abort.abort();
      await iterator.return?.();
    },
  });
}

/** Translate the handler's plain response into a fetch Response. */
export function toResponse(plain: PlainResponse, abort: AbortController): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(plain.headers)) headers.set(name, value);
  const init = { status: plain.status, headers };
  if (NULL_BODY_STATUS.has(plain.status)) return new Response(null, init);
  if (plain.stream) return new Response(toReadable(plain.stream, abort), init);
  if (plain.body === undefined) return new Response(null, init);
  const bytes = typeof plain.body === 'string' ? encoder.encode(plain.body) : plain.body;
  return new Response(bytes as Uint8Array<ArrayBuffer>, init);
}

/**
 * A `fetch` over a {@link Handler}: no socket, no port. The URL's origin is ignored; its path and
 * query are what the handler routes on.
 * @example
 * const api = ky.create({ prefixUrl: 'http://kw.local/api/v1', fetch: createFetch(handler) });
 * @remarks Request bodies past the contract's 256 KB limit are cut there and flagged `bodyTooLarge`,
 * like the HTTP transport does. A streamed response (event stream) is pulled lazily; cancelling its
 * body, or aborting the request's signal, aborts the handler's signal.
 */
export function createFetch(handler: Handler): typeof fetch {
  return async function inprocFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const request = new Request(input, init);
    request.signal.throwIfAborted();
    const abort = new AbortController();
    const onAbort = () => abort.abort(request.signal.reason);
    request.signal.addEventListener('abort', onAbort, { once: true });
    const url = new URL(request.url);
    const limit = handler.bodyLimit?.(request.method.toUpperCase(), url.pathname + url.search) ?? MAX_REQUEST_BODY;
    const plain = await handler(await toPlainRequest(request, abort.signal, limit));
    request.signal.throwIfAborted();
    if (!plain.stream) request.signal.removeEventListener('abort', onAbort);
    return toResponse(plain, abort);
  } as typeof fetch;
}
