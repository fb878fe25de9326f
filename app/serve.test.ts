import { appendFile, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEMO_RECORD_FILE, serve } from './serve.ts';
import { SyncClient } from '../transports/sync/sync-kit.ts';

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
      assert.match(notices[0]!, new RegExp(`^kw: recovered ${dir}: discarded \\d+ bytes \\(1 unacknowledged batch\\) at the end of .*${journal}: `));
      assert.is(second.demoSeededNow, false, 'the acknowledged state survived');
    } finally {
      await second.close();
    }
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

test.run();
