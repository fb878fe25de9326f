/**
 * Several processes on one storage: a running job belongs to the engine whose lease it holds. A second
 * engine leaves it alone while the lease lives, takes it over once the owner stopped renewing (a crash)
 * and the lease expired, and a cancellation through any engine reaches the runner where the job runs.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { freshKey } from '../../fixtures/engine-kit.ts';
import { manualClock } from '../clock.ts';
import type { Storage } from '../ports.ts';
import { DEFAULT_LEASE_MS, LEASES_COLLECTION, type JobLease } from './lease.ts';
import { HAPPY_STEPS, ScriptedRunner, actorOf, engineMaker, settle, specBody, until, untilAborted } from './jobs-kit.ts';

const actor = actorOf();

/**
 * One process's view of a shared storage: `crash()` makes every later call of that process fail and
 * silences its change listeners, as if the process died (its close never releases anything).
 */
function processView(shared: Storage): { storage: Storage; crash(): void } {
  let dead = false;
  const storage = new Proxy(shared, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (prop === 'close') return () => Promise.resolve(); // the shared storage outlives each process
      if (prop === 'subscribe') {
        return (topic: string, listener: () => void) => target.subscribe(topic as never, () => dead || listener());
      }
      return (...args: unknown[]) => (dead ? Promise.reject(new Error('this process is gone')) : (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
  return { storage, crash: () => void (dead = true) };
}

const jobsEngine = engineMaker(() => memoryStorage());

/** Engine A (seed 1) runs one job held running until aborted; every engine shares `clock` and the storage. */
async function twoProcesses() {
  const shared = memoryStorage();
  const clock = manualClock();
  const a = processView(shared);
  const runnerA = new ScriptedRunner([(ctx) => ctx.setPhase('retrieving', 'Searching'), untilAborted], true);
  const engineA = await jobsEngine({ runner: runnerA, storage: a.storage, clock, seed: 1 });
  const { job } = await engineA.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
  await until(async () => (await engineA.jobs.read(actor, job.jobId)).job.state === 'running', 'the job to run in A');
  const lease = async () => (await shared.getRecord<JobLease>(LEASES_COLLECTION, job.jobId))?.value ?? null;
  return { shared, clock, a, runnerA, engineA, jobId: job.jobId, lease };
}

test('starting a second engine (with or without a runner) leaves the first engine’s running job alone', async () => {
  const { shared, clock, runnerA, engineA, jobId, lease } = await twoProcesses();
  const runnerB = new ScriptedRunner(HAPPY_STEPS, true);
  const engineB = await jobsEngine({ runner: runnerB, storage: processView(shared).storage, clock, seed: 2 });
  const engineC = await jobsEngine({ storage: processView(shared).storage, clock, seed: 3 });
  await engineB.jobs.recovered;
  await engineC.jobs.recovered;
  await engineB.jobs.sweep();
  await engineC.jobs.sweep();
  assert.equal(runnerB.started, [], 'B did not run the job');
  assert.is((await engineA.jobs.read(actor, jobId)).job.state, 'running', 'C (no runner) did not fail it');
  assert.not.ok(runnerA.contexts.get(jobId)!.signal.aborted);
  // A renews while it runs: long after the first lease would have ended, the job is still A's.
  clock.advance(DEFAULT_LEASE_MS - 1000);
  await engineA.jobs.sweep();
  clock.advance(DEFAULT_LEASE_MS - 1000);
  await engineB.jobs.sweep();
  await engineC.jobs.sweep();
  assert.equal(runnerB.started, []);
  assert.is((await engineA.jobs.read(actor, jobId)).job.state, 'running');
  const held = await lease();
  assert.ok(held && held.expiresAt > clock.now(), 'the renewed lease is alive');
  await engineB.close();
  await engineC.close();
  await engineA.close();
});

test('after the owner crashed, a second engine takes the job over only once the lease expired, and finishes it', async () => {
  const { shared, clock, a, runnerA, engineA, jobId, lease } = await twoProcesses();
  a.crash();
  const runnerB = new ScriptedRunner([async (ctx) => void (await ctx.job()), ...HAPPY_STEPS.slice(2)], true);
  const engineB = await jobsEngine({ runner: runnerB, storage: processView(shared).storage, clock, seed: 2 });
  await engineB.jobs.recovered;
  clock.advance(DEFAULT_LEASE_MS - 1);
  await engineB.jobs.sweep();
  assert.equal(runnerB.started, [], 'the lease still lives: not taken');
  clock.advance(2);
  await engineB.jobs.sweep();
  assert.equal(runnerB.started, [jobId], 'taken over after expiry');
  await engineB.jobs.idle();
  const { job } = await engineB.jobs.read(actor, jobId);
  assert.is(job.state, 'succeeded');
  assert.is(await lease(), null, 'the finished job’s lease is gone');
  assert.is(runnerA.started.length, 1);
  await engineB.close();
  await engineA.close();
});

test('without a runner, a crashed owner’s running job is failed only once its lease expired', async () => {
  const { shared, clock, a, engineA, jobId } = await twoProcesses();
  a.crash();
  const engineC = await jobsEngine({ storage: processView(shared).storage, clock, seed: 3 });
  await engineC.jobs.recovered;
  await engineC.jobs.sweep();
  assert.is((await engineC.jobs.read(actor, jobId)).job.state, 'running');
  clock.advance(DEFAULT_LEASE_MS + 1);
  await engineC.jobs.sweep();
  const { job } = await engineC.jobs.read(actor, jobId);
  assert.is(job.state, 'failed');
  assert.match(job.error!.message, /no research runner is installed/);
  await engineC.close();
  await engineA.close();
});

test('a cancellation through engine B stops the runner in engine A, which drops its lease', async () => {
  const { shared, clock, runnerA, engineA, jobId, lease } = await twoProcesses();
  const engineB = await jobsEngine({ storage: processView(shared).storage, clock, seed: 2 });
  await engineB.jobs.recovered;
  const { revision } = await engineB.jobs.read(actor, jobId);
  const out = await engineB.jobs.cancel(actor, jobId, { idempotencyKey: freshKey(), ifRevision: revision, body: { v: 1 } });
  assert.is(out.job.state, 'cancelled');
  const signal = runnerA.contexts.get(jobId)!.signal;
  await until(() => signal.aborted, 'the run in A to be aborted');
  assert.is(signal.reason, 'cancelled');
  await engineA.jobs.idle();
  await settle();
  assert.is(await lease(), null);
  assert.is((await engineA.jobs.read(actor, jobId)).job.state, 'cancelled');
  await engineB.close();
  await engineA.close();
});

test('an owner that missed its renewals loses the job to the engine that took it over, and stops its run', async () => {
  const { shared, clock, runnerA, engineA, jobId, lease } = await twoProcesses();
  const runnerB = new ScriptedRunner([(ctx) => ctx.progress(60, 'B works'), untilAborted], true);
  const engineB = await jobsEngine({ runner: runnerB, storage: processView(shared).storage, clock, seed: 2 });
  await engineB.jobs.recovered;
  clock.advance(DEFAULT_LEASE_MS + 1); // A stalled: no renewal in time
  await engineB.jobs.sweep();
  assert.equal(runnerB.started, [jobId]);
  await engineA.jobs.sweep(); // A's renewal finds the lease moved on
  const signal = runnerA.contexts.get(jobId)!.signal;
  assert.ok(signal.aborted);
  assert.is(signal.reason, 'lease-lost');
  await engineA.jobs.idle();
  await until(async () => (await engineB.jobs.read(actor, jobId)).job.progress.percent === 60, 'B to work');
  assert.is((await engineB.jobs.read(actor, jobId)).job.state, 'running', 'A did not fail the job it lost');
  assert.ok((await lease())!.expiresAt > clock.now(), 'B holds the lease');
  await engineA.close();
  await engineB.close();
});

test('an orderly close releases the lease: another engine takes the job over at its next sweep', async () => {
  const { shared, clock, engineA, jobId, lease } = await twoProcesses();
  const runnerB = new ScriptedRunner([async () => undefined, ...HAPPY_STEPS.slice(2)], true);
  const engineB = await jobsEngine({ runner: runnerB, storage: processView(shared).storage, clock, seed: 2 });
  await engineB.jobs.recovered;
  await engineA.close();
  assert.is((await lease())?.expiresAt, 0);
  await engineB.jobs.sweep();
  assert.equal(runnerB.started, [jobId]);
  await engineB.jobs.idle();
  assert.is((await engineB.jobs.read(actor, jobId)).job.state, 'succeeded');
  await engineB.close();
});

test.run();
