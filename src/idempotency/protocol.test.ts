/**
 * The one write protocol (decisions.md, "Writes and their idempotency"), run against every write
 * operation of protocol-kit.ts: exact repeat, changed body, changed revision, concurrent duplicates
 * (in one process, and in two processes sharing one store), after a restart, after the retention window.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { errorOf } from '../../fixtures/engine-kit.ts';
import { sampleProposal } from '../../fixtures/knowledge-kit.ts';
import { manualClock, type ManualClock } from '../clock.ts';
import { createEngine, type Engine } from '../engine.ts';
import { seededIds } from '../ids.ts';
import { ScriptedRunner } from '../jobs/jobs-kit.ts';
import type { Storage } from '../ports.ts';
import { DEFAULT_RETENTION_MS, IDEMPOTENCY_COLLECTION } from './idempotency.ts';
import { uniqueKey, writeCases, type Outcome, type Target, type WriteCase } from './protocol-kit.ts';

const CASES = writeCases(sampleProposal);
let seed = 100;

/** An engine whose research runs stay running (one step nobody releases), so jobs can be cancelled. */
function engineOver(storage: Storage, clock: ManualClock): Engine {
  return createEngine({ storage, clock, ids: seededIds(++seed), runner: new ScriptedRunner([async () => undefined]) });
}

async function settle(engine: Engine): Promise<void> {
  await engine.library.idle();
}

function assertReplayOf(first: Outcome, again: Outcome, what: string): void {
  assert.is(again.id, first.id, `${what}: the same result`);
  if (first.receipt === null) return;
  assert.is(first.receipt.idempotency, 'created', `${what}: the first application is created`);
  assert.is(again.receipt?.idempotency, 'replayed', `${what}: the repeat is replayed`);
  assert.is(again.receipt?.receiptRef, first.receipt.receiptRef, `${what}: with the first receipt`);
}

async function inWorld(run: (engine: Engine, clock: ManualClock, target: Target, c: WriteCase) => Promise<void>, c: WriteCase): Promise<void> {
  const clock = manualClock();
  const engine = engineOver(memoryStorage(), clock);
  try {
    await run(engine, clock, await c.prepare(engine), c);
  } finally {
    await engine.close();
  }
}

test('the kit lists every write operation of decisions.md', () => {
  assert.equal(
    CASES.map((c) => c.name),
    [
      'document.create', 'document.mutate', 'research-job.start', 'research-job.cancel', 'proposal.submit', 'library.save-link',
      'library.create-note', 'library.set-reading-state', 'library.prepare-upload', 'review.decide', 'credential.create',
    ],
  );
});

for (const c of CASES) {
  test(`${c.name}: an exact repeat answers the first receipt and result with the resource as it is now`, () =>
    inWorld(async (engine, _clock, target) => {
      const key = uniqueKey();
      const first = await target.send(engine, key);
      const again = await target.send(engine, key);
      assertReplayOf(first, again, c.name);
      await settle(engine);
      assert.equal(again.resource, await target.current(engine, again), 'the replay shows the resource as it is now');
      assert.is(await target.applied(engine), 1, 'applied once');
    }, c));

  test(`${c.name}: the same key with another body is IDEMPOTENCY_CONFLICT and changes nothing`, () =>
    inWorld(async (engine, _clock, target) => {
      const key = uniqueKey();
      await target.send(engine, key);
      assert.is((await errorOf(target.send(engine, key, 'changed-body'))).code, 'IDEMPOTENCY_CONFLICT');
      assert.is(await target.applied(engine), 1);
    }, c));

  if (c.takesRevision) {
    test(`${c.name}: the same key and body with another revision is IDEMPOTENCY_CONFLICT`, () =>
      inWorld(async (engine, _clock, target) => {
        const key = uniqueKey();
        await target.send(engine, key);
        assert.is((await errorOf(target.send(engine, key, 'changed-revision'))).code, 'IDEMPOTENCY_CONFLICT');
        assert.is(await target.applied(engine), 1);
      }, c));
  }

  test(`${c.name}: concurrent duplicates in one process are applied once; the others wait and replay`, () =>
    inWorld(async (engine, _clock, target) => {
      const key = uniqueKey();
      const outs = await Promise.all([1, 2, 3].map(() => target.send(engine, key)));
      assert.equal(new Set(outs.map((o) => o.id)).size, 1);
      if (outs[0]!.receipt !== null) {
        assert.equal(outs.map((o) => o.receipt!.idempotency).sort(), ['created', 'replayed', 'replayed']);
        assert.is(new Set(outs.map((o) => o.receipt!.receiptRef)).size, 1);
      }
      assert.is(await target.applied(engine), 1);
    }, c));

  test(`${c.name}: concurrent duplicates in two processes sharing one store are applied once`, async () => {
    const clock = manualClock();
    const storage = memoryStorage();
    const [a, b] = [engineOver(storage, clock), engineOver(storage, clock)];
    try {
      const target = await c.prepare(a);
      const key = uniqueKey();
      const outs = await Promise.all([target.send(a, key), target.send(b, key), target.send(a, key), target.send(b, key)]);
      assert.equal(new Set(outs.map((o) => o.id)).size, 1);
      if (outs[0]!.receipt !== null) {
        assert.equal(outs.map((o) => o.receipt!.idempotency).filter((i) => i === 'created'), ['created']);
        assert.is(new Set(outs.map((o) => o.receipt!.receiptRef)).size, 1);
      }
      await settle(a);
      await settle(b);
      assert.is(await target.applied(a), 1);
    } finally {
      await a.close();
      await b.close().catch(() => undefined); // the store is shared: the first close closed it
    }
  });

  test(`${c.name}: after a restart (lowdb reopened from its folder) an exact repeat replays`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kw-protocol-'));
    const clock = manualClock();
    try {
      let engine = engineOver(await lowdbStorage({ dir }), clock);
      const target = await c.prepare(engine);
      const key = uniqueKey();
      const first = await target.send(engine, key);
      await settle(engine);
      await engine.close();
      engine = engineOver(await lowdbStorage({ dir }), clock);
      try {
        const again = await target.send(engine, key);
        assertReplayOf(first, again, c.name);
        assert.is((await errorOf(target.send(engine, key, 'changed-body'))).code, 'IDEMPOTENCY_CONFLICT');
        await settle(engine);
        assert.is(await target.applied(engine), 1);
      } finally {
        await engine.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test(`${c.name}: a key binds for 24 hours; after the retention window it is free for a new intent`, () =>
    inWorld(async (engine, clock, target) => {
      const key = uniqueKey();
      await target.send(engine, key);
      clock.advance(DEFAULT_RETENTION_MS - 1);
      assert.is((await errorOf(target.send(engine, key, 'changed-body'))).code, 'IDEMPOTENCY_CONFLICT', 'still bound just before 24 h');
      clock.advance(1);
      const later = await target.send(engine, key, 'changed-body').then(
        (o) => o,
        (e: unknown) => e,
      );
      if (later instanceof Error) assert.is.not((later as { code?: string }).code, 'IDEMPOTENCY_CONFLICT', 'not bound after the window');
      else if ((later as Outcome).receipt !== null) assert.is((later as Outcome).receipt!.idempotency, 'created', 'a new application');
    }, c));
}

test('a research-job start that cannot run (no runner) writes nothing under its key, and an accepted start still replays', async () => {
  const clock = manualClock();
  const storage = memoryStorage();
  const withRunner = engineOver(storage, clock);
  const without = createEngine({ storage, clock, ids: seededIds(++seed) });
  try {
    const actor = { accountId: 'alice', credentialRef: `scred_${'0'.repeat(23)}1`, documentRef: null };
    const body = { v: 1, question: 'Does a replay outlive the runner?', profile: 'focused', visibilityIntent: 'private', deliverable: { kind: 'report', form: 'question-answer', language: 'en' }, spaceRef: { kind: 'new-document', title: 'R' } };
    const key = uniqueKey();
    const first = await withRunner.jobs.start(actor, { idempotencyKey: key, body });
    const again = await without.jobs.start(actor, { idempotencyKey: key, body });
    assert.is(again.receipt.idempotency, 'replayed');
    assert.is(again.job.jobId, first.job.jobId);
    const records = async () => (await storage.listRecords(IDEMPOTENCY_COLLECTION)).length;
    const before = await records();
    assert.is((await errorOf(without.jobs.start(actor, { idempotencyKey: uniqueKey(), body }))).code, 'FEATURE_RETIRED');
    assert.is(await records(), before, 'no record, no claim');
  } finally {
    await withRunner.close();
    await without.close().catch(() => undefined);
  }
});

test.run();
