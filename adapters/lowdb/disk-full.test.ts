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
import { append, crashCopy, create, dump, journalOf, put, removeTempDirs, tempDir } from './lowdb-kit.ts';
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
    journalSyscalls.writeSync = (fd, buffer, offset, length, position) => {
      if (half && length > 1) {
        half = false;
        return original.writeSync(fd, buffer, offset, length >> 1, position); // part of the frame reaches the file
      }
      throw noSpace();
    };
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

/**
 * A disk that fills up and empties again: while `full`, every journal write puts part of its bytes
 * in the file (a short write) and the next one fails with ENOSPC, like a file system that runs out
 * of blocks in the middle of a frame; file headers of new journals (rotation) and rotation frames
 * included.
 */
const flakyDisk = {
  full: false,
  install(): void {
    let partial = true;
    journalSyscalls.writeSync = (fd, buffer, offset, length, position) => {
      if (!flakyDisk.full) return original.writeSync(fd, buffer, offset, length, position);
      if (partial && length > 1) {
        partial = false;
        return original.writeSync(fd, buffer, offset, Math.max(1, length >> 1), position);
      }
      partial = true;
      throw noSpace();
    };
  },
};

/** Waits until no checkpoint runs (a crash copy mid-rename would only test the rename). */
async function settled(storage: { stats(): { checkpointRunning: boolean } }): Promise<void> {
  while (storage.stats().checkpointRunning) await new Promise((r) => setTimeout(r, 2));
}

test('after several disk-full episodes (short writes, rotations refused half-way) a crash copy opens without any flag to exactly the acknowledged writes', async () => {
  const dir = await tempDir();
  // Small checkpoints: journals rotate every few commits, so episodes also hit new journals' headers and rotation frames.
  const storage = await lowdbStorage({ dir, checkpointEveryBytes: 700 });
  const acknowledged: number[] = [];
  let refused = 0;
  flakyDisk.install();
  try {
    await storage.commit([create('d1')]);
    let version = 1;
    for (let round = 0; round < 60; round++) {
      flakyDisk.full = round % 7 === 3 || round % 7 === 4; // two rounds in seven, nine episodes
      const next = version + 1;
      const results = await Promise.allSettled([storage.commit([append('d1', next, 40 + (round % 5) * 30)]), storage.commit([put(`k${round}`, { round })])]);
      for (const result of results) {
        if (result.status === 'rejected') {
          assert.ok(isStorageUnavailable(result.reason), `round ${round}: a full disk is a passing refusal, not a failure: ${String(result.reason)}`);
          refused++;
        }
      }
      if (results[0].status === 'fulfilled') {
        version = next;
        acknowledged.push(round);
      }
      flakyDisk.full = false;
      await settled(storage);
      const copy = await crashCopy(dir); // kill -9 now
      const reopened = await lowdbStorage({ dir: copy });
      try {
        const doc = await reopened.loadDocument('d1');
        assert.is(doc?.head.version, version, `round ${round}: the crash copy holds every acknowledged version`);
        assert.equal(await reopened.getRecord('c', `k${round}`), await storage.getRecord('c', `k${round}`), `round ${round}: and the acknowledged record`);
        assert.is(reopened.stats().recovery, null, `round ${round}: nothing torn or damaged was left behind`);
      } finally {
        await reopened.close();
      }
    }
    assert.ok(refused >= 10, `the episodes refused writes (${refused})`);
    assert.ok(storage.stats().checkpoints >= 3, 'journals rotated during the run');
    const live = await dump(storage, ['d1']);

    // A graceful stop while the disk is full: the final checkpoint cannot be written, but every
    // acknowledged write is in the journal, so the stop succeeds and the next start replays it.
    flakyDisk.full = true;
    await storage.close();
    flakyDisk.full = false;
    const restarted = await lowdbStorage({ dir });
    try {
      assert.equal(await dump(restarted, ['d1']), live, 'a stop during a full disk keeps every acknowledged write');
      assert.is(restarted.stats().recovery, null);
      await restarted.commit([append('d1', version + 1)]);
    } finally {
      await restarted.close();
    }
  } finally {
    flakyDisk.full = false;
    restore();
    await storage.close();
  }
});

test.run();
