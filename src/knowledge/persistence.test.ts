/**
 * The graph, proposals and releases survive a close and reopen on the embedded default (lowdb):
 * revisions, public reads, review states, submission replays and the search index rebuilt from disk.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { accountActor, freshKey, newDocument } from '../../fixtures/engine-kit.ts';
import { jobIdOf, publishAll, sampleProposal } from '../../fixtures/knowledge-kit.ts';
import { createEngine } from '../engine.ts';
import { manualClock } from '../clock.ts';
import { seededIds } from '../ids.ts';

const alice = accountActor();

test('knowledge written through lowdb reads back exactly after close and reopen', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kw-knowledge-'));
  try {
    const first = createEngine({ storage: await lowdbStorage({ dir }), ids: seededIds(41), clock: manualClock() });
    const doc = await newDocument(first, alice);
    const spaceRef = doc.out.document.spaceRef;
    const key = freshKey();
    const run = { actor: alice, jobId: jobIdOf(4), spaceRef };
    const submitted = await first.knowledge.submitProposal(run, sampleProposal(), { idempotencyKey: key });
    const { entity, edition } = await publishAll(first, submitted.reviewRef);
    const revision = await first.knowledge.graphRevision(spaceRef);
    const read = await first.knowledge.readPublicArtifact('entity', entity.artifactId, entity.revision);
    await first.close();

    const second = createEngine({ storage: await lowdbStorage({ dir }), ids: seededIds(42), clock: manualClock() });
    try {
      assert.is(await second.knowledge.graphRevision(spaceRef), revision);
      assert.is((await second.knowledge.readPublicArtifact('entity', entity.artifactId, entity.revision))!.dataJson, read!.dataJson);
      assert.ok(await second.knowledge.readPublicArtifact('edition', edition.artifactId, edition.revision));
      assert.is((await second.knowledge.readReview(alice, submitted.reviewRef)).state, 'accepted');
      const replay = await second.knowledge.submitProposal(run, sampleProposal(), { idempotencyKey: key });
      assert.is(replay.proposalRef, submitted.proposalRef);
      assert.is(replay.state, 'accepted');
      const hits = await second.knowledge.search(alice, new Set(['public:read']), { v: 1, scope: { kind: 'public' }, query: 'curie' });
      assert.equal(hits.items.map((h) => h.kind).sort(), ['edition', 'entity', 'inquiry']);
    } finally {
      await second.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
