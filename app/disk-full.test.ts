/**
 * A real full disk under a real `kw serve --storage lowdb`: its data folder on a small tmpfs that a
 * filler file fills up and frees again, several times. Every write answered 200 must be there after
 * kill -9 and after a SIGTERM taken while the disk was full, and the server must start again on
 * that folder without any flag. Needs `mount -t tmpfs` (root); skipped with the reason elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { call, createDocument, idemKey, startLowdbProcess, type ServerProcess } from './postgres-cluster-kit.ts';

const MOUNT_BYTES = 12 * 1024 * 1024;
const PARAGRAPH = 'x'.repeat(24_000); // ~24 KB a write: the 1 MiB journal rotates every ~40 writes

/** Mounts a tmpfs of `bytes`; null with the reason printed when this machine refuses. */
function mountTmpfs(bytes: number): string | null {
  const at = mkdtempSync(join(tmpdir(), 'kw-diskfull-'));
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs', at], { encoding: 'utf8' });
  if (result.status !== 0) {
    rmSync(at, { recursive: true, force: true });
    console.log(`skipped: the full-disk test needs a tmpfs and 'mount -t tmpfs' was refused (${(result.stderr || result.error?.message || 'no reason given').trim()})`);
    return null;
  }
  return at;
}

function unmount(at: string): void {
  spawnSync('umount', ['-l', at]);
  rmSync(at, { recursive: true, force: true });
}

/**
 * Fills the file system of `dir` with a filler file, leaving `room` bytes free (less than one write:
 * the next write is cut short, then refused); returns its path.
 */
function fill(dir: string, room: number): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (let size = chunk.length; size >= 1; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOSPC') throw error;
        size >>= 1;
      }
    }
    if (room > 0) ftruncateSync(fd, fstatSync(fd).size - room);
  } finally {
    closeSync(fd);
  }
  return path;
}

interface Writer {
  server: ServerProcess;
  token: string;
  ref: string;
  revision: string;
  /** The paragraphs whose write was answered 200: their document and marker. */
  acknowledged: { ref: string; marker: string }[];
  /** Statuses other than 200 and 503 (must stay empty). */
  unexpected: string[];
}

/** Appends one paragraph; 200 is acknowledged, 503 refused (nothing kept); returns the status. */
async function write(w: Writer, marker: string): Promise<number> {
  const r = await call(w.server.url, 'POST', `/api/v1/documents/${w.ref}/mutations`, w.token, {
    headers: { 'idempotency-key': idemKey(), 'service-if-revision': w.revision },
    body: { v: 1, intent: 'fill the disk', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: `${marker} ${PARAGRAPH}` }] } },
  });
  if (r.status === 200) {
    w.acknowledged.push({ ref: w.ref, marker });
    w.revision = r.headers.get('service-revision')!;
  } else if (r.status === 503) {
    assert.is(r.json.error.code, 'TEMPORARILY_UNAVAILABLE');
  } else {
    w.unexpected.push(`${marker}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  }
  return r.status;
}

/** One episode, on a document of its own: writes, the disk fills, writes are refused, the disk frees, writes go on. */
async function episode(w: Writer, dir: string, n: number, room: number): Promise<void> {
  await useNewDocument(w, `Episode ${n}`);
  for (let i = 0; i < 12; i++) await write(w, `e${n}-before-${i}`);
  const filler = fill(dir, room);
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push(await write(w, `e${n}-full-${i}`));
  assert.ok(statuses.includes(503), `episode ${n}: a full disk refuses writes with 503 (${statuses.join(',')})`);
  rmSync(filler);
  for (let i = 0; i < 12; i++) assert.is(await write(w, `e${n}-after-${i}`), 200, `episode ${n}: writes work again once the disk has room, without a restart`);
}

/** Creates a document and writes to it from now on. */
async function useNewDocument(w: Writer, title: string): Promise<void> {
  w.ref = await createDocument(w.server.url, w.token, title);
  const head = await fetch(`${w.server.url}/api/v1/documents/${w.ref}`, { method: 'HEAD', headers: { authorization: `Bearer ${w.token}` } });
  w.revision = head.headers.get('service-revision')!;
}

/** Every acknowledged paragraph is in its document, read through a fresh start on the folder. */
async function assertAllThere(w: Writer, when: string): Promise<void> {
  const texts = new Map<string, string>();
  for (const ref of new Set(w.acknowledged.map((a) => a.ref))) {
    const r = await fetch(`${w.server.url}/api/v1/documents/${ref}?format=markdown`, { headers: { authorization: `Bearer ${w.token}` } });
    assert.is(r.status, 200, when);
    texts.set(ref, await r.text());
  }
  const missing = w.acknowledged.filter((a) => !texts.get(a.ref)!.includes(`${a.marker} x`));
  assert.equal(missing, [], `${when}: every write answered 200 is there (${w.acknowledged.length} acknowledged)`);
}

test('a real full disk, several times over, kill -9 and a SIGTERM while full: every acknowledged write survives and the folder starts without a flag', async () => {
  const mount = mountTmpfs(MOUNT_BYTES);
  if (mount === null) return;
  const data = join(mount, 'data');
  const operatorKey = randomBytes(24).toString('base64url');
  let server: ServerProcess | null = null;
  try {
    server = await startLowdbProcess(data, operatorKey);
    const cred = await call(server.url, 'POST', '/operator/v1/credentials', operatorKey, {
      headers: { 'idempotency-key': idemKey() },
      body: { label: 'disk', scopes: ['document:create', 'document:read', 'document:write'] },
    });
    assert.is(cred.status, 201);
    const token = cred.json.data.token as string;
    const w: Writer = { server, token, ref: '', revision: '', acknowledged: [], unexpected: [] };

    await episode(w, mount, 1, 12 * 1024);
    await server.stop('SIGKILL');
    server = w.server = await startLowdbProcess(data, operatorKey);
    await assertAllThere(w, 'after an episode and kill -9');

    await episode(w, mount, 2, 0);
    await episode(w, mount, 3, 8 * 1024);
    await server.stop('SIGKILL');
    server = w.server = await startLowdbProcess(data, operatorKey);
    await assertAllThere(w, 'after two more episodes and kill -9');

    await episode(w, mount, 4, 16 * 1024);
    const filler = fill(mount, 4 * 1024);
    // 4 KiB left may still take writes (a frame can end in a page the journal holds already, and a
    // checkpoint may free a journal): fill what is left and write again until the disk refuses, so
    // that the stop below meets a full disk.
    let status = await write(w, 'full-at-stop');
    for (let i = 0; status === 200 && i < 8; i++) {
      fill(mount, 0);
      status = await write(w, `full-at-stop-${i}`);
    }
    assert.is(status, 503, 'the disk is full at the stop');
    await server.stop('SIGTERM');
    assert.is(server.child.exitCode, 0, `a graceful stop on a full disk ends cleanly: ${server.stderr()}`);
    rmSync(filler);
    server = w.server = await startLowdbProcess(data, operatorKey);
    await assertAllThere(w, 'after a third episode and a SIGTERM while the disk was full');
    assert.is(await write(w, 'after-restart'), 200);
    assert.equal(w.unexpected, [], 'every answer was 200 or 503');
  } finally {
    await server?.stop('SIGKILL');
    unmount(mount);
  }
});

test.run();
