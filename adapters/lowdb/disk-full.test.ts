/**
 * A full disk (ENOSPC injected into the journal's system calls): the write is refused with a
 * StorageUnavailableError and nothing of it is kept, reads keep working, writes work again without a
 * restart once the disk has room, and the API answers 503 TEMPORARILY_UNAVAILABLE with Retry-After
 * meanwhile.
 */
import { randomBytes } from 'node:crypto';
import { fstatSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiHandler } from '../../src/api/handler.ts';
import { createEngine } from '../../src/engine.ts';
import { isStorageUnavailable } from '../../src/errors.ts';
import { createFetch } from '../../transports/inproc/index.ts';
import { journalSyscalls } from './journal-file.ts';
import { append, create, dump, journalOf, put, removeTempDirs, tempDir } from './lowdb-kit.ts';
import { lowdbStorage } from './index.ts';

test.after(removeTempDirs);

const original = { ...journalSyscalls };
const noSpace = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/**
 * The disk fills up when the journal holds `limit` bytes: until `restore()`, a write past it puts
 * half of its bytes in the file and then fails (ENOSPC), or (`sync`) writes land in the page cache
 * but an fdatasync of a file longer than `limit` fails (delayed allocation).
 */
function diskFull(what: 'write' | 'sync', limit: number): void {
  if (what === 'write') {
    let half = true;
    journalSyscalls.writeSync = ((fd: number, buffer: Uint8Array, offset: number, length: number) => {
      if (half && length > 1) {
        half = false;
        return original.writeSync(fd, buffer, offset, length >> 1); // part of the frame reaches the file
      }
      throw noSpace();
    }) as typeof journalSyscalls.writeSync;
  } else {
    journalSyscalls.fdatasyncSync = (fd: number) => {
      if (fstatSync(fd).size > limit) throw noSpace();
      original.fdatasyncSync(fd);
    };
    journalSyscalls.fdatasync = (fd: number) => (fstatSync(fd).size > limit ? Promise.reject(noSpace()) : original.fdatasync(fd));
  }
}
function restore(): void {
  Object.assign(journalSyscalls, original);
}

for (const what of ['write', 'sync'] as const) {
  for (const fsyncOffThread of [true, false]) {
    test(`ENOSPC on the journal ${what} (${fsyncOffThread ? 'off' : 'on'} the event loop): refused, nothing kept, reads work, writes recover without a restart`, async () => {
      const dir = await tempDir();
      const storage = await lowdbStorage({ dir, fsyncOffThread });
      try {
        await storage.commit([create('d1'), put('k', { n: 1 }, null)]);
        const before = await dump(storage, ['d1']);
        const journalBefore = await readFile(await journalOf(dir));
        diskFull(what, journalBefore.length);
        let error: unknown = null;
        try {
          await Promise.all([storage.commit([append('d1', 2)]), storage.commit([put('k', { n: 2 }, 1)])]);
        } catch (e) {
          error = e;
        } finally {
          restore();
        }
        assert.ok(isStorageUnavailable(error), String(error));
        assert.equal(await dump(storage, ['d1']), before, 'reads work and show nothing of the refused writes');
        assert.equal(await readFile(await journalOf(dir)), journalBefore, 'the journal is back to its acknowledged bytes');
        assert.is(storage.stats().diskFullRefusals, 1);

        await storage.commit([append('d1', 2)]);
        await storage.commit([put('k', { n: 2 }, 1)]);
        const after = await dump(storage, ['d1']);
        await storage.close();
        const reopened = await lowdbStorage({ dir });
        assert.equal(await dump(reopened, ['d1']), after, 'a reopen sees exactly the acknowledged state');
        assert.is(reopened.stats().recovery, null, 'nothing torn was left behind');
        await reopened.close();
      } finally {
        restore();
        await storage.close();
      }
    });
  }
}

test('the API answers 503 TEMPORARILY_UNAVAILABLE with Retry-After while the disk is full, reads keep working, and the same request succeeds later', async () => {
  const dir = await tempDir();
  const engine = createEngine({ storage: await lowdbStorage({ dir }) });
  const operatorKey = randomBytes(24).toString('base64url');
  const lines: object[] = [];
  const fetch = createFetch(createApiHandler({ engine, operatorKey, log: (line) => lines.push(line) }));
  try {
    const cred = await fetch('http://kw.local/operator/v1/credentials', {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'disk', scopes: ['document:create', 'document:read', 'document:write'] }),
    });
    const token = ((await cred.json()) as { data: { token: string } }).data.token;
    const create = (key: string) =>
      fetch('http://kw.local/api/v1/documents', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ v: 1, title: 'On a full disk' }),
      });
    const first = await create('disk-full-create-0001');
    assert.is(first.status, 201);
    const ref = ((await first.json()) as { data: { documentRef: string } }).data.documentRef;

    diskFull('sync', (await stat(await journalOf(dir))).size);
    let refused: Response;
    try {
      refused = await create('disk-full-create-0002');
    } finally {
      restore();
    }
    assert.is(refused.status, 503);
    const body = (await refused.json()) as { error: { code: string; retryable: boolean } };
    assert.is(body.error.code, 'TEMPORARILY_UNAVAILABLE');
    assert.is(body.error.retryable, true);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.ok(!lines.some((l) => (l as { level?: string }).level === 'error'), 'not logged as an internal error');

    diskFull('write', (await stat(await journalOf(dir))).size);
    try {
      const read = await fetch(`http://kw.local/api/v1/documents/${ref}`, { headers: { authorization: `Bearer ${token}` } });
      assert.is(read.status, 200, 'reads keep working while writes cannot be stored');
    } finally {
      restore();
    }

    const again = await create('disk-full-create-0002');
    assert.is(again.status, 201, 'the same request succeeds once the disk has room, without a restart');
  } finally {
    restore();
    await engine.close();
  }
});

test.run();
