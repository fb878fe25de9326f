/**
 * Opening a folder after a crash or after damage: torn tails are cut and reported, damage and
 * missing or emptied journals are refused with the file named.
 */
import { appendFile, mkdir, readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { lowdbStorage } from './index.ts';
import { encodeFileHeader } from './journal-codec.ts';
import type { RecoveryReport } from './recovery.ts';
import { acknowledgedUpTo, append, crashCopy, create, dump, frameStarts, head, journalOf, openError, put, removeTempDirs, tempDir, text } from './lowdb-kit.ts';

const test = suite('lowdb recovery');
test.after(removeTempDirs);


test('a torn tail is discarded, cut off before new appends, and reported through onRecovery and stats', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1'), put('k', { n: 1 }, null)]);
  await storage.commit([append('d1', 2)]);
  await storage.commit([append('d1', 3), put('k', { n: 2 }, 1)]);
  const expected = await dump(storage, ['d1']);
  const journal = await readFile(await journalOf(dir));
  const lastFrame = journal.subarray(frameStarts(journal).at(-1));
  const flipped = Buffer.from(lastFrame);
  flipped[flipped.length - 3] ^= 0xff;
  const tails: [string, Uint8Array, number][] = [
    ['half a frame', lastFrame.subarray(0, lastFrame.length >> 1), 1],
    ['a frame header only', lastFrame.subarray(0, 12), 1],
    ['garbage', text.encode('{"seq":'), 1],
    ['zeros', new Uint8Array(4096), 1],
    ['a whole frame with a bad body checksum', flipped, 1],
  ];
  for (const [what, tail, batches] of tails) {
    const copy = await crashCopy(dir);
    const path = await journalOf(copy);
    const offset = (await readFile(path)).length;
    await appendFile(path, tail);
    const reports: RecoveryReport[] = [];
    const reopened = await lowdbStorage({ dir: copy, onRecovery: (r) => reports.push(r) });
    assert.equal(await dump(reopened, ['d1']), expected, `${what}: state is the last complete batch`);
    assert.equal(reports.map(({ reason, ...r }) => r), [{ journal: path, offset, bytes: tail.length, batches, recoveredSeq: 3, acknowledgedSeq: 3, dataLoss: false }], `${what}: reported`);
    assert.equal(reopened.stats().recovery, reports[0]);
    assert.is(reopened.stats().tornBytesOnOpen, tail.length);
    await reopened.commit([append('d1', 4)]);
    const again = await crashCopy(copy);
    const third = await lowdbStorage({ dir: again });
    assert.is((await third.getDocumentHead('d1'))?.version, 4, `${what}: appends after the cut replay`);
    assert.is(third.stats().recovery, null);
    await third.close();
    await reopened.close();
  }
  await storage.close();
});

test('damage inside the last write group is a torn write: the whole group is discarded and counted', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1'), create('d2'), create('d3')]);
  const before = await dump(storage, ['d1', 'd2', 'd3']);
  await Promise.all(['d1', 'd2', 'd3'].map((ref) => storage.commit([append(ref, 2, 100)])));
  assert.is(storage.stats().fsyncs, 2, 'the three appends went out as one group');
  const copy = await crashCopy(dir);
  await acknowledgedUpTo(copy, 1); // the crash came while the last group was being written
  const path = await journalOf(copy);
  const data = await readFile(path);
  const starts = frameStarts(data);
  data[starts[1] + 40] ^= 0x10; // the first frame of the last group; its two successors stay intact
  await writeFile(path, data);
  const reports: RecoveryReport[] = [];
  const reopened = await lowdbStorage({ dir: copy, onRecovery: (r) => reports.push(r) });
  assert.equal(await dump(reopened, ['d1', 'd2', 'd3']), before);
  assert.equal(reports.map((r) => [r.offset, r.bytes, r.batches, r.dataLoss]), [[starts[1], data.length - starts[1], 3, false]]);
  await reopened.close();
  await storage.close();
});

test('damage followed by a later write group refuses to open, naming the file and the byte', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1')]);
  await storage.commit([append('d1', 2, 64)]);
  await storage.commit([append('d1', 3)]);
  const copy = await crashCopy(dir);
  await storage.close();
  const path = await journalOf(copy);
  const data = await readFile(path);
  const second = frameStarts(data)[1];
  data[second + 60] ^= 0x01;
  await writeFile(path, data);
  await acknowledgedUpTo(copy, 0); // even an acknowledgment record that lags proves nothing here
  const message = await openError(copy);
  assert.match(message, new RegExp(`${path} is damaged at byte ${second}`));
  assert.match(message, /would lose acknowledged writes/);
  assert.match(message, /acceptDataLoss: true/);
  assert.not.ok((await readdir(copy)).includes('LOCK'), 'a failed open releases the lock');
});

test('a journal the checkpoint names is refused when it is deleted or emptied after acknowledged writes', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1')]);
  await storage.checkpoint();
  await storage.commit([append('d1', 2), put('k', 'acknowledged')]);
  const path = await journalOf(dir);
  const name = path.slice(path.lastIndexOf('/') + 1);
  const deleted = await crashCopy(dir);
  await rm(join(deleted, name));
  assert.match(await openError(deleted), new RegExp(`${join(deleted, name)} is missing although checkpoint.json \\(generation \\d+, batch 1\\) says it follows`));
  const emptied = await crashCopy(dir);
  await truncate(join(emptied, name), 0);
  assert.match(await openError(emptied), new RegExp(`${join(emptied, name)} is emptied or damaged \\(it holds 0 bytes, less than a journal header\\)`));
  const intact = await crashCopy(dir);
  assert.is(await openError(intact), '', 'the untouched copy opens');
  await storage.close();
  const fresh = await tempDir();
  const first = await lowdbStorage({ dir: fresh });
  await first.commit([put('k', 1)]);
  const lost = await crashCopy(fresh);
  await rm(join(lost, 'journal-000001.log'));
  assert.match(await openError(lost), /journal-000001\.log is missing although checkpoint\.json \(generation 0, batch 0\)/, 'also for the first journal');
  await first.close();
});

test('a journal named by a rotation frame is refused when missing; with it, both journals replay', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1')]);
  // The checkpoint write fails after its rotation: journal 1 ends with a rotation frame naming 2,
  // and checkpoint.json still covers generation 0.
  await mkdir(join(dir, 'checkpoint.json.tmp'));
  await storage.checkpoint().then(
    () => assert.unreachable('the checkpoint cannot be written'),
    () => {},
  );
  assert.ok(storage.stats().lastCheckpointError !== null);
  await storage.commit([append('d1', 2)]);
  const expected = await dump(storage, ['d1']);
  const whole = await crashCopy(dir);
  await rm(join(whole, 'checkpoint.json.tmp'), { recursive: true });
  const reopened = await lowdbStorage({ dir: whole });
  assert.equal(await dump(reopened, ['d1']), expected);
  assert.is(reopened.stats().replayedOnOpen, 2);
  await reopened.close();
  const broken = await crashCopy(dir);
  await rm(join(broken, 'checkpoint.json.tmp'), { recursive: true });
  await rm(join(broken, 'journal-000002.log'));
  const brokenMessage = await openError(broken);
  assert.match(brokenMessage, /journal-000002\.log is missing although \S*journal-000001\.log \(its rotation frame\) says it holds the batches after 1/);
  await rm(join(dir, 'checkpoint.json.tmp'), { recursive: true });
  await storage.close();
});

test('a journal left by an unfinished rotation (nobody names it, no batches) is removed; one with batches is refused', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1'), put('k', 1)]);
  const expected = await dump(storage, ['d1']);
  for (const content of [encodeFileHeader({ generation: 2, baseSeq: 1 }), Buffer.alloc(0), encodeFileHeader({ generation: 2, baseSeq: 1 }).subarray(0, 9)]) {
    const copy = await crashCopy(dir);
    await writeFile(join(copy, 'journal-000002.log'), content);
    const reopened = await lowdbStorage({ dir: copy });
    assert.equal(await dump(reopened, ['d1']), expected);
    await reopened.commit([append('d1', 2)]);
    await reopened.close();
    const again = await lowdbStorage({ dir: copy });
    assert.is((await again.getDocumentHead('d1'))?.version, 2);
    await again.close();
  }
  const unborn = await tempDir();
  await writeFile(join(unborn, 'journal-000001.log'), encodeFileHeader({ generation: 1, baseSeq: 0 }));
  assert.is(await openError(unborn), '', 'a crash while a new folder was being set up leaves a folder that opens');
  const orphan = await crashCopy(dir);
  await rm(join(orphan, 'checkpoint.json'));
  assert.match(await openError(orphan), /checkpoint\.json is missing but .*journal-000001\.log holds batches/);
  await storage.close();
});

test('a journal whose header names another generation or base seq is refused', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1')]);
  const copy = await crashCopy(dir);
  await storage.close();
  const path = await journalOf(copy);
  const data = await readFile(path);
  encodeFileHeader({ generation: 9, baseSeq: 1 }).copy(data, 0);
  await writeFile(path, data);
  assert.match(await openError(copy), /says it is generation 9 after batch 1; expected generation 1 after batch 0/);
});

test('a version-1 text journal is refused with what to do; a version-1 checkpoint with an empty journal opens', async () => {
  const dir = await tempDir();
  await writeFile(join(dir, 'journal-000001.log'), '0a1b2c3d {"seq":1,"ops":[]}\n');
  assert.match(await openError(dir), /journal-000001\.log is a version-1 text journal; open and close the folder with the knowledge-workspace version that wrote it/);
  const old = await tempDir();
  const checkpoint = {
    format: 'knowledge-workspace/lowdb-checkpoint', formatVersion: 1, generation: 3, lastSeq: 7,
    // A head written before heads had a generation: it reads as generation 0.
    documents: [{ head: (({ generation: _, ...h }) => h)(head('d', 1)), snapshot: 'AAE=', updates: [] }],
    collections: [{ collection: 'c', entries: [['k', 2, { from: 'v1' }]] }],
  };
  await writeFile(join(old, 'checkpoint.json'), JSON.stringify(checkpoint));
  await writeFile(join(old, 'journal-000004.log'), '');
  const storage = await lowdbStorage({ dir: old });
  assert.equal(await storage.getRecord('c', 'k'), { key: 'k', value: { from: 'v1' }, revision: 2 });
  assert.equal(await storage.getDocumentHead('d'), head('d', 1));
  await storage.commit([put('k', 'v2', 2), append('d', 2, 4)]);
  await storage.close();
  const again = await lowdbStorage({ dir: old });
  assert.equal(await again.getRecord('c', 'k'), { key: 'k', value: 'v2', revision: 3 });
  await again.close();
});

test.run();
