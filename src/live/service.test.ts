/**
 * The live-editing service through the package's public entry: `engine.live` of an engine made by
 * createEngine over the memory adapter, with no transport. A session commits a person's edit as
 * that person (a request of their token's budget); a revoked or expired token's edits are not
 * saved and its watch ends; the relay port's leases change hands only when free or expired.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as Y from 'yjs';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createEngine, manualClock, type Actor, type Engine } from '../index.ts';

const SCOPES = ['document:create', 'document:read', 'document:write'];

interface World {
  engine: Engine;
  clock: ReturnType<typeof manualClock>;
  actor: Actor;
  credential: Awaited<ReturnType<Engine['credentials']['create']>>['credential'];
  ref: string;
}

async function world(fn: (w: World) => Promise<void>): Promise<void> {
  const clock = manualClock();
  const engine = createEngine({ storage: memoryStorage(), clock });
  try {
    const { credential } = await engine.credentials.create({ accountId: 'acct-a', label: 'editor', scopes: SCOPES, requestBudget: 100, expiresInDays: 1 });
    const created = await engine.documents.create(credential.actor, { idempotencyKey: 'live-service-test-key-1', body: { v: 1, title: 'Live' } });
    await fn({ engine, clock, actor: credential.actor, credential, ref: created.document.documentRef });
  } finally {
    await engine.close();
  }
}

/** Type `text` into the session's last paragraph (the editor's trailing one) as a transaction of `origin`. */
function type(doc: Y.Doc, origin: unknown, text: string): void {
  const group = doc.getXmlFragment('document-store').get(0) as Y.XmlElement;
  const paragraph = (group.get(group.length - 1) as Y.XmlElement).get(0) as Y.XmlElement;
  doc.transact(() => paragraph.insert(0, [new Y.XmlText(text)]), origin);
}

const PERSON = Symbol('person');

test("an edit in a session becomes a version, committed as the person who made it (a request of their token's budget)", () =>
  world(async ({ engine, actor, credential, ref }) => {
    const session = await engine.live.open(ref, actor.accountId, { onError: (e) => assert.unreachable(String(e)) });
    try {
      assert.is(session.version, 1);
      session.attribute((origin) => (origin === PERSON ? actor : null));
      const before = engine.credentials.budget((await engine.credentials.get(credential.credentialRef))!).remaining;
      type(session.doc, PERSON, 'typed live');
      await session.flush();
      const read = await engine.documents.read(actor, ref, 'markdown');
      assert.is(read.version, 2);
      assert.match(read.markdown, 'typed live');
      assert.is(session.version, 2);
      assert.is(engine.credentials.budget((await engine.credentials.get(credential.credentialRef))!).remaining, before - 1, 'the commit was charged to that token');
      // An edit nobody is named for (not a person's) is never committed.
      type(session.doc, 'someone unknown', ' and more');
      await session.flush();
      assert.is((await engine.documents.head(actor, ref)).version, 2);
    } finally {
      session.close();
    }
  }));

test("a revoked token's edits are not saved, and its watch ends", () =>
  world(async ({ engine, actor, credential, ref }) => {
    const session = await engine.live.open(ref, actor.accountId, { onError: (e) => assert.unreachable(String(e)) });
    const ended: string[] = [];
    const unwatch = engine.live.watchCredential(credential, (reason) => ended.push(reason));
    try {
      session.attribute((origin) => (origin === PERSON ? actor : null));
      await engine.credentials.revoke(actor.accountId, credential.credentialRef);
      for (let i = 0; i < 50 && ended.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
      assert.equal(ended, ['the token was revoked']);
      type(session.doc, PERSON, 'after revocation');
      await session.flush();
      const read = await engine.documents.read({ ...actor, credentialRef: null }, ref, 'markdown');
      assert.is(read.version, 1, 'no version');
      assert.not.match(read.markdown, 'after revocation');
    } finally {
      unwatch();
      session.close();
    }
  }));

test("an expired token's edits are not saved", () =>
  world(async ({ engine, clock, actor, ref }) => {
    const session = await engine.live.open(ref, actor.accountId, { onError: (e) => assert.unreachable(String(e)) });
    try {
      session.attribute((origin) => (origin === PERSON ? actor : null));
      clock.advance(2 * 24 * 3600_000);
      type(session.doc, PERSON, 'after expiry');
      await session.flush();
      assert.is((await engine.documents.head({ ...actor, credentialRef: null }, ref)).version, 1);
    } finally {
      session.close();
    }
  }));

test('a session of an unknown document is refused (NOT_FOUND)', () =>
  world(async ({ engine }) => {
    try {
      await engine.live.open(`sdoc_${'0'.repeat(48)}`, 'acct-a');
      assert.unreachable('opened');
    } catch (error) {
      assert.is((error as { code?: string }).code, 'NOT_FOUND');
    }
  }));

test("the relay port: a document's lease is one process's until released or expired; the ephemeral channel carries payloads", () =>
  world(async ({ engine, ref }) => {
    const relay = engine.live.relay;
    assert.ok(relay, 'the memory adapter carries ephemeral messages');
    assert.is(relay.sharedByProcesses, false);
    const a = { owner: 'proc-a', channel: 'kw-sync:proc-a' };
    const b = { owner: 'proc-b', channel: 'kw-sync:proc-b' };
    const claimed = await relay.claimLease(ref, a, 60_000);
    assert.ok(claimed.held);
    const other = await relay.claimLease(ref, b, 60_000);
    assert.ok(!other.held && other.lease.owner === 'proc-a' && other.lease.channel === a.channel, 'a live lease of another process is answered');
    assert.is((await relay.readLease(ref))?.owner, 'proc-a');
    const renewed = await relay.renewLease(ref, a, 60_000, claimed.revision);
    assert.is(renewed, claimed.revision + 1);
    assert.is(await relay.renewLease(ref, a, 60_000, claimed.revision), null, 'a stale revision: taken over');
    await relay.releaseLease(ref, renewed!);
    assert.is(await relay.readLease(ref), null);
    assert.ok((await relay.claimLease(ref, b, -1)).held, 'free: b takes it (already expired)');
    assert.ok((await relay.claimLease(ref, a, 60_000)).held, 'expired: a takes it over');

    const got: number[][] = [];
    const off = relay.subscribe(a.channel, (payload) => got.push([...payload]));
    await relay.publish(a.channel, new Uint8Array([1, 2, 3]));
    await relay.publish(b.channel, new Uint8Array([9]));
    for (let i = 0; i < 50 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 2));
    off();
    assert.equal(got, [[1, 2, 3]]);
  }));

test.run();
