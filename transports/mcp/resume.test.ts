/**
 * Resumable MCP streams over Streamable HTTP (MCP 2025-11-25; issue 29 item 10): a POST's SSE answer
 * opens with a priming event (an id, `retry`, empty data); every event has an id; after a dropped
 * connection a GET with Last-Event-ID delivers what the client missed — here the tool call's result,
 * which the server produced after the client had gone. Raw HTTP over a real socket.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import type { Handler } from '../../src/api/types.ts';
import { createEngine } from '../../src/engine.ts';
import { listen } from '../http/index.ts';
import { memoryEventStore } from './event-store.ts';
import { mountMcp, MCP_RETRY_MS } from './index.ts';

interface SseEvent {
  id?: string;
  retry?: string;
  data: string;
}

/** Parse SSE events from a response as they arrive; `onEvent` returning true drops the connection. */
function readEvents(res: IncomingMessage, onEvent: (e: SseEvent) => boolean | void): Promise<SseEvent[]> {
  return new Promise((resolve) => {
    const events: SseEvent[] = [];
    let buffer = '';
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        resolve(events);
      }
    };
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      for (let cut = buffer.indexOf('\n\n'); cut !== -1 && !done; cut = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const e: SseEvent = { data: '' };
        const data: string[] = [];
        for (const line of block.split('\n')) {
          const m = /^([a-z]+): ?(.*)$/i.exec(line);
          if (!m) continue;
          if (m[1] === 'id') e.id = m[2]!;
          else if (m[1] === 'retry') e.retry = m[2]!;
          else if (m[1] === 'data') data.push(m[2]!);
        }
        e.data = data.join('\n');
        if (block.startsWith(':')) continue; // a comment (keep-alive)
        events.push(e);
        if (onEvent(e) === true) {
          res.destroy(); // the connection drops
          finish();
        }
      }
    });
    res.on('end', finish);
    res.on('close', finish);
  });
}

test('a tool call whose stream drops after the priming event is resumed with GET and Last-Event-ID: the result arrives', async () => {
  const operatorKey = randomBytes(32).toString('base64url');
  const engine = createEngine({ storage: memoryStorage() });
  const api = createApiHandler({ engine, operatorKey, log: () => undefined });
  // GET /api/v1/auth answers after 400 ms once the session is up: the result comes after the drop.
  let slow = false;
  const handler: Handler = async (request) => {
    if (slow && request.url.startsWith('/api/v1/auth')) await new Promise((r) => setTimeout(r, 400));
    return api(request);
  };
  const listening = await listen(handler, { port: 0 });
  const mcp = mountMcp(listening.server, { handler });
  try {
    const made = await fetch(`${listening.url}/operator/v1/credentials`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'mcp', scopes: ['document:read'] }),
    });
    const token = ((await made.json()) as { data: { token: string } }).data.token;
    const base = { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const post = (headers: Record<string, string>, body: object, onEvent: (e: SseEvent) => boolean | void = () => {}) =>
      new Promise<{ res: IncomingMessage; events: SseEvent[] }>((resolve, reject) => {
        const req = httpRequest(`${listening.url}/mcp`, { method: 'POST', headers: { ...base, ...headers } }, (res) => {
          void readEvents(res, onEvent).then((events) => resolve({ res, events }));
        });
        req.on('error', reject);
        req.end(JSON.stringify(body));
      });

    const init = await post({}, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'resume', version: '1' } } });
    const session = init.res.headers['mcp-session-id'] as string;
    assert.ok(session, 'a session');
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    await fetch(`${listening.url}/mcp`, { method: 'POST', headers: { ...base, ...headers }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });

    // The call's stream: the priming event first (id, retry, empty data); then the connection drops.
    slow = true;
    const call = await post(headers, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'getAuth', arguments: {} } }, (e) => e.data === '');
    assert.equal(call.res.headers['content-type'], 'text/event-stream');
    const priming = call.events[0]!;
    assert.ok(priming.id && priming.id.length > 0, 'the priming event has an id');
    assert.is(priming.data, '', 'and empty data');
    assert.is(priming.retry, String(MCP_RETRY_MS), 'and retry');
    assert.is(call.events.length, 1, 'nothing else arrived before the drop');

    // Resume: GET with Last-Event-ID replays what the stream carried after the priming event.
    await new Promise((r) => setTimeout(r, 600)); // the result is produced meanwhile, with nobody listening
    const resumed = await new Promise<SseEvent[]>((resolve, reject) => {
      const req = httpRequest(`${listening.url}/mcp`, { method: 'GET', headers: { authorization: base.authorization, accept: 'text/event-stream', ...headers, 'last-event-id': priming.id! } }, (res) => {
        assert.is(res.statusCode, 200);
        void readEvents(res, (e) => e.data.includes('"id":7')).then(resolve);
      });
      req.on('error', reject);
      req.end();
    });
    const answer = resumed.find((e) => e.data.includes('"id":7'))!;
    assert.ok(answer, JSON.stringify(resumed));
    assert.ok(answer.id && answer.id !== priming.id, 'the replayed event has its own id');
    const message = JSON.parse(answer.data) as { id: number; result: { structuredContent?: { status: number } ; content: unknown[] } };
    assert.is(message.id, 7);
    assert.match(JSON.stringify(message.result), /"status":200/);

    // An event id the session never sent is refused (400), not answered with another stream.
    const unknown = await fetch(`${listening.url}/mcp`, { headers: { authorization: base.authorization, accept: 'text/event-stream', ...headers, 'last-event-id': 'nope_1' } });
    assert.is(unknown.status, 400);
    await unknown.body?.cancel();
  } finally {
    await mcp.close();
    await listening.close();
    await engine.close();
  }
});

test('the event store is bounded: the oldest events go first, and a Last-Event-ID older than what is kept is refused', async () => {
  const store = memoryEventStore({ maxEvents: 3 });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await store.storeEvent('s1', { jsonrpc: '2.0', method: 'n', params: { i } }));
  assert.is(store.size(), 3);
  assert.is(await store.getStreamIdForEventId!(ids[0]!), undefined);
  assert.is(await store.getStreamIdForEventId!(ids[2]!), 's1');
  const sent: string[] = [];
  assert.is(await store.replayEventsAfter(ids[2]!, { send: async (id) => void sent.push(id) }), 's1');
  assert.equal(sent, [ids[3], ids[4]]);
});

test.run();
