/**
 * Live co-editing over a real socket: y-websocket clients in Node against the API's node:http
 * listener on port 0, agents through HTTP.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { startServer, type TestServer } from '../../fixtures/http-kit.ts';
import { createEngine } from '../../src/engine.ts';
import { attachSync, type SyncOptions, type SyncServer } from './attach.ts';
import { encodeMessage, MESSAGE_SYNC, SYNC_UPDATE } from './codec.ts';
import * as Y from 'yjs';
import { findContainer, plainText, refusal, SyncClient } from './sync-kit.ts';

const key = () => randomBytes(12).toString('hex');

interface World {
  s: TestServer;
  sync: SyncServer;
  writer: string;
  reader: string;
  ref: string;
  /** ids of the three paragraphs the document starts with */
  ids: string[];
  wsUrl: (ref?: string) => string;
}

async function world(fn: (w: World) => Promise<void>, options: Partial<SyncOptions> = {}): Promise<void> {
  const s = await startServer();
  // Short pauses keep the test quick; the order of events is what is asserted, never a duration.
  const sync = attachSync(s.server, s.engine, { prefix: ['', '/api/v1'], timing: { pauseMs: 25, maxMs: 150 }, ...options });
  try {
    const writer = (await s.credential({ scopes: ['document:create', 'document:read', 'document:write'], account: 'acct-a' })).token;
    const reader = (await s.credential({ scopes: ['document:read'], account: 'acct-a' })).token;
    const created = await s.req('/api/v1/documents', { method: 'POST', token: writer, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Live' } });
    const ref: string = created.json.data.documentRef;
    const r = await mutate(s, writer, ref, created.headers['service-revision'] as string, {
      kind: 'create',
      parentBlockId: null,
      beforeBlockId: null,
      blocks: [
        { type: 'heading', level: 1, markdown: 'Title' },
        { type: 'paragraph', markdown: 'first **bold**' },
        { type: 'paragraph', markdown: 'second' },
      ],
    });
    assert.is(r.status, 200, r.text);
    const ids = r.json.data.receipt.affectedBlockIds as string[];
    const wsUrl = (doc = ref) => `${s.url.replace('http', 'ws')}/api/v1/documents/${doc}/sync`;
    await fn({ s, sync, writer, reader, ref, ids, wsUrl });
  } finally {
    await sync.close();
    await s.close();
  }
}

function mutate(s: TestServer, token: string, ref: string, revision: string, mutation: object) {
  return s.req(`/api/v1/documents/${ref}/mutations`, {
    method: 'POST',
    token,
    headers: { 'idempotency-key': key(), 'service-if-revision': revision },
    body: { v: 1, intent: 'test', mutation },
  });
}

async function read(s: TestServer, token: string, ref: string) {
  const r = await s.req(`/api/v1/documents/${ref}`, { token });
  assert.is(r.status, 200, r.text);
  return { version: r.json.data.version as number, revision: r.headers['service-revision'] as string, blocks: r.json.data.document.blocks as any[] };
}

/** Poll the API (each poll a real request) until `ready` holds for the document. */
async function untilApi(s: TestServer, token: string, ref: string, ready: (d: Awaited<ReturnType<typeof read>>) => boolean, what: string) {
  for (let i = 0; i < 400; i++) {
    const d = await read(s, token, ref);
    if (ready(d)) return d;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('a client sees the document as BlockNote blocks with the API ids, plus the editor trailing paragraph', () =>
  world(async ({ s, writer, ref, ids, wsUrl }) => {
    const client = await SyncClient.connect(wsUrl(), writer);
    const blocks = client.blocks();
    const api = await read(s, writer, ref);
    assert.equal(blocks.slice(0, 3), api.blocks, 'the fragment reads back as the API rich-json');
    assert.equal(blocks.slice(0, 3).map((b) => b.id), ids);
    assert.is(blocks.length, 4);
    assert.is(blocks[3]!.type, 'paragraph');
    assert.equal(blocks[3]!.content, []);
    await client.close();
  }));

test('an agent mutation through HTTP reaches a connected client', () =>
  world(async ({ s, writer, ref, ids, wsUrl }) => {
    const client = await SyncClient.connect(wsUrl(), writer);
    const api = await read(s, writer, ref);
    const r = await mutate(s, writer, ref, api.revision, { kind: 'edit', blockId: ids[2], block: { type: 'paragraph', markdown: 'agent was here' } });
    assert.is(r.status, 200, r.text);
    await client.until(() => plainText(client.blocks()).includes(`${ids[2]}:agent was here`), 'the agent edit');
    const created = await mutate(s, writer, ref, r.headers['service-revision'] as string, {
      kind: 'create',
      parentBlockId: ids[1],
      beforeBlockId: null,
      blocks: [{ type: 'bulletListItem', markdown: 'nested' }],
    });
    assert.is(created.status, 200, created.text);
    const newId = created.json.data.receipt.affectedBlockIds[0];
    await client.until(() => client.blocks()[1]?.children[0]?.id === newId, 'the nested block');
    const after = await read(s, writer, ref);
    assert.equal(client.blocks().slice(0, 3), after.blocks, 'the fragment equals the API version');
    await client.close();
  }));

test("a client's edit becomes one new API version after the pause; the older revision answers 412", () =>
  world(async ({ s, writer, ref, ids, wsUrl, sync }) => {
    const before = await read(s, writer, ref);
    const client = await SyncClient.connect(wsUrl(), writer);
    client.type(ids[2]!, 'typed ');
    const after = await untilApi(s, writer, ref, (d) => d.version > before.version, 'the version');
    assert.is(after.version, before.version + 1);
    assert.equal(after.blocks[2].content, [{ type: 'text', text: 'typed second', styles: {} }]);
    assert.is(after.blocks.length, 3, 'the trailing empty paragraph is not an API block');
    const md = await s.req(`/api/v1/documents/${ref}?format=markdown`, { token: writer });
    assert.is(md.status, 200);
    assert.match(md.text, 'typed second');
    const stale = await mutate(s, writer, ref, before.revision, { kind: 'edit', blockId: ids[1], block: { type: 'paragraph', markdown: 'x' } });
    assert.is(stale.status, 412);
    assert.is(stale.json.error.code, 'PRECONDITION_FAILED');
    // Typing into the trailing paragraph makes it an API block with the editor's id.
    const trailing = client.blocks()[3]!.id;
    client.type(trailing, 'new line');
    const third = await untilApi(s, writer, ref, (d) => d.version > after.version, 'the next version');
    assert.is(third.version, after.version + 1);
    assert.is(third.blocks[3].id, trailing);
    await sync.flush();
    await client.close();
  }));

test("a read-only token's edits are dropped", () =>
  world(async ({ s, reader, writer, ref, ids, wsUrl, sync }) => {
    const before = await read(s, writer, ref);
    const ro = await SyncClient.connect(wsUrl(), reader);
    const rw = await SyncClient.connect(wsUrl(), writer);
    ro.type(ids[1]!, 'sneaky ');
    await ro.roundTrip();
    await rw.roundTrip();
    await sync.flush();
    assert.not.match(plainText(rw.blocks()), 'sneaky');
    const room = sync.rooms.get(ref)!;
    assert.not.match(JSON.stringify(room.bridge.fragment.toJSON()), 'sneaky');
    assert.is((await read(s, writer, ref)).version, before.version);
    // …while it still receives what others write.
    rw.type(ids[1]!, 'visible ');
    await ro.until(() => plainText(ro.blocks()).includes('visible'), 'the writer edit');
    await ro.close();
    await rw.close();
  }));

test('no token, a bad token, a token without document:read, or another document: refused before the upgrade', () =>
  world(async ({ s, writer, wsUrl }) => {
    const none = await refusal(wsUrl());
    assert.is(none.status, 401);
    assert.is(none.body.error.code, 'AUTH_REQUIRED');
    const bad = await refusal(wsUrl(), { authorization: 'Bearer nope' });
    assert.is(bad.status, 401);
    const jobsOnly = (await s.credential({ scopes: ['research:read'], account: 'acct-a' })).token;
    assert.is((await refusal(wsUrl(), { authorization: `Bearer ${jobsOnly}` })).status, 404);
    assert.is((await refusal(wsUrl(`sdoc_${'0'.repeat(48)}`), { authorization: `Bearer ${writer}` })).status, 404);
    const other = (await s.credential({ scopes: ['document:read', 'document:write'], account: 'acct-b' })).token;
    const r = await refusal(wsUrl(), { authorization: `Bearer ${other}` });
    assert.is(r.status, 404);
    assert.is(r.body.error.code, 'NOT_FOUND');
    assert.is((await refusal(`${s.url.replace('http', 'ws')}/api/v1/documents/nope/sync`, { authorization: `Bearer ${writer}` })).status, 404);
  }));

test('limits: peers per room (503 before the upgrade), message size (the connection closes); awareness is relayed', () =>
  world(
    async ({ writer, wsUrl, sync, ref }) => {
      const a = await SyncClient.connect(wsUrl(), writer);
      const b = await SyncClient.connect(wsUrl(), writer);
      const full = await refusal(wsUrl(), { authorization: `Bearer ${writer}` });
      assert.is(full.status, 503);
      assert.is(full.body.error.code, 'TEMPORARILY_UNAVAILABLE');
      assert.ok(full.headers.get('retry-after'), '503 carries Retry-After');
      assert.is(full.body.error.retryAfterMs, 5000);
      a.awareness.setLocalStateField('user', { name: 'Ada' });
      b.awareness.setLocalStateField('user', { name: 'Bo' });
      await b.until(() => [...b.awareness.getStates().values()].some((st) => st['user']?.name === 'Ada'), "a's presence at b");
      await a.until(() => [...a.awareness.getStates().values()].some((st) => st['user']?.name === 'Bo'), "b's presence at a");
      const closed = new Promise<number>((resolve) => b.socket.once('close', (code: number) => resolve(code)));
      b.socket.send(encodeMessage([MESSAGE_SYNC, SYNC_UPDATE], new Uint8Array(5000)));
      assert.is(await closed, 1009, 'message too big');
      await a.roundTrip();
      assert.is(sync.rooms.get(ref)?.peers.size, 1);
      await a.until(() => ![...a.awareness.getStates().values()].some((st) => st['user']?.name === 'Bo'), "b's presence removed when it left");
      await a.close();
    },
    { maxPeersPerRoom: 2, maxMessageBytes: 4096 },
  ));

test('the room is freed when the last peer leaves, and pending edits are committed then', () =>
  world(async ({ s, writer, ref, ids, wsUrl, sync }) => {
    const before = await read(s, writer, ref);
    const client = await SyncClient.connect(wsUrl(), writer);
    assert.ok(sync.rooms.has(ref));
    client.type(ids[1]!, 'bye ');
    await client.roundTrip();
    await client.close();
    const after = await untilApi(s, writer, ref, (d) => d.version > before.version, 'the committed edit');
    assert.match(JSON.stringify(after.blocks[1].content), 'bye first');
    assert.not.ok(sync.rooms.has(ref));
  }));

test('two clients and an agent converge with no lost update and gap-free versions', () =>
  world(async ({ s, writer, ref, ids, wsUrl, sync }) => {
    const a = await SyncClient.connect(wsUrl(), writer);
    const b = await SyncClient.connect(wsUrl(), writer);
    const start = await read(s, writer, ref);
    // The agent plans on its revision and re-plans on 412, as the contract asks.
    const agent = async (text: string) => {
      for (;;) {
        const cur = await read(s, writer, ref);
        const r = await mutate(s, writer, ref, cur.revision, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: text }] });
        if (r.status === 200) return;
        assert.is(r.status, 412, r.text);
      }
    };
    for (let round = 0; round < 5; round++) {
      a.type(ids[1]!, `a${round} `);
      b.type(ids[2]!, `b${round} `);
      await agent(`agent ${round}`);
    }
    await a.roundTrip();
    await b.roundTrip();
    await sync.flush();
    const final = await read(s, writer, ref);
    const text = plainText(final.blocks);
    for (let round = 0; round < 5; round++) {
      assert.match(text, `a${round} `);
      assert.match(text, `b${round} `);
      assert.match(text, `agent ${round}`);
    }
    await a.until(() => plainText(a.blocks().slice(0, -1)) === text, 'client a converged');
    await b.until(() => plainText(b.blocks().slice(0, -1)) === text, 'client b converged');
    const updates = (await s.engine.deps.storage.loadUpdates(ref, start.version)) ?? [];
    assert.equal(
      updates.map((u) => u.version),
      Array.from({ length: final.version - start.version }, (_, i) => start.version + 1 + i),
      'every version from the start to the end, each once',
    );
    await a.close();
    await b.close();
  }));

test('an editor on process A sees what an agent writes through process B (two engines over one storage)', async () => {
  const storage = memoryStorage();
  const a = await startServer({ storage });
  const sync = attachSync(a.server, a.engine, { timing: { pauseMs: 25, maxMs: 150 } });
  // Process B: its own engine (own caches) over the same storage, as a second process over a shared database.
  const b = createEngine({ storage });
  try {
    const writer = (await a.credential({ scopes: ['document:create', 'document:read', 'document:write'], account: 'acct-a' })).token;
    const created = await a.req('/api/v1/documents', { method: 'POST', token: writer, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Shared' } });
    const ref: string = created.json.data.documentRef;
    const client = await SyncClient.connect(`${a.url.replace('http', 'ws')}/documents/${ref}/sync`, writer);
    const actor = { accountId: 'acct-a', credentialRef: null, documentRef: null };
    const head = await b.documents.head(actor, ref);
    await b.documents.mutate(actor, ref, {
      idempotencyKey: key(),
      ifRevision: head.revision,
      body: { v: 1, intent: 'from B', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: 'written by B' }] } },
    });
    await client.until(() => plainText(client.blocks()).includes('written by B'), 'the version written through B');
    // …and a person's edit on A is a version B reads.
    const id = client.blocks()[0]!.id;
    client.type(id, 'A says: ');
    for (let i = 0; i < 400; i++) {
      const read = await b.documents.read(actor, ref, 'markdown');
      if (read.format === 'markdown' && read.markdown.includes('A says: written by B')) break;
      if (i === 399) throw new Error('B never read the edit made on A');
      await new Promise((r) => setTimeout(r, 10));
    }
    await client.close();
  } finally {
    await sync.close();
    await a.close();
  }
});

test('limits: connections per credential across rooms (429 with Retry-After before the upgrade), freed when one closes', () =>
  world(
    async ({ writer, wsUrl }) => {
      const a = await SyncClient.connect(wsUrl(), writer);
      const over = await refusal(wsUrl(), { authorization: `Bearer ${writer}` });
      assert.is(over.status, 429);
      assert.is(over.body.error.code, 'RATE_LIMITED');
      assert.is(over.headers.get('retry-after'), '5');
      await a.close();
      let b: SyncClient | null = null;
      for (let i = 0; i < 100 && b === null; i++) {
        b = await SyncClient.connect(wsUrl(), writer).catch(async () => {
          await new Promise((r) => setTimeout(r, 20));
          return null;
        });
      }
      assert.ok(b, 'a connection is possible again once the first closed');
      await b!.close();
    },
    { maxConnectionsPerHolder: 1 },
  ));

test("each person's edits are a version of their own once they pause, while another person keeps typing", () =>
  world(
    async ({ s, writer, ref, ids, wsUrl }) => {
      const other = (await s.credential({ scopes: ['document:read', 'document:write'], account: 'acct-a' })).token;
      const a = await SyncClient.connect(wsUrl(), writer);
      const b = await SyncClient.connect(wsUrl(), other);
      const start = await read(s, writer, ref);
      a.type(ids[1]!, 'from a ');
      // b types on, every 10 ms (well inside the pause), until a's version is there.
      let seen: Awaited<ReturnType<typeof read>> | null = null;
      let typed = 0;
      for (; typed < 400 && seen === null; typed++) {
        b.type(ids[2]!, 'b');
        await new Promise((r) => setTimeout(r, 10));
        const now = await read(s, writer, ref);
        if (plainText(now.blocks).includes('from a ')) seen = now;
      }
      assert.ok(seen !== null, "a's version came while b was still typing");
      assert.is(seen.version, start.version + 1, "a's edit alone is the next version");
      assert.equal(seen.blocks[2], start.blocks[2], "b's block as it was: b has not paused yet");
      const done = await untilApi(s, writer, ref, (d) => plainText(d.blocks).includes(`${'b'.repeat(typed)}second`), "b's version after b paused");
      assert.is(done.version, start.version + 2, "b's edits are the version after a's");
      await b.until(() => plainText(b.blocks().slice(0, -1)) === plainText(done.blocks), 'b converged');
      await a.close();
      await b.close();
    },
    { timing: { pauseMs: 150, maxMs: 60_000 } },
  ));

test("a person whose edits cannot become a version (past the 2 MB limit) does not keep another's from being saved", () => {
  const errors: unknown[] = [];
  return world(
    async ({ s, writer, ref, ids, wsUrl }) => {
      const other = (await s.credential({ scopes: ['document:read', 'document:write'], account: 'acct-a' })).token;
      const a = await SyncClient.connect(wsUrl(), writer);
      const b = await SyncClient.connect(wsUrl(), other);
      const start = await read(s, writer, ref);
      const paste = 'x'.repeat(2_100_000);
      a.type(ids[1]!, paste);
      await new Promise((r) => setTimeout(r, 50));
      await a.roundTrip();
      b.type(ids[2]!, 'saved ');
      const saved = await untilApi(s, writer, ref, (d) => plainText(d.blocks).includes('saved second'), "b's version");
      assert.not.ok(plainText(saved.blocks).includes('xxxx'), "a's paste is not in b's version");
      assert.ok(errors.some((e) => (e as { code?: string }).code === 'CONFLICT'), "a's refused commit was reported");
      // a removes the paste and types on: a's edits are tried again and saved.
      const text = findContainer(a.fragment, ids[1]!)!.get(0) as Y.XmlElement;
      a.doc.transact(() => (text.get(0) as Y.XmlText).delete(0, paste.length));
      a.type(ids[1]!, 'fixed ');
      const fixed = await untilApi(s, writer, ref, (d) => plainText(d.blocks).includes('fixed first'), "a's version once fixed");
      assert.ok(plainText(fixed.blocks).includes('saved second'));
      const updates = (await s.engine.deps.storage.loadUpdates(ref, start.version)) ?? [];
      assert.equal(updates.map((u) => u.version), Array.from({ length: fixed.version - start.version }, (_, i) => start.version + 1 + i), 'gap-free');
      await a.close();
      await b.close();
    },
    { onError: (error) => errors.push(error) },
  );
});

/** A y-websocket provider (the browser editor's) in Node, sending `token` on the upgrade. */
function provider(wsUrl: string, token: string, doc: Y.Doc): WebsocketProvider {
  class Authorized extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers: { authorization: `Bearer ${token}` } });
    }
  }
  return new WebsocketProvider(wsUrl.replace(/\/sync$/, ''), 'sync', doc, { WebSocketPolyfill: Authorized as unknown as typeof globalThis.WebSocket });
}

const synced = (p: WebsocketProvider) => new Promise<void>((resolve) => (p.synced ? resolve() : p.once('sync', () => resolve())));

test('a provider reconnecting with the Y.Doc of a room since freed is refused for good (4409), never merged: no block is doubled', () =>
  world(async ({ s, writer, ref, wsUrl, sync }) => {
    const doc = new Y.Doc();
    const p = provider(wsUrl(), writer, doc);
    await synced(p);
    const before = await read(s, writer, ref);
    p.disconnect();
    for (let i = 0; i < 200 && sync.rooms.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.is(sync.rooms.size, 0, 'the room was freed with its last peer');
    const closed = new Promise<{ code: number; reason: string }>((resolve) => p.once('closed', (event) => resolve(event)));
    const merged = new Promise<{ code: number; reason: string }>((resolve) => p.once('sync', () => resolve({ code: 0, reason: 'synced: merged into the new room' })));
    p.connect(); // as after a server restart or a network drop: the same doc, a new room
    const event = await Promise.race([closed, merged]);
    assert.is(event.code, 4409, event.reason);
    assert.not.ok(p.shouldConnect, 'final: the provider does not try again');
    await sync.flush();
    const after = await read(s, writer, ref);
    assert.is(after.version, before.version, 'nothing was committed');
    assert.equal(after.blocks, before.blocks);
    // An empty Y.Doc (a reloaded page) syncs as usual.
    const fresh = await SyncClient.connect(wsUrl(), writer);
    assert.equal(fresh.blocks().slice(0, -1), after.blocks);
    p.destroy();
    await fresh.close();
  }));

test('a provider reconnecting while its room is still open keeps syncing, and what it typed offline arrives once', () =>
  world(async ({ s, writer, ref, ids, wsUrl }) => {
    const stays = await SyncClient.connect(wsUrl(), writer); // keeps the room open
    const doc = new Y.Doc();
    const p = provider(wsUrl(), writer, doc);
    await synced(p);
    p.disconnect();
    const container = findContainer(doc.getXmlFragment('document-store'), ids[2]!)!;
    doc.transact(() => ((container.get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(0, 'offline '));
    p.connect();
    await synced(p);
    const done = await untilApi(s, writer, ref, (d) => plainText(d.blocks).includes('offline second'), 'the offline edit as a version');
    assert.is(done.blocks.length, 3, 'no block doubled');
    await stays.until(() => plainText(stays.blocks().slice(0, -1)) === plainText(done.blocks), 'the other client converged');
    p.destroy();
    await stays.close();
  }));

test('a room whose live copy grows past its bound closes every peer (4409) and opens again from the last version; the others\' edits are saved', () => {
  const errors: unknown[] = [];
  return world(
    async ({ s, writer, ref, ids, wsUrl, sync }) => {
      const other = (await s.credential({ scopes: ['document:read', 'document:write'], account: 'acct-a' })).token;
      const a = await SyncClient.connect(wsUrl(), writer);
      const b = await SyncClient.connect(wsUrl(), other);
      const closes = [a, b].map((c) => new Promise<number>((resolve) => c.socket.once('close', (code: number) => resolve(code))));
      b.type(ids[2]!, 'kept ');
      await b.roundTrip();
      for (let i = 0; i < 10; i++) a.type(ids[1]!, 'y'.repeat(10_000)); // 100 KB, in messages under the 16 KiB limit
      assert.equal(await Promise.all(closes), [4409, 4409], 'both peers told to open the document again');
      assert.ok(errors.some((e) => (e as Error).name === 'RoomTooLargeError'), 'reported');
      for (let i = 0; i < 200 && sync.rooms.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.is(sync.rooms.size, 0, 'the room was freed');
      const after = await read(s, writer, ref);
      assert.match(plainText(after.blocks), 'kept second', "b's edit was saved when the room closed");
      // (a's 100 KB is within the API's 2 MB, so it is saved too; the default bound, 16 MiB, is past anything the API takes.)
      const fresh = await SyncClient.connect(wsUrl(), writer);
      assert.equal(fresh.blocks().slice(0, -1), after.blocks, 'a new room from the last version');
      await fresh.close();
    },
    { maxDocumentBytes: 64 * 1024, maxMessageBytes: 16 * 1024, onError: (error) => errors.push(error) },
  );
});

test('nesting past what the editor holds (256 levels): a peer that sends it, or an agent that writes it, resets the room (4409); such a document is refused (409)', () => {
  const errors: unknown[] = [];
  return world(
    async ({ s, writer, ref, ids, wsUrl, sync }) => {
      // A peer nests 300 blocks in one update: every peer starts over, nothing is committed.
      const a = await SyncClient.connect(wsUrl(), writer);
      const b = await SyncClient.connect(wsUrl(), writer);
      const before = await read(s, writer, ref);
      const closes = [a, b].map((c) => new Promise<number>((resolve) => c.socket.once('close', (code: number) => resolve(code))));
      a.doc.transact(() => {
        let group = (findContainer(a.fragment, ids[2]!)!.insert(1, [new Y.XmlElement('blockGroup')]), findContainer(a.fragment, ids[2]!)!.get(1) as Y.XmlElement);
        for (let i = 0; i < 300; i++) {
          const container = new Y.XmlElement('blockContainer');
          container.setAttribute('id', `deep${i}`);
          const next = new Y.XmlElement('blockGroup');
          container.insert(0, [new Y.XmlElement('paragraph'), next]);
          group.insert(0, [container]);
          group = next;
        }
      });
      assert.equal(await Promise.all(closes), [4409, 4409]);
      for (let i = 0; i < 200 && sync.rooms.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
      const after = await read(s, writer, ref);
      assert.is(after.version, before.version, 'nothing of it was committed');
      assert.ok(errors.some((e) => /nested blocks 301 levels deep in the live copy/.test((e as Error).message)), "reported");

      // An agent nests the document to 256 levels through the API: the room follows; one level more resets it.
      let parent = ids[2]!;
      let revision = after.revision;
      for (let level = 2; level <= 257; level++) {
        const r = await mutate(s, writer, ref, revision, { kind: 'create', parentBlockId: parent, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: `level ${level}` }] });
        assert.is(r.status, 200, r.text);
        parent = r.json.data.receipt.affectedBlockIds[0];
        revision = r.headers['service-revision'] as string;
        if (level === 256) {
          const c = await SyncClient.connect(wsUrl(), writer);
          const closed = new Promise<number>((resolve) => c.socket.once('close', (code: number) => resolve(code)));
          const deeper = await mutate(s, writer, ref, revision, { kind: 'create', parentBlockId: parent, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: 'level 257' }] });
          assert.is(deeper.status, 200, 'the API takes it');
          assert.is(await closed, 4409, 'the room cannot follow it');
          break;
        }
      }
      const refused = await refusal(wsUrl(), { authorization: `Bearer ${writer}` });
      assert.is(refused.status, 409);
      assert.is(refused.body.error.code, 'CONFLICT');
      assert.match(refused.body.error.message, 'Edit it through the API');
    },
    { onError: (error) => errors.push(error) },
  );
});

test.run();
