import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { errorOf, freshKey } from '../../fixtures/engine-kit.ts';
import { ResearchJobEventSchema, type ResearchJobEvent } from './schemas.ts';
import { HAPPY_STEPS, ScriptedRunner, actorOf, engineMaker, type AdapterList, specBody, untilAborted } from './jobs-kit.ts';

const dirs: string[] = [];
const ADAPTERS: AdapterList = [
  ['memory', () => memoryStorage()],
  ['lowdb', () => lowdbStorage({ dir: dirs[dirs.push(mkdtempSync(join(tmpdir(), 'kw-jobs-'))) - 1]! })],
];

for (const [adapter, makeStorage] of ADAPTERS) {
  const test = suite(`jobs events (${adapter})`);
  const jobsEngine = engineMaker(makeStorage);
  test.after(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  test('a job followed live while the runner drives it: every event in order, ending after the terminal one', async () => {
    const runner = new ScriptedRunner(HAPPY_STEPS);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const { job } = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
    const seen: ResearchJobEvent[] = [];
    const following = (async () => {
      for await (const event of await engine.jobs.follow(actor, job.jobId)) {
        seen.push(event);
        runner.release(1); // the runner moves only after the follower saw the previous change
      }
    })();
    await following;
    assert.equal(
      seen.map((e) => e.kind),
      ['job.created', 'job.phase', 'job.progress', 'job.phase', 'job.artifact', 'job.succeeded'],
    );
    assert.equal(seen.map((e) => e.eventId), ['1', '2', '3', '4', '5', '6']);
    for (const e of seen) assert.ok(v.is(ResearchJobEventSchema, e), JSON.stringify(e));
    assert.equal(seen.map((e) => `${e.state}/${e.phase}/${e.progress.percent}`), [
      'queued/queued/0',
      'running/planning/0',
      'running/planning/40',
      'running/synthesizing/40',
      'running/synthesizing/40',
      'succeeded/complete/100',
    ]);
    const page = await engine.jobs.events(actor, job.jobId);
    assert.equal(page.items, seen, 'the page and the live stream agree');
    assert.is(page.nextCursor, null, 'terminal and complete: nothing will follow');
    await engine.close();
  });

  test('every change has its event and a new revision', async () => {
    const runner = new ScriptedRunner(HAPPY_STEPS);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const { job, revision } = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
    const revisions = [revision];
    for (let i = 0; i < HAPPY_STEPS.length; i++) {
      const before = (await engine.jobs.events(actor, job.jobId)).items.length;
      runner.release(1);
      for await (const e of await engine.jobs.follow(actor, job.jobId, { after: String(before) })) {
        assert.is(e.eventId, String(before + 1));
        break;
      }
      revisions.push((await engine.jobs.read(actor, job.jobId)).revision);
    }
    assert.is(new Set(revisions).size, revisions.length, 'each change gave a new revision');
    assert.is((await engine.jobs.events(actor, job.jobId)).items.length, revisions.length);
    await engine.close();
  });

  test('event pages: after is a decimal eventId of this job, limit 1-256, nextCursor continues', async () => {
    const runner = new ScriptedRunner([(ctx) => ctx.setPhase('planning'), (ctx) => ctx.progress(10, 'a'), (ctx) => ctx.progress(20, 'b'), untilAborted]);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const { job } = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
    runner.release(3);
    for await (const e of await engine.jobs.follow(actor, job.jobId)) if (e.eventId === '4') break;
    const first = await engine.jobs.events(actor, job.jobId, { limit: 2 });
    assert.equal(first.items.map((e) => e.eventId), ['1', '2']);
    assert.is(first.nextCursor, '2');
    const rest = await engine.jobs.events(actor, job.jobId, { after: first.nextCursor! });
    assert.equal(rest.items.map((e) => e.eventId), ['3', '4']);
    assert.is(rest.nextCursor, '4');
    const none = await engine.jobs.events(actor, job.jobId, { after: '4' });
    assert.equal(none, { items: [], nextCursor: '4' }, 'a running job: nothing yet, keep the cursor');
    for (const after of ['5', '-1', '01', 'abc', '1.0', '']) {
      const e = await errorOf(engine.jobs.events(actor, job.jobId, { after }));
      assert.equal([e.code, e.fields], ['INVALID_REQUEST', ['after']], after);
      assert.is((await errorOf(engine.jobs.follow(actor, job.jobId, { after }))).code, 'INVALID_REQUEST');
    }
    for (const limit of [0, 257, 2.5]) assert.is((await errorOf(engine.jobs.events(actor, job.jobId, { limit }))).code, 'INVALID_REQUEST');
    await engine.close();
  });

  test('following stops when its signal aborts, and after a terminal job\'s last event at once', async () => {
    const runner = new ScriptedRunner([(ctx) => ctx.setPhase('planning'), untilAborted]);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const started = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
    const controller = new AbortController();
    const kinds: string[] = [];
    const following = (async () => {
      for await (const e of await engine.jobs.follow(actor, started.job.jobId, { signal: controller.signal })) {
        kinds.push(e.kind);
        if (kinds.length === 1) runner.release(1);
        if (kinds.length === 2) controller.abort();
      }
    })();
    await following;
    assert.equal(kinds, ['job.created', 'job.phase']);
    const { revision } = await engine.jobs.read(actor, started.job.jobId);
    await engine.jobs.cancel(actor, started.job.jobId, { idempotencyKey: freshKey(), ifRevision: revision, body: { v: 1 } });
    const tail: string[] = [];
    for await (const e of await engine.jobs.follow(actor, started.job.jobId, { after: '2' })) tail.push(e.kind);
    assert.equal(tail, ['job.cancelled']);
    const end: string[] = [];
    for await (const e of await engine.jobs.follow(actor, started.job.jobId, { after: '3' })) end.push(e.kind);
    assert.equal(end, [], 'nothing after the terminal event: the iterator ends without waiting');
    assert.equal(await engine.jobs.events(actor, started.job.jobId, { after: '3' }), { items: [], nextCursor: null });
    await engine.close();
  });

  test.run();
}
