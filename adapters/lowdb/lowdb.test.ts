/**
 * The lowdb adapter: the conformance suite (plain and with tiny checkpoints), checkpoints, group
 * commit, racing commits and journal write failures. Recovery, locks and the codec have their own files.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isStorageConflict, recordTopic, streamTopic } from '../../src/ports.ts';
import { ChangeNotifier } from '../core/change-notifier.ts';
import type { BatchOp, Storage } from '../../src/ports.ts';
import { storageConformance } from '../conformance/index.ts';
import { MemoryCore } from '../core/memory-core.ts';
import { memoryStorage } from '../memory/index.ts';
import { crc32, crc32Portable } from './crc32.ts';
import { GroupCommitter } from './group-commit.ts';
import { lowdbStorage, MIN_JOURNAL_BYTES, type LowdbStorage, type LowdbStorageOptions } from './index.ts';
import { FILE_HEADER_BYTES } from './journal-codec.ts';
import { append, crashCopy, create, dump, head, put, removeTempDirs, tempDir, text } from './lowdb-kit.ts';

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


const test = suite('lowdb storage');

test.after(removeTempDirs);

test('a checkpoint happens when the journal exceeds checkpointEveryBytes, and the state survives a crash and a reopen', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir, checkpointEveryBytes: 4096 });
  await storage.commit([create('d1'), create('d2')]);
  const settle = async () => {
    // A commit starts a checkpoint only when none is running; on a slow disk one can outlast many
    // commits, so let it finish before the next round (bounded: 10 s).
    for (let i = 0; i < 2000 && storage.stats().checkpointRunning; i++) await new Promise((r) => setTimeout(r, 5));
  };
  for (let v = 2; v <= 40; v++) {
    await Promise.all([storage.commit([append('d1', v, 200)]), storage.commit([append('d2', v, 100), put(`k${v}`, { v })])]);
    await settle();
  }
  await settle();
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

test('a journal grown past half the last checkpoint (and 1 MiB) is checkpointed before checkpointEveryBytes', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir, fsync: false });
  const value = 'x'.repeat(64 * 1024);
  // The same key again and again: the state stays one record, the journal grows by ~64 KiB a commit.
  for (let i = 0; i < 12; i++) await storage.commit([put('k', { i, value })]);
  assert.is(storage.stats().checkpoints, 0, 'no checkpoint below MIN_JOURNAL_BYTES');
  for (let i = 12; i < 80; i++) {
    await storage.commit([put('k', { i, value })]);
    for (let n = 0; n < 2000 && storage.stats().checkpointRunning; n++) await new Promise((r) => setTimeout(r, 5));
  }
  const stats = storage.stats();
  assert.ok(stats.checkpoints >= 2, `checkpoints written: ${stats.checkpoints}`);
  assert.ok(stats.journalBytes < MIN_JOURNAL_BYTES + 70 * 1024, `journal kept near 1 MiB, not 16 MiB: ${stats.journalBytes}`);
  assert.equal((await storage.getRecord('c', 'k'))?.value, { i: 79, value });
  await storage.close();
  const reopened = await lowdbStorage({ dir });
  assert.equal((await reopened.getRecord('c', 'k'))?.value, { i: 79, value });
  await reopened.close();
});

test('commits keep landing while a checkpoint is being written, and the checkpoint holds the state as of its rotation', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  // 'big' comes first in the checkpoint and spans several ~1 MiB pieces, so appends to 'd1' land
  // while the checkpoint is still being written, before 'd1' is serialised.
  await storage.commit([create('big'), create('d1')]);
  for (let v = 2; v <= 60; v++) await storage.commit([append('big', v, 60_000)]);
  // The journal outgrew the first checkpoint on the way: let that automatic checkpoint finish first.
  for (let i = 0; i < 2000 && storage.stats().checkpointRunning; i++) await new Promise((r) => setTimeout(r, 5));
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
    [append('d1', 4, 3000), { kind: 'document.compact', documentRef: 'd1', snapshotVersion: 3, generation: 0, snapshot: big.subarray(7, 5000) }],
    [{ kind: 'record.delete', collection: 'c', key: 'k/2', expectedRevision: 1 }, put('k/3', 'three')],
    [append('d2', 2), { kind: 'document.compact', documentRef: 'd2', snapshotVersion: 2, generation: 0, snapshot: new Uint8Array(0) }],
    [{ kind: 'document.append', head: head('d1', 5, { title: 'tïtle', updatedAt: 99 }), update: new Uint8Array([0, 255]) }],
    [
      { kind: 'record.put', collection: 'c', key: 'j1', value: { s: 'queued' }, index: { partition: 'cred ✓', sortKey: '0002' } },
      { kind: 'record.put', collection: 'c', key: 'j2', value: null, index: { partition: 'cred ✓', sortKey: '0001' } },
      { kind: 'stream.append', stream: 'ev:j1', seq: 1, value: { type: 'queued', at: 1.5 } },
    ],
    [
      { kind: 'record.put', collection: 'c', key: 'j1', value: { s: 'done' }, index: { partition: 'cred ✓', sortKey: '0000' } },
      { kind: 'record.put', collection: 'c', key: 'j2', value: 2 },
      { kind: 'stream.append', stream: 'ev:j1', seq: 2, value: 'ünïcode' },
      { kind: 'stream.append', stream: 'ev:j1', seq: 3, value: [null] },
    ],
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
  assert.equal(await crashed.listPage('c', 'cred ✓', 10), await memory.listPage('c', 'cred ✓', 10));
  assert.equal(await crashed.readStream('ev:j1', 0, 10), await memory.readStream('ev:j1', 0, 10));
  assert.is(await crashed.streamHead('ev:j1'), 3);
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

test('close writes a checkpoint naming a fresh empty journal, removes the older journals and releases the lock', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1'), put('k', 1)]);
  await storage.close();
  assert.equal((await readdir(dir)).sort(), ['ACKED', 'checkpoint.json', 'journal-000002.log']);
  assert.is((await readFile(join(dir, 'journal-000002.log'))).length, FILE_HEADER_BYTES, 'the new journal holds only its header');
  assert.is(JSON.parse(await readFile(join(dir, 'checkpoint.json'), 'utf8')).nextJournal, 2);
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

test('a listener runs only after its batch is fdatasync-ed and applied; a failed journal write notifies nobody', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  const seen: { fsyncs: number; commits: number; head: Promise<number> }[] = [];
  storage.subscribe(streamTopic('s'), () => {
    const stats = storage.stats();
    seen.push({ fsyncs: stats.fsyncs, commits: stats.commits, head: storage.streamHead('s') });
  });
  for (let seq = 1; seq <= 3; seq++) {
    const before = storage.stats();
    await storage.commit([{ kind: 'stream.append', stream: 's', seq, value: seq }]);
    const at = seen[seq - 1];
    assert.ok(at.fsyncs > before.fsyncs, `batch ${seq}: fdatasync done before the listener ran`);
    assert.is(at.commits, before.commits + 1, `batch ${seq}: counted as committed`);
    assert.is(await at.head, seq, `batch ${seq}: readable from the listener`);
  }
  await storage.close();

  const notifier = new ChangeNotifier();
  let calls = 0;
  notifier.subscribe(recordTopic('c', 'k'), () => calls++);
  let fail = true;
  const committer = new GroupCommitter(new MemoryCore(), { write: async () => { if (fail) throw new Error('disk full'); } }, 0, () => {}, notifier);
  await committer.submit([put('k', 1)]).then(() => assert.unreachable('the write fails'), () => {});
  fail = false;
  await committer.submit([put('k', 2)]).catch(() => {});
  assert.is(calls, 0);
});

test('the native and portable crc32 agree, and match the standard check value', () => {
  assert.is(crc32(text.encode('123456789')), 0xcbf43926);
  assert.is(crc32Portable(text.encode('123456789')), 0xcbf43926);
  const data = Uint8Array.from({ length: 1000 }, (_, i) => (i * 31) % 256);
  assert.is(crc32Portable(data), crc32(data));
});

test.run();
