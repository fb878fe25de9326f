import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CaptureQueue } from './capture-queue.ts';

/** A durable job list and a queue over it whose jobs finish when the test releases them. */
function harness(concurrency: number, queueSize: number) {
  const durable: string[] = [];
  const release = new Map<string, () => void>();
  let maxRunning = 0;
  let running = 0;
  let maxHeld = 0;
  const done: string[] = [];
  const queue = new CaptureQueue(
    (key, signal) =>
      new Promise<void>((resolve, reject) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        const finish = () => {
          running--;
          durable.splice(durable.indexOf(key), 1);
          done.push(key);
          resolve();
        };
        release.set(key, finish);
        signal.addEventListener('abort', () => {
          running--;
          reject(new Error('aborted'));
        });
      }),
    async (room, known) => durable.filter((k) => !known.has(k)).slice(0, room),
    { concurrency, queueSize },
    (e) => {
      if (!(e instanceof Error && e.message === 'aborted')) throw e;
    },
  );
  const save = (key: string) => {
    durable.push(key);
    queue.offer(key);
    maxHeld = Math.max(maxHeld, queue.size);
  };
  const tick = () => new Promise((r) => setTimeout(r, 0));
  const releaseAll = async () => {
    while (release.size) {
      maxHeld = Math.max(maxHeld, queue.size);
      for (const [k, f] of [...release]) {
        release.delete(k);
        f();
      }
      await tick();
    }
  };
  return { queue, save, releaseAll, tick, durable, done, stats: () => ({ maxRunning, maxHeld }) };
}

test('memory holds at most queueSize waiting jobs plus concurrency running ones, runs at most concurrency, and refills overflow from storage', async () => {
  const h = harness(2, 3);
  for (let i = 0; i < 20; i++) h.save(`job-${i}`);
  assert.is(h.queue.size, 3, 'jobs start in a later task, never inside the offering call');
  await h.tick();
  await h.releaseAll();
  await h.queue.idle();
  assert.is(h.stats().maxRunning, 2);
  assert.ok(h.stats().maxHeld <= 5, `held ${h.stats().maxHeld} > queueSize + concurrency`);
  assert.is(h.done.length, 20);
  assert.equal(new Set(h.done).size, 20);
  assert.equal(h.durable, []);
});

test('start() picks up jobs already in storage (a restart)', async () => {
  const h = harness(1, 4);
  h.durable.push('old-1', 'old-2');
  h.queue.start();
  await h.tick();
  await h.releaseAll();
  await h.queue.idle();
  assert.equal(h.done, ['old-1', 'old-2']);
});

test('close aborts running jobs, leaves durable jobs in place and refuses new offers', async () => {
  const h = harness(1, 4);
  h.save('a');
  h.save('b');
  await h.tick();
  await h.queue.close();
  assert.equal(h.durable, ['a', 'b']);
  assert.is(h.queue.offer('c'), false);
  await h.queue.idle();
});

test.run();
