/**
 * Live co-editing across processes: two `kw serve --storage postgres` children on one fresh
 * database. A y-websocket client on process A sees an agent's mutation sent to process B (LISTEN/
 * NOTIFY); a person's typing on A becomes an API version that B serves after the pause of the
 * rhythm (the default 1 s: `kw serve` has no flag for it); an agent on B holding the revision from
 * before it gets 412; typing in one block on A and on B (one room, hosted by A: B forwards its
 * editor there, see app/postgres-live.test.ts) keeps both texts;
 * versions stay gap-free; both editors and the API converge. Nothing here asserts a duration: every wait is a bounded poll.
 * Skipped (with the reason printed) when no PostgreSQL server answers at 127.0.0.1:5432 (PGlite
 * lives in one process and cannot be shared by two).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freshDatabase, serverUnavailableReason, type FreshDatabase } from '../adapters/postgres/postgres-kit.ts';
import type { EditorBlock } from '../src/blocks/editor-fragment.ts';
import { plainText, SyncClient } from '../transports/sync/sync-kit.ts';
import { call, createDocument, idemKey, startProcesses, type ServerProcess } from './postgres-cluster-kit.ts';

const test = suite('postgres: live co-editing across two processes');
const reason = await serverUnavailableReason();
let db: FreshDatabase | null = null;
let procs: ServerProcess[] = [];
const clients: SyncClient[] = [];

/** The text of block `id` in a block list (depth first), or undefined when it is not there. */
function textOf(blocks: readonly EditorBlock[], id: string): string | undefined {
  for (const b of blocks) {
    if (b.id === id) return Array.isArray(b.content) ? (b.content as { text?: string }[]).map((c) => c.text ?? '').join('') : '';
    const inner = textOf(b.children, id);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/** A client's blocks without the editor's trailing paragraph (minted by its room, not an API block). */
const editorBlocks = (c: SyncClient) => c.blocks().slice(0, -1);

async function read(base: string, token: string, ref: string) {
  const r = await call(base, 'GET', `/api/v1/documents/${ref}`, token);
  assert.is(r.status, 200, JSON.stringify(r.json));
  return { version: r.json.data.version as number, revision: r.headers.get('service-revision')!, blocks: r.json.data.document.blocks as EditorBlock[] };
}

function mutate(base: string, token: string, ref: string, revision: string, mutation: object) {
  return call(base, 'POST', `/api/v1/documents/${ref}/mutations`, token, {
    headers: { 'idempotency-key': idemKey(), 'service-if-revision': revision },
    body: { v: 1, intent: 'test', mutation },
  });
}

/** Poll `base` (a real request each time) until `ready` holds; at most `ms`. */
async function untilApi(base: string, token: string, ref: string, ready: (d: Awaited<ReturnType<typeof read>>) => boolean, what: string, ms = 10_000) {
  const deadline = performance.now() + ms;
  for (;;) {
    const d = await read(base, token, ref);
    if (ready(d)) return d;
    if (performance.now() > deadline) throw new Error(`timed out (${ms} ms) waiting for ${what}; last read: version ${d.version}, ${plainText(d.blocks)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

if (reason !== null) {
  test('live co-editing across processes (skipped)', () => {
    console.log(`  (skipped: ${reason})`);
  });
} else {
  test.before(async () => {
    db = await freshDatabase();
    try {
      procs = await startProcesses(2, db.url, { seed: false });
    } catch (error) {
      // uvu does not report a failing hook: say why, and the test fails on the empty list.
      console.error(`  starting the kw serve processes failed: ${(error as Error).message}`);
    }
  });
  test.after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(procs.map((p) => p.stop('SIGTERM')));
    await db?.drop();
  });

  test("an editor on A gets an agent's write to B; a person's edit on A is a version on B; 412 on the older revision; all converge", async () => {
    assert.is(procs.length, 2, 'the two kw serve processes started');
    const [a, b] = procs as [ServerProcess, ServerProcess];
    const cred = await call(b.url, 'POST', '/operator/v1/credentials', b.operatorKey, {
      body: { label: 'co-editing', account: 'acct-sync', scopes: ['document:create', 'document:read', 'document:write'] },
    });
    assert.is(cred.status, 201, JSON.stringify(cred.json));
    const token = cred.json.data.token as string;

    // The document, made through B: version 1 (created), version 2 (three paragraphs).
    const ref = await createDocument(b.url, token, 'Across processes');
    const v1 = await read(b.url, token, ref);
    assert.is(v1.version, 1);
    const made = await mutate(b.url, token, ref, v1.revision, {
      kind: 'create',
      parentBlockId: null,
      beforeBlockId: null,
      blocks: [
        { type: 'heading', level: 1, markdown: 'Title' },
        { type: 'paragraph', markdown: 'first' },
        { type: 'paragraph', markdown: 'second' },
      ],
    });
    assert.is(made.status, 200, JSON.stringify(made.json));
    assert.is(made.json.data.receipt.resultingVersion, 2);
    const ids = made.json.data.receipt.affectedBlockIds as string[];

    // An editor on A (root path) and one on B (under /api/v1): one room, on A (the first to open it).
    const onA = await SyncClient.connect(`${a.url.replace('http', 'ws')}/documents/${ref}/sync`, token);
    clients.push(onA);
    const onB = await SyncClient.connect(`${b.url.replace('http', 'ws')}/api/v1/documents/${ref}/sync`, token);
    clients.push(onB);
    assert.is(plainText(editorBlocks(onA)), plainText((await read(a.url, token, ref)).blocks), "A's room opened on version 2");

    // 1. An agent writes through B; A's editor gets it (B's NOTIFY → A's room reads and merges).
    const v2 = await read(b.url, token, ref);
    assert.is(v2.version, 2);
    const agent = await mutate(b.url, token, ref, v2.revision, { kind: 'edit', blockId: ids[1], block: { type: 'paragraph', markdown: 'agent wrote this through B' } });
    assert.is(agent.status, 200, JSON.stringify(agent.json));
    assert.is(agent.json.data.receipt.resultingVersion, 3);
    await onA.until(() => textOf(onA.blocks(), ids[1]!) === 'agent wrote this through B', "the agent's write to B in A's editor");
    await onB.until(() => textOf(onB.blocks(), ids[1]!) === 'agent wrote this through B', "the agent's write to B in B's editor");

    // 2. A person types on A; after the pause it is version 4, served by B.
    const before = await read(b.url, token, ref);
    assert.is(before.version, 3);
    onA.type(ids[2]!, 'person typed on A, ', 0);
    await onA.roundTrip(); // A's room holds the keystrokes
    const v4 = await untilApi(b.url, token, ref, (d) => textOf(d.blocks, ids[2]!) === 'person typed on A, second', "the person's edit on A as a version on B");
    assert.is(v4.version, 4, "the person's edits are one version");
    assert.is.not(v4.revision, before.revision);
    // …and it reaches B's editor (its own room) through the API version.
    await onB.until(() => textOf(onB.blocks(), ids[2]!) === 'person typed on A, second', "the person's edit in B's editor");

    // 3. An agent on B holding the revision from before the person's version: 412.
    const stale = await mutate(b.url, token, ref, before.revision, { kind: 'edit', blockId: ids[0], block: { type: 'heading', level: 1, markdown: 'stale title' } });
    assert.is(stale.status, 412, JSON.stringify(stale.json));
    assert.is((await read(a.url, token, ref)).version, 4, 'the 412 made no version');

    // 4. It re-plans on the new revision: version 5, in both editors.
    const replanned = await mutate(b.url, token, ref, v4.revision, { kind: 'edit', blockId: ids[0], block: { type: 'heading', level: 1, markdown: 'Title after re-planning' } });
    assert.is(replanned.status, 200, JSON.stringify(replanned.json));
    assert.is(replanned.json.data.receipt.resultingVersion, 5);
    await onA.until(() => textOf(onA.blocks(), ids[0]!) === 'Title after re-planning', "the re-planned write in A's editor");
    await onB.until(() => textOf(onB.blocks(), ids[0]!) === 'Title after re-planning', "the re-planned write in B's editor");

    // 5. The credential types on both processes in one block within one pause: one room, one holder,
    // so one version (6) with both texts.
    onA.type(ids[1]!, 'A: ', 0);
    onB.type(ids[1]!, ' :B', Number.MAX_SAFE_INTEGER);
    await Promise.all([onA.roundTrip(), onB.roundTrip()]);
    const both = 'A: agent wrote this through B :B';
    await untilApi(b.url, token, ref, (d) => textOf(d.blocks, ids[1]!) === both, 'both people’s edits in one version on B');
    await onA.until(() => textOf(onA.blocks(), ids[1]!) === both, "both people's edits in A's editor");
    await onB.until(() => textOf(onB.blocks(), ids[1]!) === both, "both people's edits in B's editor");

    // 6. Gap-free and converged: versions 1..6 each once, no further version from the room, and
    // both editors hold what both processes serve.
    await onA.roundTrip();
    await onB.roundTrip();
    const fromA = await read(a.url, token, ref);
    const fromB = await read(b.url, token, ref);
    assert.is(fromA.version, 6, "one version for one holder's edits");
    assert.is(fromB.version, 6);
    assert.is(fromA.revision, fromB.revision);
    const expected = plainText(fromB.blocks);
    assert.is(plainText(fromA.blocks), expected);
    assert.is(plainText(editorBlocks(onA)), expected, "A's editor equals the API");
    assert.is(plainText(editorBlocks(onB)), expected, "B's editor equals the API");
    assert.equal(editorBlocks(onA), fromB.blocks, "A's editor holds the API's rich-json blocks");
    assert.equal(editorBlocks(onB), fromB.blocks, "B's editor holds the API's rich-json blocks");
  });
}

test.run();
