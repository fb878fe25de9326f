/**
 * The jobs service's trusted account view (what the browser app's console shows): every job of an
 * account whichever of its credentials started it, one job of the account by id, and following a
 * job's changes.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { freshKey } from '../../fixtures/engine-kit.ts';
import { ScriptedRunner, actorOf, engineMaker, specBody, until } from './jobs-kit.ts';

const jobsEngine = engineMaker(() => memoryStorage());

test('listOfAccount: the jobs of the named credentials and the in-process ones, newest first, none of another account; readOfAccount: one of them or null', async () => {
  const runner = new ScriptedRunner([]);
  const engine = await jobsEngine({ runner });
  try {
    const start = async (actor: ReturnType<typeof actorOf>) => {
      const { job } = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
      engine.clock.advance(1000);
      return job.jobId;
    };
    const first = await start(actorOf(1, 'alice'));
    const second = await start(actorOf(2, 'alice'));
    const inProcess = await start({ accountId: 'alice', credentialRef: null, documentRef: null });
    const bobs = await start(actorOf(3, 'bob'));
    const unlisted = await start(actorOf(4, 'alice'));

    const refs = [actorOf(1).credentialRef!, actorOf(2).credentialRef!];
    assert.equal((await engine.jobs.listOfAccount('alice', refs)).map((j) => j.jobId), [inProcess, second, first]);
    assert.equal((await engine.jobs.listOfAccount('alice', refs, 2)).map((j) => j.jobId), [inProcess, second], 'at most limit');
    assert.equal((await engine.jobs.listOfAccount('bob', [actorOf(3, 'bob').credentialRef!])).map((j) => j.jobId), [bobs]);

    assert.is((await engine.jobs.readOfAccount('alice', unlisted))?.jobId, unlisted, 'any credential of the account');
    assert.is(await engine.jobs.readOfAccount('alice', bobs), null, "another account's job");
    assert.is(await engine.jobs.readOfAccount('alice', 'kjob_nonexistent'), null);
  } finally {
    await engine.close();
  }
});

test('watch: called after a committed change of the job, until stopped', async () => {
  const runner = new ScriptedRunner([(ctx) => ctx.setPhase('planning', 'Planning'), (ctx) => ctx.progress(50, 'Half')]);
  const engine = await jobsEngine({ runner });
  try {
    const { job } = await engine.jobs.start(actorOf(), { idempotencyKey: freshKey(), body: specBody() });
    let changes = 0;
    const stop = engine.jobs.watch(job.jobId, () => changes++);
    runner.release();
    await until(async () => (await engine.jobs.readOfAccount('alice', job.jobId))?.phase === 'planning' && changes > 0, 'the first step');
    stop();
    const seen = changes;
    runner.release();
    await until(async () => (await engine.jobs.readOfAccount('alice', job.jobId))?.progress.percent === 50, 'the second step');
    assert.is(changes, seen, 'no call after stop');
  } finally {
    await engine.close();
  }
});

test.run();
