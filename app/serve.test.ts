import { appendFile, chmod, cp, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEMO_RECORD_FILE, serve } from './serve.ts';
import WebSocket from 'ws';
import { refusal, SyncClient } from '../transports/sync/sync-kit.ts';

test('the demo seed is loaded once per data folder and its token reused on the next start', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-serve-'));
  try {
    const first = await serve({ port: 0, data: dir, seed: 'demo' });
    let token: string;
    let documentRef: string;
    try {
      assert.ok(first.demo && first.demoSeededNow);
      token = first.demo.token;
      documentRef = first.demo.documentRef;
      assert.is((await stat(join(dir, DEMO_RECORD_FILE))).mode & 0o777, 0o600);
      const record = JSON.parse(await readFile(join(dir, DEMO_RECORD_FILE), 'utf8')) as { token: string };
      assert.is(record.token, token);
    } finally {
      await first.close();
    }
    // The lock is released by close(), so the folder opens again; the seed is not loaded twice.
    const second = await serve({ port: 0, data: dir, seed: 'demo' });
    try {
      assert.is(second.demo?.token, token);
      assert.is(second.demoSeededNow, false);
      const res = await fetch(`${second.url}/api/v1/documents`, { headers: { authorization: `Bearer ${token}` } });
      const page = ((await res.json()) as { data: { items: { documentRef: string; browserHref: string }[] } }).data;
      // The demo document, and the report document of the succeeded demo job; nothing seeded twice.
      const refs = page.items.map((d) => d.documentRef);
      assert.is(refs.length, 2);
      assert.ok(refs.includes(documentRef));
    } finally {
      await second.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a torn journal tail discarded on open is told to the person running the server', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-torn-'));
  try {
    const first = await serve({ port: 0, data: dir, seed: 'demo' });
    await first.close();
    const journal = (await readdir(dir)).filter((f) => /^journal-.*\.log$/.test(f)).sort().at(-1);
    assert.ok(journal, 'the lowdb folder has a journal');
    await appendFile(join(dir, journal!), 'bytes of a write a crash interrupted');
    const notices: string[] = [];
    const second = await serve({ port: 0, data: dir, seed: 'demo', notice: (line) => notices.push(line) });
    try {
      assert.is(notices.length, 1);
      assert.match(notices[0]!, new RegExp(`^kw: recovered ${dir}: discarded the torn end of .*${journal} \\(\\d+ bytes from byte \\d+, 1 frame: `));
      assert.match(notices[0]!, /a write a crash interrupted before it was acknowledged; every acknowledged batch \(up to \d+\) is intact/);
      assert.is(second.demoSeededNow, false, 'the acknowledged state survived');
    } finally {
      await second.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the browser app is mounted: the printed sign-in link signs into the local person (demo when seeded, else owner), whose console lists the demo data', async () => {
  for (const [seed, account] of [['demo', 'demo'], ['none', 'owner']] as const) {
    const server = await serve({ port: 0, storage: 'memory', seed });
    try {
      assert.is(server.localAccount, account);
      const signedIn = await fetch(server.signInUrl!, { redirect: 'manual' });
      assert.is(signedIn.status, 303);
      const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
      const home = await fetch(`${server.url}/`, { headers: { cookie } });
      assert.is(home.status, 200);
      const html = await home.text();
      assert.ok(html.includes(`Signed in as ${account}`));
      if (server.demo) assert.ok(html.includes(`href="/documents/${server.demo.documentRef}"`), 'the demo document is listed');
      const link = await fetch(`${server.url}/operator/v1/sign-in-links`, { method: 'POST', headers: { authorization: `Bearer ${server.operatorKey}` } });
      assert.is(link.status, 201, 'no body: the local person');
      assert.is((await fetch(`${server.url}/documents/sdoc_${'0'.repeat(48)}`)).status, 401);
    } finally {
      await server.close();
    }
  }
});

test('a journal that lost acknowledged writes stops the start with what was lost; --accept-data-loss starts with what is intact', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-loss-'));
  try {
    const first = await serve({ port: 0, data: dir, seed: 'demo' });
    const token = first.demo!.token;
    // A crash copy would keep the journal; simulate one by not closing: write, then cut the journal.
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${first.url}/api/v1/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `loss-test-document-${i}-0000` },
        body: JSON.stringify({ v: 1, title: `doc ${i}` }),
      });
      assert.is(res.status, 201);
    }
    const journal = (await readdir(dir)).filter((f) => /^journal-.*\.log$/.test(f)).sort().at(-1)!;
    const copy = await mkdtemp(join(tmpdir(), 'kw-loss-copy-'));
    try {
      await new Promise((r) => setTimeout(r, 20)); // let the acknowledgment record catch up (it is written off the commit path)
      await cp(dir, copy, { recursive: true, filter: (src) => !src.endsWith('LOCK') });
      await first.close();
      const size = (await stat(join(copy, journal))).size;
      await truncate(join(copy, journal), size >> 1);
      let message = '';
      await serve({ port: 0, data: copy }).then((s) => s.close(), (e: Error) => (message = e.message));
      assert.match(message, /would lose acknowledged writes/);
      assert.match(message, /--accept-data-loss/);
      const notices: string[] = [];
      const started = await serve({ port: 0, data: copy, acceptDataLoss: true, notice: (line) => notices.push(line) });
      await started.close();
      assert.match(notices[0]!, /^kw: DATA LOSS ACCEPTED in .* \(--accept-data-loss\): batches \d+ to \d+ had been acknowledged and are gone/);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the data folder is 0700 and every file in it 0600, also a folder written by an older version', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-modes-'));
  try {
    await chmod(dir, 0o755);
    await writeFile(join(dir, 'checkpoint.json.old'), 'x', { mode: 0o644 });
    const server = await serve({ port: 0, data: dir, seed: 'demo' });
    await server.close();
    assert.is((await stat(dir)).mode & 0o777, 0o700);
    const names = await readdir(dir);
    for (const name of ['ACKED', 'checkpoint.json', DEMO_RECORD_FILE]) assert.ok(names.includes(name), name);
    for (const name of names) assert.is((await stat(join(dir, name))).mode & 0o777, 0o600, `${name} is private`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('live co-editing is on: an editor at /documents/{ref}/sync gets the document, and its edit becomes a version when it leaves', async () => {
  const server = await serve({ port: 0, storage: 'memory', seed: 'demo', sync: { timing: { pauseMs: 60_000, maxMs: 60_000 } } });
  try {
    const { token, documentRef } = server.demo!;
    const read = () => fetch(`${server.url}/api/v1/documents/${documentRef}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json() as Promise<any>);
    const before = await read();
    const client = await SyncClient.connect(`${server.url.replace('http', 'ws')}/documents/${documentRef}/sync`, token);
    const ids = before.data.document.blocks.map((b: { id: string }) => b.id);
    assert.equal(client.blocks().slice(0, ids.length).map((b) => b.id), ids);
    client.type(ids[0], 'Live: ');
    await client.roundTrip();
    await client.close(); // the last editor leaves: its pending edit is committed (the pause is a minute)
    let after = await read();
    for (let i = 0; i < 200 && after.data.version === before.data.version; i++) {
      await new Promise((r) => setTimeout(r, 10));
      after = await read();
    }
    assert.is(after.data.version, before.data.version + 1);
    assert.match(JSON.stringify(after.data.document.blocks[0].content), 'Live: ');
  } finally {
    await server.close();
  }
});

test('the signed-in person edits live: the document page mounts the editor, its bundle is served, the session cookie admits the sync upgrade', async () => {
  const server = await serve({ port: 0, storage: 'memory', seed: 'demo' });
  try {
    const { documentRef } = server.demo!;
    const spent = await fetch(server.signInUrl!, { redirect: 'manual' });
    const cookie = spent.headers.get('set-cookie')!.split(';')[0]!;
    const page = await fetch(`${server.url}/documents/${documentRef}`, { headers: { cookie } });
    const html = await page.text();
    const nonce = /data-nonce="([^"]+)"/.exec(html)?.[1];
    assert.ok(nonce, 'the page has the editor mount point');
    assert.match(html, `data-sync="/documents/${documentRef}/sync"`);
    assert.match(html, 'id="doc-body"', 'the rendered document stays, for no JavaScript and until the editor loads');
    const csp = page.headers.get('content-security-policy')!;
    assert.match(csp, "script-src 'self';");
    assert.match(csp, `style-src 'self' 'nonce-${nonce}'`);
    const entry = await fetch(`${server.url}/assets/editor/editor.js`);
    assert.is(entry.status, 200);
    assert.match(entry.headers.get('content-type')!, 'text/javascript');
    assert.ok((await entry.arrayBuffer()).byteLength > 100_000, 'the bundle holds BlockNote');
    assert.is((await fetch(`${server.url}/assets/editor/editor.css`)).status, 200);
    assert.is((await fetch(`${server.url}/assets/editor/nothing.js`)).status, 404);

    const url = `${server.url.replace('http', 'ws')}/documents/${documentRef}/sync`;
    const host = new URL(server.url).host;
    const opened = await new Promise<boolean>((resolve) => {
      const socket = new WebSocket(url, { headers: { cookie, origin: server.url } });
      socket.on('open', () => {
        socket.close();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    assert.ok(opened, 'the session cookie admits the upgrade');
    assert.is((await refusal(url, { cookie, origin: 'http://elsewhere.example' })).status, 401, 'another site\'s page is refused');
    assert.is((await refusal(url, { cookie: 'kw_session=' + 'x'.repeat(43), origin: `http://${host}` })).status, 401, 'an unknown session is refused');
    assert.is((await refusal(url)).status, 401, 'no credential');
  } finally {
    await server.close();
  }
});

test.run();
