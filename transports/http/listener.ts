/**
 * The node:http listener: maps node's request/response to the plain edge ({@link PlainRequest} →
 * {@link PlainResponse}) and back, and nothing else.
 * @remarks Kept lean for throughput: no WHATWG Request/Response, no URL object, one header object per
 * request, the AbortSignal created only when the handler asks for it, and Content-Length computed
 * for complete bodies so node does not fall back to chunked encoding.
 * @module
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { MAX_REQUEST_BODY, type Handler, type PlainRequest, type PlainResponse } from '../../src/api/types.ts';

/** Options of {@link listen}. */
export interface ListenOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Request body limit; default 256 KB (the contract's). */
  maxBodyBytes?: number;
  /** How long {@link Listening.close} waits for in-flight requests before cutting connections; default 10 s. */
  closeTimeoutMs?: number;
}

/** A running listener. */
export interface Listening {
  /** `http://host:port` */
  url: string;
  port: number;
  server: http.Server;
  /**
   * Graceful close: stop accepting, let in-flight requests finish (streams are aborted), close idle
   * keep-alive sockets; after `closeTimeoutMs` remaining connections are cut.
   */
  close(): Promise<void>;
}

/** After a too-large body was answered, how much more of it is read and discarded before the socket is cut. */
const DRAIN_LIMIT = 4 * 1024 * 1024;
const EMPTY_HEADERS_ERROR = 'handler returned no response';

/** Headers as one lowercase-keyed object; repeated headers are joined with ', '. */
function headerMap(raw: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const prev = out[name];
    out[name] = prev === undefined ? raw[i + 1]! : `${prev}, ${raw[i + 1]!}`;
  }
  return out;
}

function hasBody(headers: Record<string, string>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The plain request of one node request: a class (one hidden class, a shared `signal` getter) rather
 * than an object literal with a getter closure, which V8 builds as a slow dictionary object.
 * The AbortSignal is created when the handler first asks for it (event streams).
 */
class NodePlainRequest implements PlainRequest {
  bodyTooLarge?: boolean;
  bodyStream?: AsyncIterable<Uint8Array>;
  remoteAddress?: string;
  private controller: AbortController | null = null;
  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: Record<string, string>,
    readonly body: Uint8Array | null,
    private readonly res: http.ServerResponse,
    private readonly owner: RequestListener,
  ) {}
  get signal(): AbortSignal {
    if (this.controller === null) {
      const c = (this.controller = new AbortController());
      const res = this.res;
      const streams = this.owner.streams;
      streams.add(c);
      res.once('close', () => {
        streams.delete(c);
        if (!res.writableFinished) c.abort();
      });
      if (this.owner.closing) c.abort();
    }
    return this.controller.signal;
  }
}

/** Options of {@link requestListener}. */
export interface RequestListenerOptions {
  /** Request body limit; default the handler's `bodyLimit` or 256 KB (the contract's). */
  maxBodyBytes?: number;
}

/**
 * A node `(req, res)` request listener over a plain handler (what {@link listen} serves); also the
 * base of `createNodeHandler`, which frameworks mount.
 */
export interface RequestListener {
  (req: http.IncomingMessage, res: http.ServerResponse): void;
  /** Abort controllers of in-flight requests whose handler took a signal (event streams). */
  readonly streams: Set<AbortController>;
  /** Set when the server is closing: answers carry `Connection: close`, new streams are aborted. */
  closing: boolean;
}

/** Build the `(req, res)` listener of `handler`. */
export function requestListener(handler: Handler, options: RequestListenerOptions = {}): RequestListener {
  const streams = new Set<AbortController>();
  const listener = Object.assign(
    (req: http.IncomingMessage, res: http.ServerResponse) => {
      onRequest(req, res).catch((error: unknown) => {
        // Reached when the client left mid-body or writing the response failed; the handler never throws.
        if (req.socket.destroyed) return;
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
          res.end(`{"error":{"code":"INTERNAL_ERROR","message":"The response could not be written.","retryable":true}}`);
        } else res.destroy(error instanceof Error ? error : undefined);
      });
    },
    { streams, closing: false },
  );

  async function readBody(req: http.IncomingMessage, declaredLength: string | undefined, maxBody: number): Promise<{ body: Uint8Array | null; tooLarge: boolean }> {
    const declared = Number(declaredLength);
    if (declared > maxBody) return { body: null, tooLarge: true };
    const chunks: Buffer[] = [];
    let size = 0;
    return new Promise((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBody) {
          req.off('data', onData);
          req.off('end', onEnd);
          chunks.length = 0;
          resolve({ body: null, tooLarge: true });
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = () => {
        resolve({ body: chunks.length === 0 ? new Uint8Array(0) : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), tooLarge: false });
      };
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', reject);
      req.on('close', () => {
        if (!req.complete) reject(new Error('client went away before sending the whole body'));
      });
    });
  }

  /** Discard the rest of an oversized body so the client can read our answer, then cut the socket. */
  function drainAndClose(req: http.IncomingMessage, res: http.ServerResponse): void {
    let drained = 0;
    const socket = req.socket;
    const cut = () => socket.destroy();
    if (req.complete) return;
    req.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > DRAIN_LIMIT) cut();
    });
    req.resume();
    res.on('finish', () => {
      if (req.complete) return;
      const timer = setTimeout(cut, 2_000);
      timer.unref();
      req.on('end', () => clearTimeout(timer));
    });
  }

  async function onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const headers = headerMap(req.rawHeaders);
    let body: Uint8Array | null = null;
    let tooLarge = false;
    let streamed = false;
    if (hasBody(headers)) {
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      const limit = options.maxBodyBytes ?? handler.bodyLimit?.(method, url) ?? MAX_REQUEST_BODY;
      // Raw-bytes operations (uploads) read the body as it arrives; it is never held whole here.
      streamed = options.maxBodyBytes === undefined && handler.streamsBody?.(method, url) === true && !(Number(headers['content-length']) > limit);
      if (!streamed) {
        ({ body, tooLarge } = await readBody(req, headers['content-length'], limit));
        if (tooLarge) drainAndClose(req, res);
      }
    }
    const plain: PlainRequest = new NodePlainRequest(req.method ?? 'GET', req.url ?? '/', headers, body, res, listener);
    if (tooLarge) plain.bodyTooLarge = true;
    if (streamed) plain.bodyStream = req;
    const remote = req.socket.remoteAddress;
    if (remote !== undefined) plain.remoteAddress = remote;

    const response = await handler(plain);
    if (!response) throw new Error(EMPTY_HEADERS_ERROR);
    // A streamed body the handler did not read to its end (a refusal): discard the rest, then close.
    const unread = streamed && !req.complete;
    if (unread) drainAndClose(req, res);
    if (tooLarge || unread || listener.closing) response.headers.connection = 'close';
    if (response.stream) await writeStream(req, res, response);
    else writeComplete(req, res, response);
  }

  function writeComplete(req: http.IncomingMessage, res: http.ServerResponse, response: PlainResponse): void {
    const { body, headers } = response;
    if (body === undefined || req.method === 'HEAD' || response.status === 204 || response.status === 304) {
      if (body !== undefined && headers['content-length'] === undefined) {
        headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
      } else if (body === undefined && headers['content-length'] === undefined && response.status !== 204 && response.status !== 304) {
        headers['content-length'] = '0';
      }
      res.writeHead(response.status, headers);
      res.end();
      return;
    }
    // A text body goes out as its UTF-8 bytes, encoded once here: node would otherwise flatten it
    // for its length and again, prefixed with the head, for the socket write (the answers are
    // built as concatenated strings). Up to 4 KB the bytes come from node's buffer pool.
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    headers['content-length'] = String(bytes.byteLength);
    res.writeHead(response.status, headers);
    res.end(bytes);
  }

  async function writeStream(req: http.IncomingMessage, res: http.ServerResponse, response: PlainResponse): Promise<void> {
    res.writeHead(response.status, response.headers);
    res.flushHeaders();
    const iterator = response.stream![Symbol.asyncIterator]();
    const gone = () => res.destroyed || res.writableEnded;
    try {
      while (!gone()) {
        const next = await iterator.next();
        if (next.done) break;
        if (gone()) break;
        if (!res.write(next.value)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              res.off('drain', done);
              res.off('close', done);
              resolve();
            };
            res.on('drain', done);
            res.on('close', done);
          });
        }
      }
    } catch {
      // A failing stream cannot change the status any more: cut the connection so the client sees it.
      res.destroy();
      return;
    } finally {
      if (gone()) await iterator.return?.();
    }
    if (req.method !== 'HEAD' || !gone()) res.end();
  }

  return listener;
}

/**
 * Serve `handler` over node:http.
 * @example
 * const { url, close } = await listen(createApiHandler({ engine }), { port: 0 });
 */
export async function listen(handler: Handler, options: ListenOptions = {}): Promise<Listening> {
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  const requests = requestListener(handler, options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes });
  const streams = requests.streams;

  const server = http.createServer(
    {
      headersTimeout: 20_000,
      requestTimeout: 60_000,
      keepAliveTimeout: 5_000,
      noDelay: true,
    },
    requests,
  );

  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closed: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    server,
    close() {
      closed ??= new Promise<void>((resolve) => {
        requests.closing = true;
        for (const c of streams) c.abort();
        const timer = setTimeout(() => server.closeAllConnections(), closeTimeoutMs);
        timer.unref();
        // Idle keep-alive sockets are closed now; busy ones close after their response (Connection: close).
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        idle.unref();
        server.close(() => {
          clearTimeout(timer);
          clearInterval(idle);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closed;
    },
  };
}
