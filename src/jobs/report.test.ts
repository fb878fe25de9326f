import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { errorOf, freshKey } from '../../fixtures/engine-kit.ts';
import { isServiceError } from '../errors.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { ReportLimits } from './report.ts';
import { SAMPLE_REPORT, ScriptedRunner, actorOf, engineMaker, type AdapterList, specBody, until, untilAborted, type Step } from './jobs-kit.ts';


const dirs: string[] = [];
const ADAPTERS: AdapterList = [
  ['memory', () => memoryStorage()],
  ['lowdb', () => lowdbStorage({ dir: dirs[dirs.push(mkdtempSync(join(tmpdir(), 'kw-jobs-'))) - 1]! })],
];

for (const [adapter, makeStorage] of ADAPTERS) {
  const test = suite(`jobs report (${adapter})`);
  const jobsEngine = engineMaker(makeStorage);
  test.after(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const HOLD: Step[] = [(ctx) => ctx.setPhase('synthesizing'), untilAborted];

  /** A job of a held scripted runner, running: its engine, actor, job and run context. */
  async function runningJob() {
    const runner = new ScriptedRunner(HOLD);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const { job } = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
    runner.release(1);
    await until(async () => (await engine.jobs.read(actor, job.jobId)).job.state === 'running', 'running');
    return { engine, actor, job, ctx: runner.contexts.get(job.jobId)! };
  }

  test('report: REPORT_NOT_READY (retryable, retryAfterMs) until staged, then the real report document in both formats', async () => {
    const runner = new ScriptedRunner([(ctx) => ctx.setPhase('synthesizing'), (ctx) => ctx.stageReport(SAMPLE_REPORT), (ctx) => ctx.succeed()]);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const { job } = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
    const bad = await errorOf(engine.jobs.report(actor, job.jobId, 'html'));
    assert.equal([bad.code, bad.fields], ['INVALID_REQUEST', ['format']]);
    try {
      await engine.jobs.report(actor, job.jobId, 'markdown');
      assert.unreachable();
    } catch (e) {
      assert.ok(isServiceError(e) && e.code === 'REPORT_NOT_READY' && e.retryable && e.retryAfterMs === 5000);
    }
    runner.release(3);
    await engine.jobs.idle();
    const read = await engine.jobs.read(actor, job.jobId);
    const report = read.job.artifacts.report!;
    // The domain names the report by its document; the API renders the export links.
    assert.equal(report, { documentRef: report.documentRef });
    const rich = await engine.jobs.report(actor, job.jobId, 'rich-json');
    if (rich.format !== 'rich-json') throw new Error('rich-json expected');
    assert.is(rich.document.title, 'CRDT convergence');
    const blocks = JSON.parse(rich.document.documentJson) as { blocks: { type: string }[] };
    assert.equal(blocks.blocks.map((b) => b.type), ['heading', 'paragraph', 'bulletListItem', 'table']);
    const md = await engine.jobs.report(actor, job.jobId, 'markdown');
    if (md.format !== 'markdown') throw new Error('markdown expected');
    assert.match(md.markdown, /\[Shapiro et al\.\]\(https:\/\/hal\.inria\.fr\/inria-00555588\)/);
    assert.is(md.lossCount, 0);
    // The report document is a real document of the account: its owner can read it directly too.
    const direct = await engine.documents.read(actor, report.documentRef, 'blocks');
    assert.is(direct.format, 'blocks');
    await engine.close();
  });

  test('a job that ended without a report answers CONFLICT, not a polling state', async () => {
    const runner = new ScriptedRunner([(ctx) => ctx.setPhase('planning'), (ctx) => ctx.fail({ message: 'No sources found', retryable: true })], true);
    const engine = await jobsEngine({ runner });
    const actor = actorOf();
    const { job } = await engine.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
    await engine.jobs.idle();
    const failed = (await engine.jobs.read(actor, job.jobId)).job;
    assert.equal(failed.error, { code: 'JOB_FAILED', message: 'No sources found', retryable: true, requiredAction: 'retry-job' });
    assert.is(failed.requiredAction, 'retry-job');
    assert.is((await errorOf(engine.jobs.report(actor, job.jobId, 'markdown'))).code, 'CONFLICT');
    await engine.close();
  });

  test('a report document bigger than 760,000 bytes is refused and nothing is staged; succeed needs a report', async () => {
    const { engine, actor, job, ctx } = await runningJob();
    const para = 'x'.repeat(40_000);
    const huge = { blocks: Array.from({ length: 20 }, () => ({ type: 'paragraph' as const, markdown: para })) };
    try {
      await ctx.stageReport(huge);
      assert.unreachable();
    } catch (e) {
      assert.ok(isServiceError(e) && e.code === 'CONFLICT', String(e));
    }
    assert.ok(20 * 40_000 > ReportLimits.maxBytes);
    try {
      await ctx.succeed();
      assert.unreachable();
    } catch (e) {
      assert.ok(isServiceError(e) && e.code === 'CONFLICT');
    }
    const now = (await engine.jobs.read(actor, job.jobId)).job;
    assert.is(now.artifacts.report, null);
    assert.is(now.state, 'running');
    try {
      await ctx.stageReport({ blocks: [] });
      assert.unreachable();
    } catch (e) {
      assert.ok(isServiceError(e) && e.code === 'INVALID_REQUEST');
    }
    await engine.close();
  });

  test('markdown export reports at most 256 loss issues while lossCount stays exact', async () => {
    const runner = new ScriptedRunner([], true);
    const engine = await jobsEngine({ runner });
    const { exportReport } = await import('./report.ts');
    const actor = actorOf();
    const losses = Array.from({ length: 300 }, (_, i) => ({ blockId: `b${i}`, reason: 'x' }));
    const documents = {
      ...engine.documents,
      read: async () => ({ format: 'markdown' as const, revision: 'r', version: 1, documentRef: 'sdoc_x', markdown: '# x', lossCount: 300, losses }),
    };
    const out = await exportReport(documents, actor.accountId, 'sdoc_x', 'markdown');
    if (out.format !== 'markdown') throw new Error('markdown expected');
    assert.is(out.losses.length, 256);
    assert.is(out.lossCount, 300);
    await engine.close();
  });

  test('runner input is checked: percent 0-100 integer, summaries cut to 1024 units, waiting evidence bounded', async () => {
    const { engine, actor, job, ctx } = await runningJob();
    for (const percent of [-1, 101, 50.5]) {
      const e = await errorOf(ctx.progress(percent, 'x'));
      assert.equal([e.code, e.fields], ['INVALID_REQUEST', ['percent']]);
    }
    await ctx.progress(70, `a${'\u{1F600}'.repeat(600)}`);
    const summary = (await engine.jobs.read(actor, job.jobId)).job.progress.summary;
    assert.ok(summary.length <= 1024 && summary.length >= 1023, String(summary.length));
    assert.ok(!/[\ud800-\udbff]$/.test(summary), 'no lone surrogate at the cut');
    const tooMany = Array.from({ length: 65 }, () => 'e');
    assert.is((await errorOf(ctx.waiting({ summary: 'w', missingEvidence: tooMany }))).code, 'INVALID_REQUEST');
    const badArtifact = await errorOf(ctx.recordArtifact({ kind: 'proposal', proposalRef: 'kprp_bad' }));
    assert.is(badArtifact.code, 'INVALID_REQUEST');
    await ctx.recordArtifact({ kind: 'inquiry', inquiryId: `kinq_${'a'.repeat(24)}` });
    const after = (await engine.jobs.read(actor, job.jobId)).job;
    assert.equal(after.artifacts.inquiry, { inquiryId: `kinq_${'a'.repeat(24)}` });
    assert.equal(after.progress.percent, 70);
    const kinds = (await engine.jobs.events(actor, job.jobId)).items.map((e) => e.kind);
    assert.equal(kinds, ['job.created', 'job.phase', 'job.progress', 'job.artifact'], 'refused calls appended nothing');
    await engine.close();
  });

  test('runner outcomes: a throwing runner fails the job with JOB_FAILED; one that returns unfinished too', async () => {
    const errors: unknown[] = [];
    const boom: Step = async () => {
      throw new Error('upstream model unavailable');
    };
    const { createEngine } = await import('../engine.ts');
    for (const [steps, expected] of [
      [[(ctx) => ctx.setPhase('planning'), boom], /upstream model unavailable/],
      [[(ctx) => ctx.setPhase('planning')], /returned without finishing/],
    ] as [Step[], RegExp][]) {
      const withLog = createEngine({ storage: memoryStorage(), runner: new ScriptedRunner(steps, true), onError: (e) => errors.push(e) });
      const actor = actorOf();
      const { job } = await withLog.jobs.start(actor, { idempotencyKey: freshKey(), body: specBody() });
      await withLog.jobs.idle();
      const out = (await withLog.jobs.read(actor, job.jobId)).job;
      assert.is(out.state, 'failed');
      assert.is(out.error?.code, 'JOB_FAILED');
      assert.match(out.error!.message, expected);
      await withLog.close();
    }
    assert.is(errors.length, 1, 'the thrown error went to onError once');
  });

  test.run();
}
