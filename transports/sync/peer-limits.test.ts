/**
 * What one peer of live co-editing may cost the server (./limits.ts), tried over a real socket on
 * loopback: floods of sync step 1, a peer that does not read, awareness spoofing and amplification,
 * query-awareness floods, and floods of one-character updates.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as Y from 'yjs';
import { startServer, type TestServer } from '../../fixtures/http-kit.ts';
import { attachSync, type SyncOptions, type SyncServer } from './attach.ts';
import { encodeMessage, MESSAGE_AWARENESS, MESSAGE_QUERY_AWARENESS, MESSAGE_SYNC, SYNC_STEP1, SYNC_STEP2, SYNC_UPDATE } from './codec.ts';
import * as encoding from 'lib0/encoding';
import { SLOW_PEER_CLOSE } from './limits.ts';
import { findContainer, SyncClient } from './sync-kit.ts';

const key = () => randomBytes(12).toString('hex');

interface World {
  s: TestServer;
  sync: SyncServer;
  writer: string;
  reader: string;
  ref: string;
  ids: string[];
  wsUrl: string;
}

async function world(fn: (w: World) => Promise<void>, options: Partial<SyncOptions> = {}, paragraphs: string[] = ['first', 'second']): Promise<void> {
  const s = await startServer();
  const sync = attachSync(s.server, s.engine, { prefix: ['', '/api/v1'], timing: { pauseMs: 25, maxMs: 150 }, ...options });
  try {
    const writer = (await s.credential({ scopes: ['document:create', 'document:read', 'document:write'], account: 'acct-a' })).token;
    const reader = (await s.credential({ scopes: ['document:read'], account: 'acct-a' })).token;
    const created = await s.req('/api/v1/documents', { method: 'POST', token: writer, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Live' } });
    assert.is(created.status, 201, created.text);
    const ref: string = created.json.data.documentRef;
    let revision = created.headers['service-revision'] as string;
    const ids: string[] = [];
    const groups: string[][] = [];
    for (const markdown of paragraphs) {
      const last = groups[groups.length - 1];
      if (last && last.join('').length + markdown.length < 200_000) last.push(markdown);
      else groups.push([markdown]);
    }
    for (const group of groups) {
      const r = await s.req(`/api/v1/documents/${ref}/mutations`, {
        method: 'POST',
        token: writer,
        headers: { 'idempotency-key': key(), 'service-if-revision': revision },
        body: { v: 1, intent: 'test', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: group.map((markdown) => ({ type: 'paragraph', markdown })) } },
      });
      assert.is(r.status, 200, r.text);
      revision = r.headers['service-revision'] as string;
      ids.push(...(r.json.data.receipt.affectedBlockIds as string[]));
    }
    await fn({ s, sync, writer, reader, ref, ids, wsUrl: `${s.url.replace('http', 'ws')}/api/v1/documents/${ref}/sync` });
  } finally {
    await sync.close();
    await s.close();
  }
}

/** A raw connection: every message it receives, by type, and its close. */
function raw(url: string, token: string) {
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
  socket.binaryType = 'nodebuffer';
  const received: Buffer[] = [];
  const closed = new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code)));
  socket.on('message', (data: Buffer) => received.push(data));
  socket.on('error', () => {});
  const open = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_q, res) => reject(new Error(`refused ${res.statusCode}`)));
  });
  const count = (type: number, sub?: number) => received.filter((m) => m[0] === type && (sub === undefined || m[1] === sub)).length;
  return { socket, received, closed, open, count };
}

/** Wait until `ready()` holds, polling; reject after `ms`. */
async function until(ready: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `promise`, or a rejection after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** An awareness update (y-protocols' encoding) of the given states. */
function awarenessUpdate(states: { id: number; clock: number; state: unknown }[]): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, states.length);
  for (const { id, clock, state } of states) {
    encoding.writeVarUint(encoder, id);
    encoding.writeVarUint(encoder, clock);
    encoding.writeVarUint8Array(encoder, Buffer.from(JSON.stringify(state), 'utf8'));
  }
  return encodeMessage([MESSAGE_AWARENESS], encoding.toUint8Array(encoder));
}

const EMPTY_STEP1 = encodeMessage([MESSAGE_SYNC, SYNC_STEP1], Y.encodeStateVector(new Y.Doc()));

test('a peer that floods sync step 1 and does not read gets one step 2 in flight, not one per step 1', () =>
  world(
    async ({ reader, wsUrl }) => {
      const peer = raw(wsUrl, reader);
      await peer.open;
      peer.socket.pause(); // it does not read
      for (let i = 0; i < 200; i++) peer.socket.send(EMPTY_STEP1);
      await new Promise((r) => setTimeout(r, 1500));
      peer.socket.resume();
      // Everything the server wrote arrives; a last step 1 answered tells that the flood was handled.
      await until(() => peer.count(MESSAGE_SYNC, SYNC_STEP2) >= 1, 'a step 2');
      // Until no more step 2 arrives for 2 s.
      for (let seen = -1, i = 0; seen !== peer.count(MESSAGE_SYNC, SYNC_STEP2) && i < 30; i++) {
        seen = peer.count(MESSAGE_SYNC, SYNC_STEP2);
        await new Promise((r) => setTimeout(r, 2000));
      }
      const answers = peer.count(MESSAGE_SYNC, SYNC_STEP2);
      console.log(`  200 step 1s answered by ${answers} step 2s`);
      assert.ok(answers <= 20, `200 step 1s of a peer that did not read were answered ${answers} times (at most one in flight, the rest coalesced)`);
      assert.is(peer.socket.readyState, WebSocket.OPEN, 'a peer that reads again is kept');
      peer.socket.close();
      await peer.closed;
    },
    {},
    // About 1.5 MB of text: each step 2 is that large.
    Array.from({ length: 40 }, (_, i) => `${i} ${'lorem ipsum '.repeat(3_000)}`),
  ));

test(`a peer that does not read is closed (${SLOW_PEER_CLOSE}) once more than maxBufferedBytes wait for it; the others go on`, () =>
  world(
    async ({ writer, reader, wsUrl, sync, ref, ids }) => {
      const slow = raw(wsUrl, reader);
      await slow.open;
      slow.socket.send(EMPTY_STEP1);
      await until(() => slow.count(MESSAGE_SYNC, SYNC_STEP2) === 1, 'the first sync');
      slow.socket.pause();
      const w = await SyncClient.connect(wsUrl, writer);
      // Edits of 200 KB each (typed, then deleted), relayed to the slow peer: far more than the kernel's buffers take.
      const shut = () => [...sync.rooms.get(ref)!.peers].some((p) => p.guard?.closed);
      const big = 'x'.repeat(200_000);
      let relayed = 0;
      for (; relayed < 30_000_000 && !shut(); relayed += big.length) {
        w.type(ids[0]!, big);
        const t = (findContainer(w.fragment, ids[0]!)!.get(0) as Y.XmlElement).toArray().find((x): x is Y.XmlText => x instanceof Y.XmlText)!;
        t.delete(0, big.length);
        await w.roundTrip();
      }
      assert.ok(shut(), `the slow peer was closed (after ${relayed} bytes relayed)`);
      slow.socket.resume();
      assert.is(await within(slow.closed, 10_000, 'the close'), SLOW_PEER_CLOSE);
      w.type(ids[1]!, 'still here ');
      await w.roundTrip();
      await w.close();
    },
    { peerLimits: { maxBufferedBytes: 1024 * 1024, closeGraceMs: 30_000, bytesPerSecond: 1e9, byteBurst: 1e9 } },
  ));

test(`a peer sending far past its rate (a whole burst more) is closed with ${SLOW_PEER_CLOSE}`, () =>
  world(async ({ reader, wsUrl }) => {
    const peer = raw(wsUrl, reader);
    await peer.open;
    for (let i = 0; i < 5000; i++) peer.socket.send(Uint8Array.of(MESSAGE_QUERY_AWARENESS));
    assert.is(await within(peer.closed, 10_000, 'the close'), SLOW_PEER_CLOSE);
  }));

test("a read-only peer cannot replace another person's presence, nor hold more than 4 client ids, nor a state past 4 KiB", () =>
  world(async ({ writer, reader, wsUrl, sync, ref }) => {
    const ann = await SyncClient.connect(wsUrl, writer);
    ann.awareness.setLocalStateField('user', { name: 'Ann', color: '#f00' });
    const watcher = await SyncClient.connect(wsUrl, writer);
    const annId = ann.awareness.clientID;
    await watcher.until(() => watcher.awareness.getStates().get(annId)?.['user']?.name === 'Ann', "Ann's presence");
    const mallory = raw(wsUrl, reader);
    await mallory.open;
    mallory.socket.send(awarenessUpdate([{ id: annId, clock: 1000, state: { user: { name: 'Mallory', color: '#000' } } }]));
    mallory.socket.send(awarenessUpdate([{ id: annId, clock: 1001, state: null }]));
    mallory.socket.send(awarenessUpdate(Array.from({ length: 1000 }, (_, i) => ({ id: 1_000_000 + i, clock: 1, state: { user: { name: `bot ${i}` } } }))));
    mallory.socket.send(awarenessUpdate([{ id: 2_000_000, clock: 1, state: { user: { name: 'big', pad: 'x'.repeat(10_000) } } }]));
    await watcher.roundTrip();
    await watcher.until(() => [...watcher.awareness.getStates().values()].filter((st) => String(st['user']?.name).startsWith('bot')).length >= 1, 'a bot');
    const states = sync.rooms.get(ref)!.awareness.getStates();
    assert.is(states.get(annId)?.['user']?.name, 'Ann', "Ann's presence is Ann's");
    assert.is(watcher.awareness.getStates().get(annId)?.['user']?.name, 'Ann');
    const bots = [...states.values()].filter((st) => String(st['user']?.name).startsWith('bot')).length;
    assert.is(bots, 4, 'at most 4 client ids per peer');
    assert.not.ok(states.has(2_000_000), 'a state past 4 KiB is ignored');
    mallory.socket.close();
    await mallory.closed;
    await watcher.until(() => ![...watcher.awareness.getStates().values()].some((st) => String(st['user']?.name).startsWith('bot')), 'the bots gone with their peer');
    await Promise.all([ann.close(), watcher.close()]);
  }));

test('query-awareness is answered at most once per queryAwarenessMs', () =>
  world(
    async ({ reader, writer, wsUrl }) => {
      const ann = await SyncClient.connect(wsUrl, writer);
      ann.awareness.setLocalStateField('user', { name: 'Ann' });
      const peer = raw(wsUrl, reader);
      await peer.open;
      await until(() => peer.count(MESSAGE_AWARENESS) >= 1, "Ann's presence on joining");
      const before = peer.count(MESSAGE_AWARENESS);
      for (let i = 0; i < 50; i++) peer.socket.send(Uint8Array.of(MESSAGE_QUERY_AWARENESS));
      peer.socket.send(EMPTY_STEP1);
      await until(() => peer.count(MESSAGE_SYNC, SYNC_STEP2) === 1, 'the step 2 after the queries');
      await new Promise((r) => setTimeout(r, 600));
      const answers = peer.count(MESSAGE_AWARENESS) - before;
      assert.ok(answers >= 1 && answers <= 2, `50 queries got ${answers} answers`);
      peer.socket.close();
      await peer.closed;
      await ann.close();
    },
    { peerLimits: { queryAwarenessMs: 400 } },
  ));

test('a flood of one-character updates reaches the other peers batched (a few merged updates, not one each), and nothing is lost', () =>
  world(
    async ({ writer, reader, wsUrl, ids }) => {
      const w = await SyncClient.connect(wsUrl, writer);
      const readers = await Promise.all([1, 2, 3].map(() => SyncClient.connect(wsUrl, reader)));
      const updates = readers.map(() => 0);
      readers.forEach((r, i) => r.socket.on('message', (m: Buffer) => void (m[0] === MESSAGE_SYNC && m[1] === SYNC_UPDATE && updates[i]!++)));
      for (let burst = 0; burst < 10; burst++) {
        for (let i = 0; i < 100; i++) w.type(ids[0]!, 'a');
        await w.roundTrip();
      }
      const text = (c: SyncClient) => (c.blocks().find((b) => b.id === ids[0])?.content as any[])?.[0]?.text ?? '';
      for (const r of readers) await r.until(() => text(r).startsWith('a'.repeat(1000)), '1,000 characters', 20_000);
      for (const n of updates) assert.ok(n <= 100, `1,000 updates arrived as ${n} messages`);
      await Promise.all([w.close(), ...readers.map((r) => r.close())]);
    },
    { peerLimits: { messagesPerSecond: 5000, messageBurst: 500, broadcastMs: 20 } },
  ));

test.run();
