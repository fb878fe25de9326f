/**
 * publishFromAcceptedProposal: the demo path publishes one artifact of each kind through the same
 * steps, and refuses proposals that are not accepted.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accountActor, errorOf, testEngine } from '../../fixtures/engine-kit.ts';
import { submitted } from '../../fixtures/knowledge-kit.ts';
import { publishFromAcceptedProposal } from './publish.ts';

test('publishes an entity, an inquiry and an edition of an accepted proposal, readable anonymously', async () => {
  const engine = testEngine(31);
  const { result } = await submitted(engine, accountActor('demo'));
  const input = { reviewRef: result.reviewRef, person: 'Demo Person', edition: { title: 'Report', markdown: '# Report\n\nText.\n' } };
  assert.is((await errorOf(publishFromAcceptedProposal(engine.operator, input))).code, 'CONFLICT');
  await engine.operator.decide(result.reviewRef, { decision: 'accept', person: 'Demo Person' });
  const out = await publishFromAcceptedProposal(engine.operator, input);
  assert.equal([out.entity.kind, out.inquiry.kind, out.edition.kind], ['entity', 'inquiry', 'edition']);
  for (const ref of [out.entity, out.inquiry, out.edition]) assert.ok(await engine.knowledge.readPublicArtifact(ref.kind, ref.artifactId, ref.revision));
  assert.is(out.edition.revision, engine.deps.sha256(input.edition.markdown));
});

test.run();
