/**
 * The folder lock: one open at a time, stale locks taken over, and a pid that was reused by
 * another process (other start time or boot) does not keep a lock alive.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { lowdbStorage } from './index.ts';
import { bootId, currentProcess, formatIdentity, parseIdentity, processStartTime } from './process-identity.ts';
import { openError, put, removeTempDirs, tempDir } from './lowdb-kit.ts';

const test = suite('lowdb folder lock');
test.after(removeTempDirs);

const hasProc = processStartTime(process.pid) !== null;

test('a second open of a locked folder fails while the first is open', async () => {
  const dir = await tempDir();
  const first = await lowdbStorage({ dir });
  assert.match(await openError(dir), /is locked by this process/);
  assert.is(await first.getRecord('c', 'k'), null, 'the first storage is unaffected');
  await first.commit([put('k', 1)]);
  await first.close();
  const second = await lowdbStorage({ dir });
  assert.is((await second.getRecord('c', 'k'))?.value, 1);
  await second.close();
});

test('the lock records pid, start time and boot id, and close removes it', async () => {
  const dir = await tempDir();
  const storage = await lowdbStorage({ dir });
  const recorded = parseIdentity(await readFile(join(dir, 'LOCK'), 'utf8'));
  assert.equal(recorded, currentProcess());
  if (hasProc) assert.ok(recorded?.start !== null && recorded?.boot !== null, 'start time and boot id where /proc has them');
  await storage.close();
  assert.not.ok((await readdir(dir)).includes('LOCK'));
});

test('a stale lock whose pid is not alive is taken over (also in the bare-pid format of earlier versions)', async () => {
  const dead = spawnSync(process.execPath, ['-e', '']).pid;
  assert.ok(dead !== undefined && dead > 0);
  for (const content of [`${dead}\n`, formatIdentity({ pid: dead, start: '1', boot: bootId() })]) {
    const dir = await tempDir();
    await writeFile(join(dir, 'LOCK'), content);
    const storage = await lowdbStorage({ dir });
    assert.is(parseIdentity(await readFile(join(dir, 'LOCK'), 'utf8'))?.pid, process.pid);
    await storage.close();
    assert.not.ok((await readdir(dir)).includes('LOCK'), 'close releases the lock');
  }
});

test('a lock naming this pid with another start time or another boot is stale (the pid was reused)', async () => {
  if (!hasProc) return console.log('  (skipped: no /proc start times on this platform)');
  const me = currentProcess();
  const variants = [
    { ...me, start: String(Number(me.start) + 1) },
    { ...me, boot: '00000000-0000-0000-0000-000000000000' },
  ];
  for (const holder of variants) {
    const dir = await tempDir();
    await writeFile(join(dir, 'LOCK'), formatIdentity(holder));
    const storage = await lowdbStorage({ dir });
    assert.equal(parseIdentity(await readFile(join(dir, 'LOCK'), 'utf8')), me, 'taken over');
    await storage.close();
  }
  const dir = await tempDir();
  await writeFile(join(dir, 'LOCK'), formatIdentity(me));
  assert.match(await openError(dir), /locked by this process/, 'the same start time and boot is this process');
});

test('a lock naming a live unrelated process counts only while that pid still has the recorded start time', async () => {
  if (!hasProc) return console.log('  (skipped: no /proc start times on this platform)');
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  try {
    const pid = child.pid as number;
    let start: string | null = null;
    for (let i = 0; i < 100 && start === null; i++) {
      start = processStartTime(pid);
      if (start === null) await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(start !== null, 'the child is running');
    const live = await tempDir();
    await writeFile(join(live, 'LOCK'), formatIdentity({ pid, start, boot: bootId() }));
    assert.match(await openError(live), new RegExp(`locked by process ${pid}`));
    const reused = await tempDir();
    await writeFile(join(reused, 'LOCK'), formatIdentity({ pid, start: String(Number(start) - 1), boot: bootId() }));
    assert.is(await openError(reused), '', 'a holder that started at another time is another process: stale');
  } finally {
    child.kill();
  }
});

test('parseIdentity reads both formats and rejects anything else', () => {
  assert.equal(parseIdentity('123\n'), { pid: 123, start: null, boot: null });
  assert.equal(parseIdentity('{"pid":5,"start":"77","boot":"b"}'), { pid: 5, start: '77', boot: 'b' });
  for (const bad of ['', 'abc', '0', '{"pid":-1}', '{"start":"1"}', '{"pid":1.5}']) assert.is(parseIdentity(bad), null, bad);
});

test.run();
