/**
 * Live editing across processes, keystroke by keystroke: two `kw serve --storage postgres` children
 * on one fresh database, two people (a credential each) with y-websocket clients, one on each
 * process. One process hosts the document's room and the other forwards its editor there
 * (transports/sync/relay.ts), so a keystroke on A reaches the editor on B before any version is
 * committed (it is asserted against the API's version, not a duration), cursors (awareness) from A
 * show on B and disappear when A's editor leaves, an agent's write through B reaches the editor on A,
 * and the versions stay linear: each person's edits are committed once, as that person, with no
 * doubled block and both people's text kept.
 * Skipped (with the reason printed) when no PostgreSQL server answers at 127.0.0.1:5432.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freshDatabase, serverUnavailableReason, type FreshDatabase } from '../adapters/postgres/postgres-kit.ts';
import type { EditorBlock } from '../src/blocks/editor-fragment.ts';
import { plainText, SyncClient } from '../transports/sync/sync-kit.ts';
import { call, createDocument, idemKey, startProcesses, type ServerProcess } from './postgres-cluster-kit.ts';

const test = suite('postgres: keystrokes and cursors across two processes');
const reason = await serverUnavailableReason();
let db: FreshDatabase | null = null;
let procs: ServerProcess[] = [];
const clients: SyncClient[] = [];

function textOf(blocks: readonly EditorBlock[], id: string): string | undefined {
  for (const b of blocks) {
    if (b.id === id) return Array.isArray(b.content) ? (b.content as { text?: string }[]).map((c) => c.text ?? '').join('') : '';
    const inner = textOf(b.children, id);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

function allIds(blocks: readonly EditorBlock[], out: string[] = []): string[] {
  for (const b of blocks) {
    out.push(b.id);
    allIds(b.children, out);
  }
  return out;
}

async function read(base: string, token: string, ref: string) {
  const r = await call(base, 'GET', `/api/v1/documents/${ref}`, token);
  assert.is(r.status, 200, JSON.stringify(r.json));
  return { version: r.json.data.version as number, revision: r.headers.get('service-revision')!, blocks: r.json.data.document.blocks as EditorBlock[] };
}

async function untilApi(base: string, token: string, ref: string, ready: (d: Awaited<ReturnType<typeof read>>) => boolean, what: string, ms = 15_000) {
  const deadline = performance.now() + ms;
  for (;;) {
    const d = await read(base, token, ref);
    if (ready(d)) return d;
    if (performance.now() > deadline) throw new Error(`timed out (${ms} ms) waiting for ${what}; last read: version ${d.version}, ${plainText(d.blocks)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The account's credential with the three document scopes, made through `base`. */
async function person(base: string, operatorKey: string, label: string): Promise<string> {
  const cred = await call(base, 'POST', '/operator/v1/credentials', operatorKey, {
    body: { label, account: 'acct-live', scopes: ['document:create', 'document:read', 'document:write'] },
  });
  assert.is(cred.status, 201, JSON.stringify(cred.json));
  return cred.json.data.token as string;
}

/** The awareness state a client shows for a user named `name`, if any. */
const cursorOf = (c: SyncClient, name: string) => [...c.awareness.getStates().entries()].find(([id, s]) => id !== c.awareness.clientID && (s as { user?: { name?: string } }).user?.name === name);

if (reason !== null) {
  test('keystrokes and cursors across processes (skipped)', () => {
    console.log(`  (skipped: ${reason})`);
  });
} else {
  test.before(async () => {
    db = await freshDatabase();
    try {
      procs = await startProcesses(2, db.url, { seed: false });
    } catch (error) {
      console.error(`  starting the kw serve processes failed: ${(error as Error).message}`);
    }
  });
  test.after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(procs.map((p) => p.stop('SIGTERM')));
    await db?.drop();
  });

  test('keystrokes, cursors and agent writes cross processes at once; versions stay linear', async () => {
    assert.is(procs.length, 2, 'the two kw serve processes started');
    const [a, b] = procs as [ServerProcess, ServerProcess];
    const ann = await person(a.url, a.operatorKey, 'Ann');
    const bob = await person(b.url, b.operatorKey, 'Bob');

    const ref = await createDocument(b.url, ann, 'Keystrokes across processes');
    const v1 = await read(b.url, ann, ref);
    const made = await call(b.url, 'POST', `/api/v1/documents/${ref}/mutations`, ann, {
      headers: { 'idempotency-key': idemKey(), 'service-if-revision': v1.revision },
      body: { v: 1, intent: 'test', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: 'one' }, { type: 'paragraph', markdown: 'two' }, { type: 'paragraph', markdown: 'three' }] } },
    });
    assert.is(made.status, 200, JSON.stringify(made.json));
    const ids = made.json.data.receipt.affectedBlockIds as string[];
    const base = await read(a.url, ann, ref);
    assert.is(base.version, 2);

    // Ann on A (the first to open the document: A hosts its room), Bob on B (forwarded to A).
    const onA = await SyncClient.connect(`${a.url.replace('http', 'ws')}/documents/${ref}/sync`, ann);
    clients.push(onA);
    const onB = await SyncClient.connect(`${b.url.replace('http', 'ws')}/api/v1/documents/${ref}/sync`, bob);
    clients.push(onB);
    assert.equal(onB.blocks(), onA.blocks(), "B's editor holds the very fragment A's does (one room)");

    // 1. A keystroke on A reaches B's editor before it is a version.
    onA.type(ids[0]!, 'Ann: ', 0);
    await onB.until(() => textOf(onB.blocks(), ids[0]!) === 'Ann: one', "Ann's keystrokes in Bob's editor on B");
    assert.is((await read(b.url, ann, ref)).version, 2, 'the keystrokes arrived before any version was committed');
    // …and one on B reaches A's editor, the same way.
    onB.type(ids[1]!, 'Bob: ', 0);
    await onA.until(() => textOf(onA.blocks(), ids[1]!) === 'Bob: two', "Bob's keystrokes in Ann's editor on A");
    assert.is((await read(a.url, ann, ref)).version, 2, 'still no version');

    // 2. Cursors: Ann's awareness shows on B, Bob's on A.
    onA.awareness.setLocalStateField('user', { name: 'Ann', color: '#f00' });
    onB.awareness.setLocalStateField('user', { name: 'Bob', color: '#00f' });
    await onB.until(() => cursorOf(onB, 'Ann') !== undefined, "Ann's cursor on B");
    await onA.until(() => cursorOf(onA, 'Bob') !== undefined, "Bob's cursor on A");

    // 3. Each person's edits become one version of their own, committed once: versions 3 and 4.
    const v4 = await untilApi(b.url, ann, ref, (d) => d.version >= 4, "both people's versions");
    assert.is(textOf(v4.blocks, ids[0]!), 'Ann: one');
    assert.is(textOf(v4.blocks, ids[1]!), 'Bob: two');
    await new Promise((r) => setTimeout(r, 1500)); // a further pause: no other version follows
    const settled = await read(a.url, ann, ref);
    assert.is(settled.version, 4, 'two people, two versions, no version committed twice');

    // 4. An agent's write through B reaches Ann's editor on A (and Bob's).
    const agent = await call(b.url, 'POST', `/api/v1/documents/${ref}/mutations`, bob, {
      headers: { 'idempotency-key': idemKey(), 'service-if-revision': settled.revision },
      body: { v: 1, intent: 'test', mutation: { kind: 'edit', blockId: ids[2], block: { type: 'paragraph', markdown: 'agent through B' } } },
    });
    assert.is(agent.status, 200, JSON.stringify(agent.json));
    assert.is(agent.json.data.receipt.resultingVersion, 5);
    await onA.until(() => textOf(onA.blocks(), ids[2]!) === 'agent through B', "the agent's write in Ann's editor on A");
    await onB.until(() => textOf(onB.blocks(), ids[2]!) === 'agent through B', "the agent's write in Bob's editor on B");

    // 5. Both type in one block at once: one text with both, each person's edits once.
    onA.type(ids[2]!, '[A]', 0);
    onB.type(ids[2]!, '[B]', Number.MAX_SAFE_INTEGER);
    const both = (t: string | undefined) => t !== undefined && t.includes('[A]') && t.includes('[B]') && t.includes('agent through B');
    await onA.until(() => both(textOf(onA.blocks(), ids[2]!)), 'both keystrokes in A');
    await onB.until(() => both(textOf(onB.blocks(), ids[2]!)), 'both keystrokes in B');
    const merged = await untilApi(a.url, ann, ref, (d) => both(textOf(d.blocks, ids[2]!)), 'both texts in a version');
    await new Promise((r) => setTimeout(r, 1500));
    const final = await read(b.url, ann, ref);
    assert.ok(final.version === 7 || (final.version === 6 && merged.version === 6), `one version per person (got ${final.version})`);
    assert.is(textOf(final.blocks, ids[2]!), textOf(onA.blocks(), ids[2]!));
    const finalIds = allIds(final.blocks);
    assert.is(new Set(finalIds).size, finalIds.length, 'no block twice');
    assert.is(finalIds.length, 3, 'no doubled blocks');
    assert.equal(onA.blocks().slice(0, -1), final.blocks, "A's editor equals the API");
    assert.equal(onB.blocks().slice(0, -1), final.blocks, "B's editor equals the API");
    // 6. Ann leaves: her cursor disappears from B.
    const annId = cursorOf(onB, 'Ann')![0];
    await onA.close();
    await onB.until(() => !onB.awareness.getStates().has(annId), "Ann's cursor gone from B after she left");
    // Bob is still served (the room stays while he is there): a keystroke of his becomes a version.
    onB.type(ids[0]!, '!', Number.MAX_SAFE_INTEGER);
    await untilApi(a.url, ann, ref, (d) => textOf(d.blocks, ids[0]!) === 'Ann: one!', "Bob's last keystroke as a version");
  });

  test("a process that dies: its people's cursors go; a dead host's editors reconnect and another process takes the document over", async () => {
    assert.ok(db !== null);
    const three = await startProcesses(3, db!.url, { seed: false });
    procs.push(...three);
    const [c, d, e] = three as [ServerProcess, ServerProcess, ServerProcess];
    const ann = await person(c.url, c.operatorKey, 'Ann');
    const bob = await person(d.url, d.operatorKey, 'Bob');
    const carl = await person(e.url, e.operatorKey, 'Carl');
    const ref = await createDocument(c.url, ann, 'Processes that die');
    const v1 = await read(c.url, ann, ref);
    const made = await call(c.url, 'POST', `/api/v1/documents/${ref}/mutations`, ann, {
      headers: { 'idempotency-key': idemKey(), 'service-if-revision': v1.revision },
      body: { v: 1, intent: 'test', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: 'kept' }] } },
    });
    assert.is(made.status, 200, JSON.stringify(made.json));
    const id = (made.json.data.receipt.affectedBlockIds as string[])[0]!;

    // Ann on C (the host), Bob on D and Carl on E (both forwarded to C).
    const onC = await SyncClient.connect(`${c.url.replace('http', 'ws')}/documents/${ref}/sync`, ann);
    clients.push(onC);
    const onD = await SyncClient.connect(`${d.url.replace('http', 'ws')}/documents/${ref}/sync`, bob);
    clients.push(onD);
    const onE = await SyncClient.connect(`${e.url.replace('http', 'ws')}/documents/${ref}/sync`, carl);
    clients.push(onE);
    onD.awareness.setLocalStateField('user', { name: 'Bob' });
    await onC.until(() => cursorOf(onC, 'Bob') !== undefined, "Bob's cursor on C");
    await onE.until(() => cursorOf(onE, 'Bob') !== undefined, "Bob's cursor on E (through C)");
    onE.type(id, 'Carl: ', 0);
    await untilApi(c.url, ann, ref, (x) => textOf(x.blocks, id) === 'Carl: kept', "Carl's edit as a version");

    // D is killed: Bob's cursor goes from Ann's and Carl's editors (C stops hearing D's pings).
    await d.stop('SIGKILL');
    await onC.until(() => cursorOf(onC, 'Bob') === undefined, "Bob's cursor gone from C after D died", 20_000);
    await onE.until(() => cursorOf(onE, 'Bob') === undefined, "Bob's cursor gone from E after D died", 20_000);

    // C (the host) is killed: E closes Carl's connection so that he reconnects (1012)…
    const closed = new Promise<number>((resolve) => onE.socket.once('close', (code: number) => resolve(code)));
    await c.stop('SIGKILL');
    assert.is(await closed, 1012, "Carl's editor is told to reconnect");
    // …and reconnecting, E takes the document over (the lease ran out): his committed text is there.
    const again = await SyncClient.connect(`${e.url.replace('http', 'ws')}/documents/${ref}/sync`, carl);
    clients.push(again);
    assert.is(textOf(again.blocks(), id), 'Carl: kept');
    again.type(id, '!', Number.MAX_SAFE_INTEGER);
    const after = await untilApi(e.url, carl, ref, (x) => textOf(x.blocks, id) === 'Carl: kept!', "Carl's edit on the new host as a version");
    assert.is(after.blocks.length, 1, 'no doubled block');
  });
}

test.run();
