import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { errorOf, freshKey } from '../../fixtures/engine-kit.ts';
import { JOBS_COLLECTION, eventStreamOf } from './store.ts';
import { HAPPY_STEPS, ScriptedRunner, actorOf, engineMaker, type AdapterList, specBody, until, untilAborted } from './jobs-kit.ts';

const dirs: string[] = [];
const ADAPTERS: AdapterList = [
  ['memory', () => memoryStorage()],
  ['lowdb', () => lowdbStorage({ dir: dirs[dirs.push(mkdtempSync(join(tmpdir(), 'kw-jobs-'))) - 1]! })],
];

for (const [adapter, makeStorage] of ADAPTERS) {
  const test = suite(`jobs start (${adapter})`);
  const jobsEngine = engineMaker(makeStorage);
  test.after(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  test('without a runner a fresh start is FEATURE_RETIRED (410) and creates nothing; runsRemaining is 0', async () => {
    const engine = await jobsEngine();
    const actor = actorOf();
    const e = await errorOf(engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() }));
    assert.is(e.code, 'FEATURE_RETIRED');
    assert.equal(await engine.deps.storage.listRecords(JOBS_COLLECTION), []);
    assert.equal(await engine.deps.storage.listRecords('idempotency'), []);
    assert.equal((await engine.jobs.list(actor)).items, []);
    assert.is(engine.jobs.runsRemaining(actor), 0);
    await engine.close();
  });

  test('requests are checked before anything: key required and well-formed, body valid', async () => {
    const engine = await jobsEngine({ runner: new ScriptedRunner([]) });
    const actor = actorOf();
    assert.is((await errorOf(engine.jobs.start(actor, { idempotencyKey: undefined, body: specBody() }))).code, 'IDEMPOTENCY_REQUIRED');
    assert.is((await errorOf(engine.jobs.start(actor, { idempotencyKey: 'short', body: specBody() }))).code, 'INVALID_REQUEST');
    const bad = await errorOf(engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody({ profile: 'wide' }) }));
    assert.equal([bad.code, bad.fields], ['INVALID_REQUEST', ['profile']]);
    assert.equal(await engine.deps.storage.listRecords(JOBS_COLLECTION), []);
    await engine.close();
  });

  test('a start creates a queued job with its job.created event and hands it to the runner', async () => {
    const runner = new ScriptedRunner(HAPPY_STEPS, true);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const out = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
    assert.is(out.job.state, 'queued');
    assert.is(out.job.phase, 'queued');
    assert.is(out.receipt.idempotency, 'created');
    assert.match(out.job.jobId, /^kjob_[a-f0-9]{48}$/);
    assert.equal(out.job.artifacts, { document: null, inquiry: null, proposal: null, review: null, report: null, publicArtifacts: [] });
    assert.equal(out.job.spec, specBody());
    const first = await engine.deps.storage.readStream(eventStreamOf(out.job.jobId), 0, 10);
    assert.is((first[0]!.value as { kind: string }).kind, 'job.created');
    await engine.jobs.idle();
    assert.equal(runner.started, [out.job.jobId]);
    const done = await engine.jobs.read(actor, out.job.jobId);
    assert.is(done.job.state, 'succeeded');
    assert.is(done.job.phase, 'complete');
    assert.equal(done.job.progress, { percent: 100, summary: 'Done' });
    assert.ok(done.job.artifacts.report, 'the report is staged');
    assert.is(done.job.artifacts.document?.documentRef, done.job.artifacts.report!.documentRef, 'a new-document job reports into its new document');
    await engine.close();
  });

  test('idempotency: the same key and body replay the original receipt with the job as it is now; another body is IDEMPOTENCY_CONFLICT; keys belong to the credential', async () => {
    const runner = new ScriptedRunner([]);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const key = freshKey();
    const first = await engine.jobs.start(actor, { idempotencyKey: key, body: specBody() });
    await engine.jobs.idle();
    const again = await engine.jobs.start(actor, { idempotencyKey: key, body: specBody() });
    assert.is(again.receipt.idempotency, 'replayed');
    assert.is(again.receipt.receiptRef, first.receipt.receiptRef);
    assert.is(again.job.jobId, first.job.jobId);
    const now = await engine.jobs.read(actor, first.job.jobId);
    assert.is.not(now.job.state, 'queued', 'the job moved on since it was accepted');
    assert.equal(again.job, now.job, 'a replay answers the job as it is now');
    assert.is(again.revision, now.revision, 'with its current revision');
    assert.is((await errorOf(engine.jobs.start(actor, { idempotencyKey: key, body: specBody({ profile: 'deep' }) }))).code, 'IDEMPOTENCY_CONFLICT');
    const other = await engine.jobs.start(actorOf(2), { idempotencyKey: key, body: specBody() });
    assert.is(other.receipt.idempotency, 'created', 'another credential of the account has keys of its own');
    assert.is.not(other.job.jobId, first.job.jobId);
    await engine.jobs.idle();
    assert.is((await engine.jobs.list(actor)).items.length, 1);
    assert.equal(runner.started, [first.job.jobId, other.job.jobId]);
    await engine.close();
  });

  test('concurrent starts with one key create one job', async () => {
    const engine = await jobsEngine({ runner: new ScriptedRunner([]) });
    const actor = actorOf();
    const key = freshKey();
    const outs = await Promise.all([1, 2, 3].map(() => engine.jobs.start(actor, { idempotencyKey: key, body: specBody() })));
    assert.is(new Set(outs.map((o) => o.job.jobId)).size, 1);
    assert.equal(outs.map((o) => o.receipt.idempotency).sort(), ['created', 'replayed', 'replayed']);
    await engine.close();
  });

  test('boundary: a document target must be visible; a new document needs an account-wide actor', async () => {
    const engine = await jobsEngine({ runner: new ScriptedRunner([]) });
    const actor = actorOf();
    const doc = await engine.documents.create(actor, { idempotencyKey: freshKey(), body: { v: 1, title: 'Mine' } });
    const ref = doc.document.documentRef;
    const other = await engine.documents.create(actorOf(9, 'bob'), { idempotencyKey: freshKey(), body: { v: 1, title: 'Bob' } });
    assert.is((await errorOf(engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody({}, other.document.documentRef) }))).code, 'NOT_FOUND');
    assert.is((await errorOf(engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody({}, `sdoc_${'0'.repeat(48)}`) }))).code, 'NOT_FOUND');
    const bound = { ...actorOf(3), documentRef: ref };
    assert.is((await errorOf(engine.jobs.start(bound, { idempotencyKey: freshKey(), body: specBody() }))).code, 'FORBIDDEN');
    const second = await engine.documents.create(actor, { idempotencyKey: freshKey(), body: { v: 1, title: 'Second' } });
    assert.is((await errorOf(engine.jobs.start(bound, { idempotencyKey: freshKey(), body: specBody({}, second.document.documentRef) }))).code, 'NOT_FOUND', 'a bound credential sees only its document');
    const ok = await engine.jobs.start(bound, { idempotencyKey: freshKey(), body: specBody({}, ref) });
    assert.equal(ok.job.artifacts.document, { documentRef: ref, href: `/documents/${ref}` });
    assert.equal(await engine.deps.storage.listRecords(JOBS_COLLECTION).then((r) => r.length), 1, 'refused starts created nothing');
    await engine.close();
  });

  test('the research-run budget: exposed from the runner, and a spent budget refuses starts but not replays', async () => {
    let remaining = 1;
    const runner = Object.assign(new ScriptedRunner([]), { remainingRuns: () => remaining });
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    assert.is(engine.jobs.runsRemaining(actor), 1);
    const key = freshKey();
    await engine.jobs.start(actor, { idempotencyKey: key, body: specBody() });
    remaining = 0;
    assert.is(engine.jobs.runsRemaining(actor), 0);
    assert.is((await engine.jobs.start(actor, { idempotencyKey: key, body: specBody() })).receipt.idempotency, 'replayed');
    assert.is((await errorOf(engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() }))).code, 'RATE_LIMITED');
    await engine.close();
  });

  test('jobs are visible only to the credential that created them (NOT_FOUND, never FORBIDDEN)', async () => {
    const engine = await jobsEngine({ runner: new ScriptedRunner([]) });
    const owner = actorOf(1);
    const { job, revision } = await engine.jobs.start(owner, { idempotencyKey: freshKey(), body: specBody() });
    for (const stranger of [actorOf(2), actorOf(1, 'bob'), { accountId: 'alice', credentialRef: null, documentRef: null }]) {
      assert.is((await errorOf(engine.jobs.read(stranger, job.jobId))).code, 'NOT_FOUND');
      assert.is((await errorOf(engine.jobs.events(stranger, job.jobId))).code, 'NOT_FOUND');
      assert.is((await errorOf(engine.jobs.follow(stranger, job.jobId))).code, 'NOT_FOUND');
      assert.is((await errorOf(engine.jobs.report(stranger, job.jobId, 'markdown'))).code, 'NOT_FOUND');
      assert.is((await errorOf(engine.jobs.cancel(stranger, job.jobId, { idempotencyKey: freshKey(), ifRevision: revision, body: { v: 1 } }))).code, 'NOT_FOUND');
      assert.equal((await engine.jobs.list(stranger)).items, []);
    }
    assert.is((await errorOf(engine.jobs.read(owner, 'kjob_nope'))).code, 'NOT_FOUND');
    await engine.close();
  });

  test('list: newest updatedAt first, paged with opaque cursors bound to the list and credential', async () => {
    const runner = new ScriptedRunner([(ctx) => ctx.setPhase('planning'), untilAborted]);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      engine.clock.advance(1000);
      ids.push((await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() })).job.jobId);
    }
    engine.clock.advance(1000);
    runner.release(1); // the first job moves: it becomes the most recently updated
    await until(async () => (await engine.jobs.read(actor, ids[0]!)).job.state === 'running', 'the first job to run');
    const expected = [ids[0], ids[4], ids[3], ids[2], ids[1]];
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await engine.jobs.list(actor, { limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((j) => j.jobId));
      for (const item of page.items) assert.equal(Object.keys(item).sort(), ['createdAt', 'jobId', 'phase', 'progress', 'state', 'updatedAt', 'v']);
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    assert.equal(seen, expected);
    assert.is(pages, 3);
    const page1 = await engine.jobs.list(actor, { limit: 2 });
    assert.is((await errorOf(engine.jobs.list(actorOf(2), { cursor: page1.nextCursor! }))).code, 'INVALID_REQUEST');
    assert.is((await errorOf(engine.jobs.list(actor, { cursor: 'garbage!' }))).code, 'INVALID_REQUEST');
    for (const limit of [0, 51, 1.5]) assert.is((await errorOf(engine.jobs.list(actor, { limit }))).code, 'INVALID_REQUEST');
    assert.is((await engine.jobs.list(actor)).items.length, 5, 'default limit 20');
    runner.release(10);
    await engine.close();
  });

  test.run();
}
