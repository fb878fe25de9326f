/**
 * KeyedLock: one task at a time per key, in arrival order, released on failure; idle() waits for all.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KeyedLock } from './keyed-lock.ts';

const tick = () => new Promise<void>((r) => setTimeout(r, 1));

test('tasks of one key run one after another in arrival order; other keys run freely', async () => {
  const lock = new KeyedLock();
  const log: string[] = [];
  const task = (name: string) => async () => {
    log.push(`start ${name}`);
    await tick();
    log.push(`end ${name}`);
    return name;
  };
  const results = await Promise.all([lock.run('a', task('a1')), lock.run('a', task('a2')), lock.run('b', task('b1')), lock.run('a', task('a3'))]);
  assert.equal(results, ['a1', 'a2', 'b1', 'a3']);
  const a = log.filter((l) => l.endsWith('a1') || l.endsWith('a2') || l.endsWith('a3'));
  assert.equal(a, ['start a1', 'end a1', 'start a2', 'end a2', 'start a3', 'end a3']);
  assert.ok(log.indexOf('start b1') < log.indexOf('end a1'), 'b does not wait for a');
});

test('an uncontended task starts synchronously; a failing task releases the key', async () => {
  const lock = new KeyedLock();
  let started = false;
  const p = lock.run('k', async () => {
    started = true;
  });
  assert.ok(started);
  await p;
  const failed = lock.run('k', async () => {
    throw new Error('boom');
  });
  const next = lock.run('k', async () => 'next');
  let error: unknown = null;
  await failed.catch((e: unknown) => (error = e));
  assert.ok(error instanceof Error && error.message === 'boom', 'the failure reaches the caller');
  assert.is(await next, 'next');
});

test('idle() settles once every queued task has settled', async () => {
  const lock = new KeyedLock();
  await lock.idle();
  let done = 0;
  for (let i = 0; i < 3; i++) void lock.run(i % 2 ? 'x' : 'y', async () => {
    await tick();
    done++;
  });
  await lock.idle();
  assert.is(done, 3);
});

test.run();
