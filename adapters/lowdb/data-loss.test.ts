/**
 * Lost acknowledged writes are told as such: a journal cut short or damaged before its last write
 * is refused (what is lost, how to open anyway), `acceptDataLoss` opens with what is intact and
 * reports the loss, and a torn last record (what a crash leaves) still opens as the normal case.
 */
import { appendFile, readFile, truncate, writeFile } from 'node:fs/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readAckRecord } from './ack-record.ts';
import { append, crashCopy, create, frameStarts, journalOf, openError, removeTempDirs, tempDir } from './lowdb-kit.ts';
import { JournalDataLossError, lowdbStorage, type RecoveryReport } from './index.ts';

test.after(removeTempDirs);


/** A folder with `n` acknowledged commits (document d1 at version n), its storage still open. */
async function acknowledged(n: number) {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  await storage.commit([create('d1')]);
  for (let v = 2; v <= n; v++) await storage.commit([append('d1', v, 24)]);
  // The record is written off the commit path; wait until it has caught up (bounded).
  for (let i = 0; i < 1000; i++) {
    const record = await readAckRecord(dir);
    if (typeof record === 'object' && record?.seq === n) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { dir, storage };
}

test('a journal cut to half after 60 acknowledged mutations is refused, naming what is lost and how to open anyway', async () => {
  const { dir, storage } = await acknowledged(60);
  const copy = await crashCopy(dir);
  await storage.close();
  const path = await journalOf(copy);
  const size = (await readFile(path)).length;
  await truncate(path, size >> 1);

  let error: unknown = null;
  await lowdbStorage({ dir: copy }).then((s) => s.close(), (e: unknown) => (error = e));
  assert.instance(error, JournalDataLossError);
  const message = (error as Error).message;
  assert.match(message, /would lose acknowledged writes/);
  assert.match(message, /batches \d+ to 60 were acknowledged/);
  assert.match(message, /acceptDataLoss: true/);
  assert.match(message, /--accept-data-loss/);
  assert.not.match(message, /unacknowledged/);
  assert.match(await openError(copy), /would lose acknowledged writes/, 'refused again: nothing was changed');
  assert.is((await readFile(path)).length, size >> 1, 'the journal was left as it was');

  const reports: RecoveryReport[] = [];
  const opened = await lowdbStorage({ dir: copy, acceptDataLoss: true, onRecovery: (r) => reports.push(r) });
  const kept = (await opened.getDocumentHead('d1'))!.version;
  assert.ok(kept > 1 && kept < 60, `kept the intact first ${kept} batches`);
  assert.is(reports.length, 1);
  assert.is(reports[0]!.dataLoss, true);
  assert.is(reports[0]!.acknowledgedSeq, 60);
  assert.is(reports[0]!.recoveredSeq, kept);
  await opened.commit([append('d1', kept + 1)]);
  await opened.close();
  assert.is(await openError(copy), '', 'once accepted, the folder opens normally');
});

test('a flipped byte in the middle of the journal is refused as data loss; acceptDataLoss keeps the batches before it', async () => {
  const { dir, storage } = await acknowledged(60);
  const copy = await crashCopy(dir);
  await storage.close();
  const path = await journalOf(copy);
  const data = await readFile(path);
  const starts = frameStarts(data);
  assert.is(starts.length, 60);
  data[starts[30]! + 20] ^= 0x04; // inside batch 31's frame
  await writeFile(path, data);
  const message = await openError(copy);
  assert.match(message, new RegExp(`is damaged at byte ${starts[30]}`));
  assert.match(message, /batches 31 to 60 were acknowledged/);
  assert.match(message, /acceptDataLoss/);

  const reports: RecoveryReport[] = [];
  const opened = await lowdbStorage({ dir: copy, acceptDataLoss: true, onRecovery: (r) => reports.push(r) });
  assert.is((await opened.getDocumentHead('d1'))!.version, 30);
  assert.equal(reports.map((r) => [r.offset, r.recoveredSeq, r.acknowledgedSeq, r.dataLoss]), [[starts[30], 30, 60, true]]);
  await opened.close();
});

test('a torn last record (a write a crash interrupted) still opens, told as the normal case', async () => {
  const { dir, storage } = await acknowledged(60);
  const copy = await crashCopy(dir);
  await storage.close();
  const path = await journalOf(copy);
  const data = await readFile(path);
  // The crash came while batch 61 was being written: half of a frame reached the file.
  const lastStart = frameStarts(data).at(-1)!;
  await appendFile(path, data.subarray(lastStart, lastStart + ((data.length - lastStart) >> 1)));
  const reports: RecoveryReport[] = [];
  const opened = await lowdbStorage({ dir: copy, onRecovery: (r) => reports.push(r) });
  assert.is((await opened.getDocumentHead('d1'))!.version, 60, 'every acknowledged batch is there');
  assert.is(reports.length, 1);
  assert.equal([reports[0]!.dataLoss, reports[0]!.recoveredSeq, reports[0]!.acknowledgedSeq, reports[0]!.batches], [false, 60, 60, 1]);
  await opened.close();
});

test('a folder whose journals are gone while the record vouches for batches is refused as data loss', async () => {
  const { dir, storage } = await acknowledged(5);
  const copy = await crashCopy(dir);
  await storage.close();
  await truncate(await journalOf(copy), 0);
  assert.match(await openError(copy), /emptied or damaged|would lose acknowledged writes/);
});

test.run();
