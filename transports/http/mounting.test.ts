/**
 * The recipes of docs/mounting.md, run: the API mounted under `/kw` in Express, Fastify and Hono's
 * node server on port 0, with real requests (create a document; Location and browserHref under /kw;
 * reads, errors and the raw body pass through the framework untouched).
 */
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { serve as honoServe, type HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createEngine, type Engine } from '../../src/engine.ts';
import { createNodeHandler } from './index.ts';

const OPERATOR_KEY = 'mounting-test-operator-key';

interface Mounted {
  url: string;
  close(): Promise<void>;
}

/** The prefix-relative engine every recipe mounts: links are `/kw/…`. */
const engineForKw = () => createEngine({ storage: memoryStorage(), baseUrl: '/kw' });

async function mountExpress(engine: Engine): Promise<Mounted> {
  const kw = createNodeHandler(engine, { prefix: '/kw', operatorKey: OPERATOR_KEY });
  const app = express();
  app.use('/kw', kw); // before any body parser
  app.use(express.json());
  app.post('/echo', (req, res) => {
    res.json({ echoed: req.body });
  });
  const server = await new Promise<http.Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeNode(server, kw.close) };
}

async function mountFastify(engine: Engine): Promise<Mounted> {
  const kw = createNodeHandler(engine, { prefix: '/kw', operatorKey: OPERATOR_KEY });
  const app = Fastify();
  await app.register(async (scope) => {
    // Leave the body unread: the API reads (and limits) it itself.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const route = (request: { raw: http.IncomingMessage }, reply: { hijack(): void; raw: http.ServerResponse }) => {
      reply.hijack();
      kw(request.raw, reply.raw);
    };
    scope.all('/kw', route);
    scope.all('/kw/*', route);
  });
  app.post('/echo', async (request) => ({ echoed: request.body }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    async close() {
      kw.close();
      await app.close();
    },
  };
}

async function mountHono(engine: Engine): Promise<Mounted> {
  const kw = createNodeHandler(engine, { prefix: '/kw', operatorKey: OPERATOR_KEY });
  const app = new Hono<{ Bindings: HttpBindings }>();
  const route = (c: { env: HttpBindings }) => {
    kw(c.env.incoming, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  };
  app.all('/kw', route);
  app.all('/kw/*', route);
  app.post('/echo', async (c) => c.json({ echoed: await c.req.json() }));
  const server = await new Promise<http.Server>((resolve) => {
    const s = honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as http.Server)) as http.Server;
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeNode(server, kw.close) };
}

function closeNode(server: http.Server, stopStreams: () => void): Promise<void> {
  stopStreams();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

const recipes: [string, (engine: Engine) => Promise<Mounted>][] = [
  ['Express', mountExpress],
  ['Fastify', mountFastify],
  ['Hono (node server)', mountHono],
];

for (const [name, mount] of recipes) {
  test(`${name}: the API under /kw creates a document with Location and browserHref under /kw, reads it, and leaves the other routes alone`, async () => {
    const engine = engineForKw();
    const app = await mount(engine);
    try {
      const cred = await fetch(`${app.url}/kw/operator/v1/credentials`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATOR_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: name, scopes: ['document:create', 'document:read', 'document:write'] }),
      });
      assert.is(cred.status, 201, await cred.clone().text());
      const token = ((await cred.json()) as { data: { token: string } }).data.token;
      const auth = { authorization: `Bearer ${token}` };

      const created = await fetch(`${app.url}/kw/api/v1/documents`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': `mount-${name.slice(0, 4)}-create-0001` },
        body: JSON.stringify({ v: 1, title: `Mounted in ${name}` }),
      });
      assert.is(created.status, 201, await created.clone().text());
      const doc = ((await created.json()) as { data: { documentRef: string; browserHref: string } }).data;
      assert.is(created.headers.get('location'), `/kw/api/v1/documents/${doc.documentRef}`);
      assert.is(doc.browserHref, `/kw/documents/${doc.documentRef}`);

      // The Location leads back to the document through the framework.
      const read = await fetch(`${app.url}${created.headers.get('location')}`, { headers: auth });
      assert.is(read.status, 200);
      const body = (await read.json()) as { data: { title: string; browserHref: string } };
      assert.is(body.data.title, `Mounted in ${name}`);
      assert.is(body.data.browserHref, doc.browserHref);

      // Errors keep the contract's envelope; the home page answers at /kw.
      const missing = await fetch(`${app.url}/kw/api/v1/nowhere`, { headers: auth });
      assert.is(missing.status, 404);
      assert.is(((await missing.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
      const home = await fetch(`${app.url}/kw`);
      assert.is(home.status, 200);
      assert.match(home.headers.get('content-type') ?? '', /^text\/html/);

      // The framework's own routes (and its JSON body parsing) still work beside the mount.
      const echo = await fetch(`${app.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      assert.is(echo.status, 200);
      assert.equal(await echo.json(), { echoed: { a: 1 } });
    } finally {
      await app.close();
      await engine.close();
    }
  });
}

test('a prefix the engine baseUrl does not end with is refused (links would leave the mount); prefixes are normalized', () => {
  const engine = createEngine({ storage: memoryStorage(), baseUrl: 'http://127.0.0.1:3000' });
  assert.throws(() => createNodeHandler(engine, { prefix: '/kw' }), /baseUrl .* must end with the prefix \/kw/);
  assert.is(createNodeHandler(engine).prefix, '');
  const kw = createEngine({ storage: memoryStorage(), baseUrl: 'http://127.0.0.1:3000/kw' });
  assert.is(createNodeHandler(kw, { prefix: 'kw/' }).prefix, '/kw');
});

test.run();
