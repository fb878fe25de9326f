/**
 * Test kit of the browser app: a server (engine with the review kit's runner, browser app mounted in
 * front of the API handler) on a loopback port, and the person's and agents' moves over HTTP.
 * @remarks The listener, the storage and the API handler's factory are passed in (transports/web depends on
 * neither transports/, adapters/ nor the API layer).
 * @module
 */
import type { Handler, PlainRequest, PlainResponse } from '../../src/api/types.ts';
import { systemClock, type Clock } from '../../src/clock.ts';
import { createEngine, type Engine } from '../../src/engine.ts';
import type { Storage } from '../../src/ports.ts';
import { createBrowserApp, type BrowserApp } from './app.ts';
import { reviewRunner } from './review-kit.ts';

/** How the kit listens: `transports/http` `listen` fits. */
export type Listen = (handler: Handler, options: { host: string; port: number }) => Promise<{ url: string; close(): Promise<void> }>;

/** The kit server's operator key. */
export const OPERATOR_KEY = 'operator-key-for-web-tests-0001';

/** A running kit server. */
export interface Running {
  url: string;
  engine: Engine;
  app: BrowserApp;
  close(): Promise<void>;
}

/** How the kit builds the API handler: `createApiHandler` fits. */
export type ApiFactory = (options: { engine: Engine; operatorKey: string; localAccount: string; onResponse: BrowserApp['recordRequest'] }) => Handler;

/** What the kit server is made of. */
export interface KitParts {
  listen: Listen;
  storage: Storage;
  createApiHandler: ApiFactory;
}

/** Start a kit server on 127.0.0.1, port 0. */
export async function startWebServer({ listen, storage, createApiHandler }: KitParts, options: { clock?: Clock; keepAliveMs?: number } = {}): Promise<Running> {
  let active: Handler = async (): Promise<PlainResponse> => ({ status: 503, headers: {}, body: '' });
  const listening = await listen((r: PlainRequest) => active(r), { host: '127.0.0.1', port: 0 });
  let engine: Engine | null = null;
  engine = createEngine({ storage, baseUrl: listening.url, clock: options.clock ?? systemClock, runner: reviewRunner(() => engine!) });
  const app = createBrowserApp(engine, { localAccount: 'demo', keepAliveMs: options.keepAliveMs });
  active = app.mount(createApiHandler({ engine, operatorKey: OPERATOR_KEY, localAccount: 'demo', onResponse: (e) => app.recordRequest(e) }));
  const ready = engine;
  return {
    url: listening.url,
    engine: ready,
    app,
    async close() {
      await listening.close();
      await ready.close();
    },
  };
}

/** POST /operator/v1/sign-in-links with the operator key. */
export async function signInLink(s: Running, body: unknown = {}): Promise<Response> {
  return fetch(`${s.url}/operator/v1/sign-in-links`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPERATOR_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Sign in through a fresh link: the cookie header to send and the session's CSRF token. */
export async function signIn(s: Running, account?: string): Promise<{ cookie: string; csrf: string }> {
  const { data } = (await (await signInLink(s, account ? { account } : {})).json()) as { data: { url: string } };
  const res = await fetch(data.url, { redirect: 'manual' });
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const html = await (await fetch(`${s.url}/settings/api`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(html)![1]! };
}

/** A form post with the session cookie. */
export function post(s: Running, path: string, cookie: string, fields: Record<string, string | string[]>): Promise<Response> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
  return fetch(`${s.url}${path}`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
}

/** Create a document through the API; its ref and Service-Revision. */
export async function createDocument(s: Running, token: string): Promise<{ documentRef: string; revision: string }> {
  const res = await fetch(`${s.url}/api/v1/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'web-test-create-doc-0001' },
    body: JSON.stringify({ v: 1, title: 'Live notes' }),
  });
  if (res.status !== 201) throw new Error(`document create: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { data: { documentRef: string } };
  return { documentRef: body.data.documentRef, revision: res.headers.get('service-revision')! };
}

/** Append a paragraph through the API; the new Service-Revision. */
export async function addParagraph(s: Running, token: string, documentRef: string, revision: string, text: string, key: string): Promise<string> {
  const res = await fetch(`${s.url}/api/v1/documents/${documentRef}/mutations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key, 'service-if-revision': revision },
    body: JSON.stringify({ v: 1, intent: 'add a paragraph', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: text }] } }),
  });
  if (res.status !== 200) throw new Error(`mutation: ${res.status} ${await res.text()}`);
  return res.headers.get('service-revision')!;
}


/** Read an event stream's body: `until(text)` reads until the text arrived; `text()` is all read so far. */
export function streamText(res: Response): { until(needle: string): Promise<void>; text(): string } {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    async until(needle) {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${needle}: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
    },
    text: () => text,
  };
}
