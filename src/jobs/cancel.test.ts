import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { errorOf, freshKey } from '../../fixtures/engine-kit.ts';
import { isServiceError } from '../errors.ts';
import { eventStreamOf } from './store.ts';
import { ScriptedRunner, actorOf, engineMaker, type AdapterList, specBody, until, untilAborted } from './jobs-kit.ts';

const dirs: string[] = [];
const ADAPTERS: AdapterList = [
  ['memory', () => memoryStorage()],
  ['lowdb', () => lowdbStorage({ dir: dirs[dirs.push(mkdtempSync(join(tmpdir(), 'kw-jobs-'))) - 1]! })],
];

for (const [adapter, makeStorage] of ADAPTERS) {
  const test = suite(`jobs cancel (${adapter})`);
  const jobsEngine = engineMaker(makeStorage);
  test.after(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function runningJob() {
    const runner = new ScriptedRunner([(ctx) => ctx.setPhase('retrieving', 'Searching'), untilAborted, (ctx) => ctx.progress(50, 'after abort')]);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const { job } = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
    runner.release(1);
    await until(async () => (await engine.jobs.read(actor, job.jobId)).job.state === 'running', 'the job to run');
    return { engine, runner, actor, jobId: job.jobId };
  }

  test('cancel checks key, exact body {"v":1} and revision before touching the job', async () => {
    const { engine, actor, jobId } = await runningJob();
    const { revision } = await engine.jobs.read(actor, jobId);
    assert.is((await errorOf(engine.jobs.cancel(actor, jobId, { idempotencyKey: undefined, ifRevision: revision, body: { v: 1 } }))).code, 'IDEMPOTENCY_REQUIRED');
    for (const body of [{}, { v: 2 }, { v: 1, reason: 'x' }, null, [], 'v1', { v: '1' }]) {
      const e = await errorOf(engine.jobs.cancel(actor, jobId, { idempotencyKey: freshKey(), ifRevision: revision, body }));
      assert.equal([e.code, e.fields], ['INVALID_REQUEST', ['$']], JSON.stringify(body));
    }
    assert.is((await errorOf(engine.jobs.cancel(actor, jobId, { idempotencyKey: freshKey(), ifRevision: undefined, body: { v: 1 } }))).code, 'PRECONDITION_REQUIRED');
    assert.is((await errorOf(engine.jobs.cancel(actor, jobId, { idempotencyKey: freshKey(), ifRevision: 'jrev_stale', body: { v: 1 } }))).code, 'PRECONDITION_FAILED');
    const after = await engine.jobs.read(actor, jobId);
    assert.is(after.job.state, 'running');
    assert.is(after.revision, revision, 'refused cancellations changed nothing');
    await engine.close();
  });

  test('a stale revision (the job moved on) is PRECONDITION_FAILED', async () => {
    const { engine, runner, actor, jobId } = await runningJob();
    const { revision } = await engine.jobs.read(actor, jobId);
    await runner.contexts.get(jobId)!.progress(30, 'more');
    const e = await errorOf(engine.jobs.cancel(actor, jobId, { idempotencyKey: freshKey(), ifRevision: revision, body: { v: 1 } }));
    assert.is(e.code, 'PRECONDITION_FAILED');
    await engine.close();
  });

  test('cancelling appends job.cancelled in the same change, aborts the runner, and its later calls are refused', async () => {
    const { engine, runner, actor, jobId } = await runningJob();
    const before = await engine.jobs.read(actor, jobId);
    const ctx = runner.contexts.get(jobId)!;
    const key = freshKey();
    const out = await engine.jobs.cancel(actor, jobId, { idempotencyKey: key, ifRevision: before.revision, body: { v: 1 } });
    assert.is(out.job.state, 'cancelled');
    assert.is(out.job.phase, 'cancelled');
    assert.is(out.job.error, null);
    assert.is(out.receipt.idempotency, 'created');
    assert.is.not(out.revision, before.revision);
    assert.ok(ctx.signal.aborted);
    assert.is(ctx.signal.reason, 'cancelled');
    const events = await engine.deps.storage.readStream<{ kind: string; state: string }>(eventStreamOf(jobId), 0, 100);
    assert.equal(events.map((e) => e.value.kind), ['job.created', 'job.phase', 'job.cancelled']);
    assert.equal(await engine.jobs.read(actor, jobId), { job: out.job, revision: out.revision });
    try {
      await ctx.progress(60, 'too late');
      assert.unreachable('a cancelled job refuses changes');
    } catch (e) {
      assert.ok(isServiceError(e) && e.code === 'CONFLICT');
    }
    await engine.jobs.idle();
    assert.is((await engine.jobs.read(actor, jobId)).job.state, 'cancelled', 'the aborted run did not fail the job');
    // An exact replay returns the terminal receipt; a new key on a terminal job is CONFLICT.
    const replay = await engine.jobs.cancel(actor, jobId, { idempotencyKey: key, ifRevision: before.revision, body: { v: 1 } });
    assert.equal(replay, { ...out, receipt: { ...out.receipt, idempotency: 'replayed' } });
    assert.is((await errorOf(engine.jobs.cancel(actor, jobId, { idempotencyKey: freshKey(), ifRevision: out.revision, body: { v: 1 } }))).code, 'CONFLICT');
    assert.is((await errorOf(engine.jobs.cancel(actor, jobId, { idempotencyKey: key, ifRevision: out.revision, body: { v: 1 } }))).code, 'IDEMPOTENCY_CONFLICT');
    await engine.close();
  });

  test('a queued job can be cancelled before its runner starts it, and the run then does nothing', async () => {
    const runner = new ScriptedRunner([(ctx) => ctx.setPhase('planning')]);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const started = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
    const out = await engine.jobs.cancel(actor, started.job.jobId, { idempotencyKey: freshKey(), ifRevision: started.revision, body: { v: 1 } });
    assert.is(out.job.state, 'cancelled');
    runner.release(5);
    await engine.jobs.idle();
    assert.equal(runner.errors, []);
    assert.is((await engine.jobs.read(actor, started.job.jobId)).job.state, 'cancelled');
    await engine.close();
  });

  test('a cancellation from another service over the same storage aborts this process run too', async () => {
    const { engine, runner, actor, jobId } = await runningJob();
    const { createJobsService } = await import('./service.ts');
    const other = createJobsService(engine.deps, { documents: engine.documents, recover: false });
    const { revision } = await other.read(actor, jobId);
    await other.cancel(actor, jobId, { idempotencyKey: freshKey(), ifRevision: revision, body: { v: 1 } });
    await until(() => runner.contexts.get(jobId)!.signal.aborted, 'the run to be aborted');
    await other.close();
    await engine.close();
  });

  test.run();
}
