import { spawnSync } from 'node:child_process';
import { appendFile, cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isStorageConflict } from '../../src/ports.ts';
import type { BatchOp, DocumentHead, Storage } from '../../src/ports.ts';
import { storageConformance } from '../conformance.ts';
import { MemoryCore } from '../core/memory-core.ts';
import { memoryStorage } from '../memory/index.ts';
import { crc32, crc32Portable } from './crc32.ts';
import { GroupCommitter } from './group-commit.ts';
import { lowdbStorage, type LowdbStorage, type LowdbStorageOptions } from './index.ts';

const tempDirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-lowdb-'));
  tempDirs.push(dir);
  return dir;
}

function harness(options: Omit<LowdbStorageOptions, 'dir'> = {}) {
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kw-lowdb-'));
    const opened: Storage[] = [];
    const open = async () => {
      const storage = await lowdbStorage({ dir, ...options });
      opened.push(storage);
      return storage;
    };
    return {
      storage: await open(),
      reopen: open,
      teardown: async () => {
        for (const s of opened) await s.close().catch(() => {});
        await rm(dir, { recursive: true, force: true });
      },
    };
  };
}

storageConformance('lowdb', harness());
storageConformance('lowdb, checkpoint every 2 KiB', harness({ checkpointEveryBytes: 2048 }));

/* ---------- lowdb-specific behaviour ---------- */

const text = new TextEncoder();
const head = (ref: string, version: number, extra: Partial<DocumentHead> = {}): DocumentHead => ({
  documentRef: ref,
  spaceRef: 'spc',
  accountId: 'acct',
  title: ref,
  version,
  snapshotVersion: 1,
  contentSha256: `sha${version}`,
  blockCount: 1,
  createdAt: 1,
  updatedAt: version,
  ...extra,
});
const create = (ref: string): BatchOp => ({ kind: 'document.create', head: head(ref, 1), snapshot: text.encode(`snap ${ref}`) });
const append = (ref: string, version: number, size = 16): BatchOp => ({
  kind: 'document.append',
  head: head(ref, version),
  update: Uint8Array.from({ length: size }, (_, i) => (i + version) % 256),
});
const put = (key: string, value: unknown, expectedRevision?: number | null): BatchOp =>
  expectedRevision === undefined
    ? { kind: 'record.put', collection: 'c', key, value }
    : { kind: 'record.put', collection: 'c', key, value, expectedRevision };

/** Everything observable about `refs`, collection `c` and account `acct`, as plain data. */
async function dump(storage: Storage, refs: string[]) {
  const docs = [];
  for (const ref of refs) {
    const doc = await storage.loadDocument(ref);
    docs.push(doc && { head: doc.head, snapshot: Array.from(doc.snapshot), updates: doc.updates.map((u) => [u.version, Array.from(u.update)]) });
  }
  return { docs, records: await storage.listRecords('c'), heads: await storage.listDocumentHeads('acct', 1000) };
}

/** What a crash would leave: the folder's files as they are now, minus the live process's LOCK. */
async function crashCopy(dir: string): Promise<string> {
  const copy = await tempDir();
  await cp(dir, copy, { recursive: true, filter: (src) => !src.endsWith('LOCK') });
  return copy;
}

async function journalOf(dir: string): Promise<string> {
  const names = (await readdir(dir)).filter((n) => n.startsWith('journal-')).sort();
  assert.ok(names.length > 0, 'a journal exists');
  return join(dir, names[names.length - 1]);
}

const test = suite('lowdb storage');

test.after(async () => {
  for (const dir of tempDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

test('a torn last journal line is discarded on reopen and cut off before new appends', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1'), put('k', { n: 1 }, null)]);
  await storage.commit([append('d1', 2)]);
  await storage.commit([append('d1', 3), put('k', { n: 2 }, 1)]);
  const expected = await dump(storage, ['d1']);
  const journal = await readFile(await journalOf(dir));
  const lastLine = journal.subarray(journal.lastIndexOf(0x0a, journal.length - 2) + 1);
  const tails: [string, Uint8Array][] = [
    ['half a line', lastLine.subarray(0, lastLine.length >> 1)],
    ['garbage without newline', text.encode('{"seq":')],
    ['zeros', new Uint8Array(4096)],
    ['a complete line with a bad checksum', text.encode(`00000000 ${lastLine.subarray(9).toString()}`)],
  ];
  for (const [what, tail] of tails) {
    const copy = await crashCopy(dir);
    await appendFile(await journalOf(copy), tail);
    const reopened = await lowdbStorage({ dir: copy });
    assert.equal(await dump(reopened, ['d1']), expected, `${what}: state is the last complete batch`);
    assert.is(reopened.stats().tornBytesOnOpen, tail.length, `${what}: torn bytes reported`);
    await reopened.commit([append('d1', 4)]);
    const again = await crashCopy(copy);
    const third = await lowdbStorage({ dir: again });
    assert.is((await third.getDocumentHead('d1'))?.version, 4, `${what}: appends after the cut replay`);
    assert.is(third.stats().tornBytesOnOpen, 0);
    await third.close();
    await reopened.close();
  }
  await storage.close();
});

test('a damaged line followed by intact lines refuses to open with a clear message', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1')]);
  await storage.commit([append('d1', 2, 64)]);
  await storage.commit([append('d1', 3)]);
  const copy = await crashCopy(dir);
  await storage.close();
  const path = await journalOf(copy);
  const journal = await readFile(path);
  const secondLine = journal.indexOf(0x0a) + 1;
  journal[secondLine + 60] ^= 0x01;
  await writeFile(path, journal);
  let message = '';
  await lowdbStorage({ dir: copy }).then(
    (s) => s.close(),
    (error: Error) => (message = error.message),
  );
  assert.match(message, /corrupt at line 2/);
  assert.match(message, /Refusing to open/);
  assert.not.ok((await readdir(copy)).includes('LOCK'), 'a failed open releases the lock');
});

test('a checkpoint happens when the journal exceeds checkpointEveryBytes, and the state survives a crash and a reopen', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir, checkpointEveryBytes: 4096 });
  await storage.commit([create('d1'), create('d2')]);
  for (let v = 2; v <= 40; v++) {
    await Promise.all([storage.commit([append('d1', v, 200)]), storage.commit([append('d2', v, 100), put(`k${v}`, { v })])]);
  }
  for (let i = 0; i < 400 && (storage.stats().checkpoints < 2 || storage.stats().checkpointRunning); i++) await new Promise((r) => setTimeout(r, 5));
  const stats = storage.stats();
  assert.ok(stats.checkpoints >= 2, `checkpoints written: ${stats.checkpoints}`);
  assert.ok(stats.journalGeneration > 2, 'the journal was rotated');
  assert.is(stats.lastCheckpointError, null);
  const files = await readdir(dir);
  assert.ok(files.includes('checkpoint.json'));
  assert.ok(files.filter((f) => f.startsWith('journal-')).length <= 2, `old journals removed: ${files}`);
  const expected = await dump(storage, ['d1', 'd2']);

  const copy = await crashCopy(dir);
  const crashed = await lowdbStorage({ dir: copy });
  assert.equal(await dump(crashed, ['d1', 'd2']), expected, 'checkpoint + journal replay after a crash');
  await crashed.close();

  await storage.close();
  const reopened = await lowdbStorage({ dir });
  assert.equal(await dump(reopened, ['d1', 'd2']), expected, 'after a clean close');
  assert.is(reopened.stats().replayedOnOpen, 0, 'close left everything in the checkpoint');
  await reopened.close();
});

test('commits keep landing while a checkpoint is being written, and the checkpoint holds the state as of its rotation', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  // 'big' comes first in the checkpoint and spans several ~1 MiB pieces, so appends to 'd1' land
  // while the checkpoint is still being written, before 'd1' is serialised.
  await storage.commit([create('big'), create('d1')]);
  for (let v = 2; v <= 60; v++) await storage.commit([append('big', v, 60_000)]);
  const checkpoint = storage.checkpoint();
  const writes: Promise<void>[] = [];
  let landedDuring = 0;
  for (let v = 2; v <= 40; v++) {
    writes.push(storage.commit([append('d1', v), put(`k${v}`, v)]));
    await writes[writes.length - 1];
    if (storage.stats().checkpointRunning) landedDuring++;
  }
  await Promise.all([checkpoint, ...writes]);
  assert.ok(landedDuring > 0, 'some commits completed while the checkpoint was being written');
  const expected = await dump(storage, ['big', 'd1']);
  const copy = await crashCopy(dir);
  const crashed = await lowdbStorage({ dir: copy });
  assert.ok(crashed.stats().replayedOnOpen > 0, 'the commits after the rotation are replayed from the new journal');
  assert.equal(await dump(crashed, ['big', 'd1']), expected);
  await crashed.close();
  await storage.close();
});

test('journal replay after a crash restores every kind of op exactly', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  const memory = memoryStorage();
  const big = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 13) % 256);
  const batches: BatchOp[][] = [
    [{ kind: 'document.create', head: head('d1', 1), snapshot: big }, create('d2'), put('k/ü', { text: 'ünïcode ✓ "q"\n', list: [1, null, true] }, null)],
    [append('d1', 2), append('d1', 3), put('k/2', [1, 2])],
    [append('d1', 4, 3000), { kind: 'document.compact', documentRef: 'd1', snapshotVersion: 3, snapshot: big.subarray(7, 5000) }],
    [{ kind: 'record.delete', collection: 'c', key: 'k/2', expectedRevision: 1 }, put('k/3', 'three')],
    [append('d2', 2), { kind: 'document.compact', documentRef: 'd2', snapshotVersion: 2, snapshot: new Uint8Array(0) }],
    [{ kind: 'document.append', head: head('d1', 5, { title: 'tïtle', updatedAt: 99 }), update: new Uint8Array([0, 255]) }],
  ];
  for (const ops of batches) {
    await storage.commit(ops);
    await memory.commit(ops);
  }
  const copy = await crashCopy(dir);
  const crashed = await lowdbStorage({ dir: copy });
  assert.is(crashed.stats().replayedOnOpen, batches.length);
  assert.equal(await dump(crashed, ['d1', 'd2']), await dump(memory, ['d1', 'd2']));
  assert.equal(await crashed.loadUpdates('d1', 3), await memory.loadUpdates('d1', 3));
  await crashed.close();
  await storage.close();
});

test('journals left over from a crash after a checkpoint are removed on open', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1')]);
  await storage.checkpoint();
  await storage.commit([append('d1', 2)]);
  const copy = await crashCopy(dir);
  await writeFile(join(copy, 'journal-000001.log'), 'covered by the checkpoint, must not be replayed\n');
  await writeFile(join(copy, 'checkpoint.json.tmp'), '{"half": ');
  const reopened = await lowdbStorage({ dir: copy });
  assert.is((await reopened.getDocumentHead('d1'))?.version, 2);
  assert.not.ok((await readdir(copy)).includes('journal-000001.log'));
  await reopened.close();
  await storage.close();
});

test('a corrupt checkpoint refuses to open with a clear message', async () => {
  const dir = await tempDir();
  await writeFile(join(dir, 'checkpoint.json'), '{"format":"something else"}');
  let message = '';
  await lowdbStorage({ dir }).then(
    (s) => s.close(),
    (error: Error) => (message = error.message),
  );
  assert.match(message, /checkpoint is not valid/);
});

test('a second open of a locked folder fails while the first is open', async () => {
  const dir = await tempDir();
  const first = await lowdbStorage({ dir });
  let message = '';
  await lowdbStorage({ dir }).then(
    (s) => s.close(),
    (error: Error) => (message = error.message),
  );
  assert.match(message, /is locked by this process/);
  assert.is(await first.getRecord('c', 'k'), null, 'the first storage is unaffected');
  await first.commit([put('k', 1)]);
  await first.close();
  const second = await lowdbStorage({ dir });
  assert.is((await second.getRecord('c', 'k'))?.value, 1);
  await second.close();
});

test('a stale lock whose pid is not alive is taken over', async () => {
  const dir = await tempDir();
  const dead = spawnSync(process.execPath, ['-e', '']).pid;
  assert.ok(dead !== undefined && dead > 0);
  await writeFile(join(dir, 'LOCK'), `${dead}\n`);
  const storage = await lowdbStorage({ dir });
  assert.is((await readFile(join(dir, 'LOCK'), 'utf8')).trim(), String(process.pid));
  await storage.close();
  assert.not.ok((await readdir(dir)).includes('LOCK'), 'close releases the lock');
});

test('close writes a checkpoint, removes the journals and releases the lock', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1'), put('k', 1)]);
  await storage.close();
  assert.equal((await readdir(dir)).sort(), ['checkpoint.json']);
  assert.is(storage.stats().checkpoints, 1);
});

test('64 concurrent commits on different documents all land and share fsyncs', async () => {
  const dir = await tempDir();
  const storage: LowdbStorage = await lowdbStorage({ dir });
  const refs = Array.from({ length: 64 }, (_, i) => `doc${i}`);
  await storage.commit(refs.map(create));
  const before = storage.stats();
  await Promise.all(refs.map((ref) => storage.commit([append(ref, 2)])));
  const after = storage.stats();
  assert.is(after.commits - before.commits, 64);
  assert.ok(after.fsyncs - before.fsyncs < 64, `fsyncs ${after.fsyncs - before.fsyncs} < commits 64`);
  for (const ref of refs) assert.is((await storage.getDocumentHead(ref))?.version, 2);
  await storage.close();
  const reopened = await lowdbStorage({ dir });
  for (const ref of refs) assert.is((await reopened.getDocumentHead(ref))?.version, 2);
  await reopened.close();
});

test('queued commits racing on one version are decided first-wins, exactly like the memory adapter', async () => {
  const dir = await tempDir();
  const lowdb = await lowdbStorage({ dir });
  const memory = memoryStorage();
  const refs = ['r0', 'r1', 'r2'];
  for (const s of [lowdb, memory]) await s.commit(refs.map(create));
  const opArb = fc.record({ doc: fc.nat(2), delta: fc.nat(3), kind: fc.nat(2), key: fc.nat(1), exp: fc.nat(3) });
  const roundArb = fc.array(fc.array(opArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 });
  await fc.assert(
    fc.asyncProperty(fc.array(roundArb, { minLength: 1, maxLength: 4 }), async (rounds) => {
      for (const round of rounds) {
        const state = await dump(memory, refs);
        const batches = round.map((specs) =>
          specs.map((s): BatchOp => {
            if (s.kind < 2) return append(refs[s.doc], (state.docs[s.doc]?.head.version ?? 0) + [0, 1, 1, 2][s.delta]);
            const revision = state.records.find((r) => r.key === `k${s.key}`)?.revision ?? 0;
            return put(`k${s.key}`, s, [undefined, null, revision, revision + 1][s.exp]);
          }),
        );
        const settle = (s: Storage) =>
          Promise.all(batches.map((ops) => s.commit(ops).then(() => 'ok', (e: unknown) => (isStorageConflict(e) ? `conflict@${e.opIndex}` : String(e)))));
        const [fromLowdb, fromMemory] = await Promise.all([settle(lowdb), settle(memory)]);
        assert.equal(fromLowdb, fromMemory);
      }
      assert.equal(await dump(lowdb, refs), await dump(memory, refs));
    }),
    { numRuns: 30 },
  );
  await lowdb.close();
  const reopened = await lowdbStorage({ dir });
  assert.equal(await dump(reopened, refs), await dump(memory, refs));
  await reopened.close();
});

test('a failed journal write rejects its group and everything queued, applies nothing, and refuses later commits', async () => {
  const core = new MemoryCore();
  let fail = false;
  let writes = 0;
  const committer = new GroupCommitter(core, {
    async write() {
      writes++;
      await new Promise((r) => setTimeout(r, 1));
      if (fail) throw new Error('disk full');
    },
  }, 0);
  await committer.submit([create('d1')]);
  assert.is(committer.pendingKeys, 0, 'the projection drains once batches are applied');
  fail = true;
  const inFlight = committer.submit([append('d1', 2)]);
  await Promise.resolve();
  const queued = committer.submit([append('d1', 3), put('k', 1)]);
  const results = await Promise.allSettled([inFlight, queued]);
  assert.equal(results.map((r) => r.status), ['rejected', 'rejected']);
  assert.match(String((results[0] as PromiseRejectedResult).reason), /disk full/);
  assert.is(core.getDocumentHead('d1')?.version, 1, 'nothing of the failed groups is applied');
  assert.is(core.getRecord('c', 'k'), null);
  assert.is(committer.pendingKeys, 0);
  fail = false;
  await committer.submit([append('d1', 2)]).then(
    () => assert.unreachable('a poisoned committer accepts no more commits'),
    (error: Error) => assert.match(error.message, /earlier journal write failed/),
  );
  assert.is(writes, 2);
});

test('fsync: false still journals every commit and reopens', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir, fsync: false });
  await storage.commit([create('d1')]);
  await Promise.all([storage.commit([append('d1', 2)]), storage.commit([put('k', 1)])]);
  assert.is(storage.stats().fsyncs, 0);
  const copy = await crashCopy(dir);
  const reopened = await lowdbStorage({ dir: copy });
  assert.equal(await dump(reopened, ['d1']), await dump(storage, ['d1']));
  await reopened.close();
  await storage.close();
});

test('the native and portable crc32 agree, and match the standard check value', () => {
  assert.is(crc32(text.encode('123456789')), 0xcbf43926);
  assert.is(crc32Portable(text.encode('123456789')), 0xcbf43926);
  const data = Uint8Array.from({ length: 1000 }, (_, i) => (i * 31) % 256);
  assert.is(crc32Portable(data), crc32(data));
});

test.run();
