/**
 * The node:http listener over plain handlers: header and body mapping, the body limit, streaming,
 * disconnect signals, HEAD, and graceful close.
 */
import http from 'node:http';
import net from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Handler, PlainRequest } from '../../src/api/types.ts';
import { listen } from './listener.ts';

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function send(url: string, options: { method?: string; headers?: Record<string, string | string[]>; body?: string | Buffer; agent?: http.Agent | false } = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers ?? {}, agent: options.agent ?? false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** A handler that answers the request it saw as JSON. */
const echo: Handler = async (req) => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    method: req.method,
    url: req.url,
    headers: req.headers,
    body: req.body === null ? null : Buffer.from(req.body).toString('utf8'),
    bodyLength: req.body?.byteLength ?? null,
    tooLarge: req.bodyTooLarge ?? false,
  }),
});

async function withServer(handler: Handler, fn: (url: string) => Promise<void>, options: { maxBodyBytes?: number } = {}): Promise<void> {
  const server = await listen(handler, { port: 0, ...options });
  try {
    await fn(server.url);
  } finally {
    await server.close();
  }
}

test('listen on port 0 gives a url and port on 127.0.0.1', async () => {
  const server = await listen(echo, { port: 0 });
  try {
    assert.ok(server.port > 0);
    assert.is(server.url, `http://127.0.0.1:${server.port}`);
    assert.ok(server.server.listening);
  } finally {
    await server.close();
  }
  assert.not.ok(server.server.listening);
});

test('method, url with query, lowercase headers (duplicates joined with ", ") and body reach the handler', async () => {
  await withServer(echo, async (url) => {
    const r = await send(`${url}/a/b?x=1&y=%20`, {
      method: 'POST',
      headers: { 'X-Custom': ['one', 'two'], 'Content-Type': 'application/json', Authorization: 'Bearer t' },
      body: '{"a":"é"}',
    });
    assert.is(r.status, 200);
    const seen = JSON.parse(r.body);
    assert.is(seen.method, 'POST');
    assert.is(seen.url, '/a/b?x=1&y=%20');
    assert.is(seen.headers['x-custom'], 'one, two');
    assert.is(seen.headers['content-type'], 'application/json');
    assert.is(seen.headers.authorization, 'Bearer t');
    assert.is(seen.body, '{"a":"é"}');
    assert.is(seen.bodyLength, 10);
    assert.ok(Object.keys(seen.headers).every((k: string) => k === k.toLowerCase()));
  });
});

test('a request without a body gives body null; Content-Length is set on complete responses', async () => {
  await withServer(echo, async (url) => {
    const r = await send(`${url}/`);
    const seen = JSON.parse(r.body);
    assert.is(seen.body, null);
    assert.is(r.headers['content-length'], String(Buffer.byteLength(r.body)));
    assert.is(r.headers['transfer-encoding'], undefined);
  });
});

test('chunked request bodies are read', async () => {
  await withServer(echo, async (url) => {
    const r = await new Promise<Raw>((resolve, reject) => {
      const req = http.request(`${url}/`, { method: 'POST', agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.write('abc');
      setTimeout(() => {
        req.write('def');
        req.end();
      }, 10);
    });
    assert.is(JSON.parse(r.body).body, 'abcdef');
  });
});

test('body limit: exactly maxBodyBytes passes; one byte more gives bodyTooLarge, an answer, and Connection: close', async () => {
  await withServer(
    echo,
    async (url) => {
      const ok = await send(`${url}/`, { method: 'POST', body: 'x'.repeat(1024) });
      assert.is(JSON.parse(ok.body).bodyLength, 1024);
      assert.is(JSON.parse(ok.body).tooLarge, false);
      const over = await send(`${url}/`, { method: 'POST', body: 'x'.repeat(1025) });
      const seen = JSON.parse(over.body);
      assert.is(seen.tooLarge, true);
      assert.is(seen.body, null);
      assert.is(over.headers.connection, 'close');
    },
    { maxBodyBytes: 1024 },
  );
});

test('the default limit is 256 KB, and a large oversized body (declared or chunked) still gets its answer', async () => {
  await withServer(echo, async (url) => {
    const exact = await send(`${url}/`, { method: 'POST', body: Buffer.alloc(256 * 1024, 97) });
    assert.is(JSON.parse(exact.body).bodyLength, 256 * 1024);
    const over = await send(`${url}/`, { method: 'POST', body: Buffer.alloc(256 * 1024 + 1, 97) });
    assert.is(JSON.parse(over.body).tooLarge, true);
    const big = await send(`${url}/`, { method: 'POST', body: Buffer.alloc(3 * 1024 * 1024, 97) });
    assert.is(JSON.parse(big.body).tooLarge, true);
    const chunked = await new Promise<Raw>((resolve, reject) => {
      const req = http.request(`${url}/`, { method: 'POST', agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      for (let i = 0; i < 8; i++) req.write(Buffer.alloc(64 * 1024, 98));
      req.end();
    });
    assert.is(JSON.parse(chunked.body).tooLarge, true);
  });
});

test('a streamed response is written chunk by chunk as the handler produces it', async () => {
  let release: () => void = () => {};
  const handler: Handler = async () => ({
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    stream: (async function* () {
      yield 'retry: 5000\n\n';
      await new Promise<void>((r) => (release = r));
      yield new TextEncoder().encode('data: second\n\n');
    })(),
  });
  await withServer(handler, async (url) => {
    const chunks: string[] = [];
    await new Promise<void>((resolve, reject) => {
      http
        .get(`${url}/`, { agent: false }, (res) => {
          assert.is(res.headers['content-type'], 'text/event-stream');
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            chunks.push(c);
            if (chunks.length === 1) release(); // the first chunk arrived while the handler was still waiting
          });
          res.on('end', resolve);
        })
        .on('error', reject);
    });
    assert.equal(chunks.join(''), 'retry: 5000\n\ndata: second\n\n');
    assert.is(chunks[0], 'retry: 5000\n\n');
  });
});

test('the request signal aborts when the client disconnects', async () => {
  let signal: AbortSignal | undefined;
  let aborted: () => void = () => {};
  const gotAbort = new Promise<void>((r) => (aborted = r));
  const handler: Handler = async (req: PlainRequest) => {
    signal = req.signal;
    signal!.addEventListener('abort', () => aborted());
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      stream: (async function* () {
        yield ': open\n\n';
        while (!signal!.aborted) {
          await new Promise((r) => setTimeout(r, 10));
          yield ': keep-alive\n\n';
        }
      })(),
    };
  };
  await withServer(handler, async (url) => {
    await new Promise<void>((resolve) => {
      const req = http.get(`${url}/`, { agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => {});
    });
    await Promise.race([gotAbort, new Promise((_, reject) => setTimeout(() => reject(new Error('no abort')), 2000))]);
    assert.ok(signal?.aborted);
  });
});

test('the signal stays unaborted for a request that completes normally', async () => {
  let signal: AbortSignal | undefined;
  await withServer(
    async (req) => {
      signal = req.signal;
      return { status: 204, headers: {} };
    },
    async (url) => {
      const r = await send(`${url}/`);
      assert.is(r.status, 204);
      await new Promise((r2) => setTimeout(r2, 20));
      assert.is(signal?.aborted, false);
    },
  );
});

test('HEAD answers keep the handler content-length and send no body; 304 has no body', async () => {
  await withServer(
    async (req) =>
      req.method === 'HEAD'
        ? { status: 200, headers: { 'content-type': 'application/json', 'content-length': '42' } }
        : { status: 304, headers: { etag: 'W/"x"' }, body: 'ignored' },
    async (url) => {
      const head = await send(`${url}/`, { method: 'HEAD' });
      assert.is(head.status, 200);
      assert.is(head.headers['content-length'], '42');
      assert.is(head.body, '');
      const nm = await send(`${url}/`);
      assert.is(nm.status, 304);
      assert.is(nm.body, '');
      assert.is(nm.headers.etag, 'W/"x"');
    },
  );
});

test('keep-alive connections serve several requests', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const server = await listen(echo, { port: 0 });
  try {
    const sockets = new Set<unknown>();
    server.server.on('connection', (sock) => sockets.add(sock));
    for (let i = 0; i < 5; i++) assert.is((await send(`${server.url}/${i}`, { agent })).status, 200);
    assert.is(sockets.size, 1);
  } finally {
    agent.destroy();
    await server.close();
  }
});

test('graceful close: in-flight requests finish, idle keep-alive sockets close, new connections are refused', async () => {
  let started: () => void = () => {};
  const inFlight = new Promise<void>((r) => (started = r));
  const slow: Handler = async (req) => {
    if (req.url === '/slow') {
      started();
      await new Promise((r) => setTimeout(r, 150));
    }
    return { status: 200, headers: {}, body: req.url };
  };
  const server = await listen(slow, { port: 0 });
  const agent = new http.Agent({ keepAlive: true });
  // an idle keep-alive socket
  assert.is((await send(`${server.url}/warm`, { agent })).status, 200);
  const pending = send(`${server.url}/slow`);
  await inFlight;
  const t0 = Date.now();
  const closing = server.close();
  const r = await pending;
  assert.is(r.status, 200);
  assert.is(r.body, '/slow');
  await closing;
  assert.ok(Date.now() - t0 < 2000, 'close does not wait for idle keep-alive sockets');
  const refused = await new Promise<boolean>((resolve) => {
    const sock = net.connect(server.port, '127.0.0.1');
    sock.on('connect', () => {
      sock.destroy();
      resolve(false);
    });
    sock.on('error', () => resolve(true));
  });
  assert.ok(refused);
  agent.destroy();
});

test('close aborts open streams so it does not wait for them', async () => {
  const handler: Handler = async (req) => ({
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    stream: (async function* () {
      yield ': open\n\n';
      while (!req.signal!.aborted) {
        await new Promise((r) => setTimeout(r, 10));
        if (!req.signal!.aborted) yield ': keep-alive\n\n';
      }
    })(),
  });
  const server = await listen(handler, { port: 0 });
  const ended = new Promise<void>((resolve) => {
    http.get(`${server.url}/`, { agent: false }, (res) => {
      res.on('data', () => {});
      res.on('end', resolve);
      res.on('error', () => resolve());
    }).on('error', () => resolve());
  });
  await new Promise((r) => setTimeout(r, 50));
  const t0 = Date.now();
  await server.close();
  await ended;
  assert.ok(Date.now() - t0 < 1000);
});

test('a failing stream cuts the connection (the status was already sent)', async () => {
  const handler: Handler = async () => ({
    status: 200,
    headers: {},
    stream: (async function* () {
      yield 'partial';
      throw new Error('stream broke');
    })(),
  });
  await withServer(handler, async (url) => {
    const outcome = await new Promise<string>((resolve) => {
      http
        .get(`${url}/`, { agent: false }, (res) => {
          res.on('data', () => {});
          res.on('end', () => resolve('end'));
          res.on('error', () => resolve('error'));
          res.on('aborted', () => resolve('error'));
        })
        .on('error', () => resolve('error'));
    });
    assert.is(outcome, 'error');
  });
});

test('a malformed request line gets 400 and the server keeps serving', async () => {
  await withServer(echo, async (url) => {
    const port = Number(new URL(url).port);
    const reply = await new Promise<string>((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => sock.write('NOT HTTP\r\n\r\n'));
      let data = '';
      sock.on('data', (d) => (data += d.toString()));
      sock.on('close', () => resolve(data));
      sock.on('error', () => resolve(data));
    });
    assert.match(reply, /^HTTP\/1\.1 400/);
    assert.is((await send(`${url}/`)).status, 200);
  });
});

test.run();
