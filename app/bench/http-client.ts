/**
 * The HTTP/1.1 client of `kw bench`: keep-alive connections over net/tls sockets, one request in
 * flight per connection, responses parsed by hand (status line, the few headers the bench reads,
 * a body by Content-Length or chunked). node:http's client costs 2-8× the CPU per request of
 * autocannon's (measured: ~80-330 µs against ~35 µs at load ~15), and a load generator that shares
 * the cores with the server must be light, or it measures itself; fetch costs more still.
 * @module
 */
import net from 'node:net';
import tls from 'node:tls';

/** A response: status, the headers (names lower-case; the last of repeated ones), the body. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

class HttpError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const CRLF2 = Buffer.from('\r\n\r\n');

interface Pending {
  resolve(r: RawResponse): void;
  reject(e: Error): void;
  head: boolean;
  timer: NodeJS.Timeout;
}

/** One keep-alive connection; requests queue on it one at a time. */
class Connection {
  socket: net.Socket;
  busy = false;
  dead = false;
  private buffer: Buffer = Buffer.alloc(0);
  private pending: Pending | null = null;
  // The response being read.
  private status = 0;
  private headers: Record<string, string> = {};
  private bodyLength = -1;
  private chunked = false;
  private bodyParts: Buffer[] = [];
  private inBody = false;
  private close = false;

  constructor(url: URL, onDead: (c: Connection) => void) {
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    this.socket = url.protocol === 'https:' ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host }) : net.connect({ host, port });
    this.socket.setNoDelay(true);
    this.socket.on('data', (d: Buffer) => this.onData(d));
    const fail = (error: Error) => {
      this.dead = true;
      onDead(this);
      const p = this.pending;
      this.pending = null;
      if (p) {
        clearTimeout(p.timer);
        p.reject(error);
      }
    };
    this.socket.on('error', fail);
    this.socket.on('close', () => fail(new HttpError('the server closed the connection', 'ECONNRESET')));
  }

  send(request: string | Buffer, head: boolean, timeoutMs: number): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.socket.destroy(new HttpError(`no answer within ${timeoutMs} ms`, 'timeout'));
      }, timeoutMs);
      this.pending = { resolve, reject, head, timer };
      this.status = 0;
      this.headers = {};
      this.bodyLength = -1;
      this.chunked = false;
      this.bodyParts = [];
      this.inBody = false;
      this.close = false;
      this.socket.write(request);
    });
  }

  private onData(data: Buffer): void {
    this.buffer = this.buffer.length === 0 ? data : Buffer.concat([this.buffer, data]);
    try {
      this.parse();
    } catch (error) {
      this.socket.destroy(error as Error);
    }
  }

  private parse(): void {
    if (!this.pending) {
      if (this.buffer.length > 0) throw new HttpError('the server sent bytes nobody asked for', 'EPROTO');
      return;
    }
    if (!this.inBody) {
      const end = this.buffer.indexOf(CRLF2);
      if (end < 0) {
        if (this.buffer.length > 64 * 1024) throw new HttpError('response headers over 64 KiB', 'EPROTO');
        return;
      }
      const lines = this.buffer.toString('latin1', 0, end).split('\r\n');
      this.buffer = this.buffer.subarray(end + 4);
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
      if (!m) throw new HttpError(`not an HTTP/1.1 response: ${lines[0]!.slice(0, 80)}`, 'EPROTO');
      this.status = Number(m[1]);
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i]!;
        const colon = line.indexOf(':');
        if (colon > 0) this.headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      if (this.status >= 100 && this.status < 200) return this.parse(); // an interim answer: the real one follows
      this.chunked = /chunked/i.test(this.headers['transfer-encoding'] ?? '');
      const length = this.headers['content-length'];
      const bodiless = this.pending.head || this.status === 204 || this.status === 304;
      this.bodyLength = bodiless ? 0 : length !== undefined ? Number(length) : this.chunked ? -1 : -2;
      this.close = /close/i.test(this.headers.connection ?? '');
      this.inBody = true;
      if (this.bodyLength === -2) throw new HttpError('a response without Content-Length or chunked encoding', 'EPROTO');
    }
    if (this.chunked && this.bodyLength !== 0) {
      for (;;) {
        const eol = this.buffer.indexOf('\r\n');
        if (eol < 0) return;
        const size = Number.parseInt(this.buffer.toString('latin1', 0, eol), 16);
        if (!Number.isFinite(size)) throw new HttpError('a bad chunk size', 'EPROTO');
        if (size === 0) {
          // The last chunk, (no trailers), then CRLF.
          const endAt = this.buffer.indexOf(CRLF2, eol - 2);
          if (endAt < 0) return;
          this.buffer = this.buffer.subarray(endAt + 4);
          return this.finish(Buffer.concat(this.bodyParts));
        }
        if (this.buffer.length < eol + 2 + size + 2) return;
        this.bodyParts.push(this.buffer.subarray(eol + 2, eol + 2 + size));
        this.buffer = this.buffer.subarray(eol + 2 + size + 2);
      }
    }
    if (this.buffer.length < this.bodyLength) return;
    const body = this.buffer.subarray(0, this.bodyLength);
    this.buffer = this.buffer.subarray(this.bodyLength);
    this.finish(body);
  }

  private finish(body: Buffer): void {
    const p = this.pending!;
    this.pending = null;
    this.inBody = false;
    clearTimeout(p.timer);
    if (this.close) this.socket.end();
    p.resolve({ status: this.status, headers: this.headers, body });
  }
}

/** A keep-alive client for one origin: at most `sockets` connections, a request waits for a free one. */
export function leanHttpClient(base: string, sockets: number) {
  const url = new URL(base);
  const prefix = url.pathname.replace(/\/$/, '');
  const hostHeader = url.host;
  const idle: Connection[] = [];
  const all = new Set<Connection>();
  const waiting: ((c: Connection) => void)[] = [];
  const onDead = (c: Connection) => {
    all.delete(c);
    const i = idle.indexOf(c);
    if (i >= 0) idle.splice(i, 1);
    // A waiter gets a fresh connection in place of the dead one.
    const next = waiting.shift();
    if (next) next(open());
  };
  const open = () => {
    const c = new Connection(url, onDead);
    all.add(c);
    return c;
  };
  const acquire = (): Promise<Connection> => {
    const c = idle.pop();
    if (c) return Promise.resolve(c);
    if (all.size < sockets) return Promise.resolve(open());
    return new Promise((done) => waiting.push(done));
  };
  const release = (c: Connection) => {
    if (c.dead || c.socket.destroyed || c.socket.writableEnded) return;
    const next = waiting.shift();
    if (next) next(c);
    else idle.push(c);
  };
  return {
    async send(method: string, path: string, headers: Record<string, string>, body?: string, timeoutMs = 30_000): Promise<RawResponse> {
      let head = `${method} ${prefix}${path} HTTP/1.1\r\nhost: ${hostHeader}\r\n`;
      for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
      const payload = body === undefined ? `${head}\r\n` : `${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const c = await acquire();
      try {
        return await c.send(payload, method === 'HEAD', timeoutMs);
      } finally {
        release(c);
      }
    },
    close() {
      for (const c of all) c.socket.destroy();
      all.clear();
      idle.length = 0;
    },
  };
}
