/**
 * Restart on the embedded default (lowdb): a job a stopped process left running is handed back to
 * the runner, or failed with a clear error when none is installed; waiting jobs stay cancellable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import { memoryStorage } from '../../adapters/memory/index.ts';
import * as assert from 'uvu/assert';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { errorOf, freshKey } from '../../fixtures/engine-kit.ts';
import { HAPPY_STEPS, ScriptedRunner, actorOf, engineMaker, specBody, until, untilAborted, type Step } from './jobs-kit.ts';

const jobsEngine = engineMaker(memoryStorage);

const actor = actorOf();

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kw-jobs-'));
  try {
    await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Start one job that reaches `state` and is held there; then close the engine. */
async function leaveJob(dir: string, steps: Step[], state: string): Promise<{ jobId: string; key: string; revision: string }> {
  const runner = new ScriptedRunner([...steps, untilAborted], true);
  const engine = await jobsEngine({ runner, storage: await lowdbStorage({ dir }) });
  const key = freshKey();
  const { job } = await engine.jobs.start(actor, { idempotencyKey: key, body: specBody() });
  await until(async () => (await engine.jobs.read(actor, job.jobId)).job.state === state, state);
  const { revision } = await engine.jobs.read(actor, job.jobId);
  await engine.close();
  assert.ok(runner.contexts.get(job.jobId)!.signal.aborted, 'shutdown aborted the run');
  assert.is(runner.contexts.get(job.jobId)!.signal.reason, 'shutdown');
  return { jobId: job.jobId, key, revision };
}

test('a running job survives close and reopen: the next runner gets it back and finishes it', () =>
  withDir(async (dir) => {
    const { jobId, key } = await leaveJob(dir, [(ctx) => ctx.setPhase('retrieving'), (ctx) => ctx.progress(30, 'halfway')], 'running');
    let resumedFrom: { state: string; percent: number } | null = null;
    const runner = new ScriptedRunner(
      [
        async (ctx) => {
          const job = await ctx.job();
          resumedFrom = { state: job.state, percent: job.progress.percent };
        },
        ...HAPPY_STEPS.slice(2),
      ],
      true,
    );
    const engine = await jobsEngine({ runner, storage: await lowdbStorage({ dir }), seed: 8 });
    await engine.jobs.recovered;
    await engine.jobs.idle();
    assert.equal(runner.started, [jobId]);
    assert.equal(resumedFrom, { state: 'running', percent: 30 });
    const { job } = await engine.jobs.read(actor, jobId);
    assert.is(job.state, 'succeeded');
    const kinds = (await engine.jobs.events(actor, jobId)).items.map((e) => e.kind);
    assert.equal(kinds, ['job.created', 'job.phase', 'job.progress', 'job.phase', 'job.artifact', 'job.succeeded']);
    // The idempotency record of the start survived too: the same request replays the original 202.
    const replay = await engine.jobs.start(actor, { idempotencyKey: key, body: specBody() });
    assert.is(replay.receipt.idempotency, 'replayed');
    assert.is(replay.job.jobId, jobId);
    await engine.close();
  }));

test('without a runner, a job left running is failed with a clear error on start, never left running forever', () =>
  withDir(async (dir) => {
    const { jobId, key } = await leaveJob(dir, [(ctx) => ctx.setPhase('retrieving')], 'running');
    const engine = await jobsEngine({ storage: await lowdbStorage({ dir }), seed: 9 });
    await engine.jobs.recovered;
    const { job } = await engine.jobs.read(actor, jobId);
    assert.is(job.state, 'failed');
    assert.is(job.error?.code, 'JOB_FAILED');
    assert.match(job.error!.message, /restarted while this job was running, and no research runner is installed/);
    const events = (await engine.jobs.events(actor, jobId)).items;
    assert.is(events[events.length - 1]!.kind, 'job.failed');
    // A retired server still replays an exactly repeated, earlier accepted start.
    assert.is((await engine.jobs.start(actor, { idempotencyKey: key, body: specBody() })).receipt.idempotency, 'replayed');
    assert.is((await errorOf(engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() }))).code, 'FEATURE_RETIRED');
    await engine.close();
  }));

test('without a runner, a waiting job stays waiting and can still be cancelled', () =>
  withDir(async (dir) => {
    const { jobId, revision } = await leaveJob(
      dir,
      [(ctx) => ctx.setPhase('requesting-review'), (ctx) => ctx.waiting({ summary: 'Needs a person', requiredAction: 'review-in-browser', missingEvidence: ['A primary source'] })],
      'waiting',
    );
    const engine = await jobsEngine({ storage: await lowdbStorage({ dir }), seed: 10 });
    await engine.jobs.recovered;
    const { job } = await engine.jobs.read(actor, jobId);
    assert.is(job.state, 'waiting');
    assert.is(job.requiredAction, 'review-in-browser');
    assert.equal(job.missingEvidence, ['A primary source']);
    const out = await engine.jobs.cancel(actor, jobId, { idempotencyKey: freshKey(), ifRevision: revision, body: { v: 1 } });
    assert.is(out.job.state, 'cancelled');
    await engine.close();
  }));

test.run();
