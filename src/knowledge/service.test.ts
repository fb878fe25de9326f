/**
 * The knowledge service in-process: submission (idempotency, boundary, conflicts), decisions and
 * the graph they write, releases and promotion, the public read.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { accountActor, errorOf, freshKey, newDocument, testEngine } from '../../fixtures/engine-kit.ts';
import { jobIdOf, publishAll, sampleProposal, submitted } from '../../fixtures/knowledge-kit.ts';
import { KnowledgeCollections, type GraphRecord } from './records.ts';

const alice = accountActor('alice');
const bob = accountActor('bob', 'scred_000000000000000000000002');

async function graphOf(engine: ReturnType<typeof testEngine>, spaceRef: string): Promise<GraphRecord[]> {
  return (await engine.deps.storage.listRecords<GraphRecord>(KnowledgeCollections.graph, `${spaceRef}/`)).map((r) => r.value);
}

test('a submission answers proposed, review-in-browser, its review page and support paths', async () => {
  const engine = testEngine(11);
  const { result } = await submitted(engine, alice);
  assert.is(result.state, 'proposed');
  assert.is(result.requiredAction, 'review-in-browser');
  assert.match(result.proposalRef, /^kprp_[a-f0-9]{48}$/);
  assert.match(result.reviewRef, /^krvw_[a-f0-9]{48}$/);
  assert.is(result.browserHref, `/reviews/${result.reviewRef}`);
  assert.equal(result.conflicts, []);
  assert.equal(result.supportPaths.map((s) => s.href), [`/reviews/${result.reviewRef}`]);
});

test('same job and key: replayed; same key with another request: IDEMPOTENCY_CONFLICT, nothing written', async () => {
  const engine = testEngine(12);
  const doc = await newDocument(engine, alice);
  const run = { actor: alice, jobId: jobIdOf(7), spaceRef: doc.out.document.spaceRef };
  const key = freshKey();
  const first = await engine.knowledge.submitProposal(run, sampleProposal(), { idempotencyKey: key });
  const again = await engine.knowledge.submitProposal(run, sampleProposal(), { idempotencyKey: key });
  assert.is(again.proposalRef, first.proposalRef);
  const before = (await engine.deps.storage.listRecords(KnowledgeCollections.proposals)).length;
  const other = await errorOf(engine.knowledge.submitProposal(run, sampleProposal('Pierre Curie'), { idempotencyKey: key }));
  assert.is(other.code, 'IDEMPOTENCY_CONFLICT');
  const bad = await errorOf(engine.knowledge.submitProposal(run, { ...sampleProposal(), v: 3 }, { idempotencyKey: freshKey() }));
  assert.is(bad.code, 'INVALID_REQUEST');
  assert.equal(bad.fields, ['v']);
  assert.is((await engine.deps.storage.listRecords(KnowledgeCollections.proposals)).length, before);
});

test("a space outside the actor's boundary is NOT_FOUND (other account, other bound document, mismatched spaceRef)", async () => {
  const engine = testEngine(13);
  const doc = await newDocument(engine, alice);
  const other = await newDocument(engine, alice, 'Other');
  const spaceRef = doc.out.document.spaceRef;
  const submit = (actor: typeof alice, request: unknown = sampleProposal()) =>
    engine.knowledge.submitProposal({ actor, jobId: jobIdOf(1), spaceRef }, request, { idempotencyKey: freshKey() });
  assert.is((await errorOf(submit(bob))).code, 'NOT_FOUND');
  assert.is((await errorOf(submit({ ...alice, documentRef: other.ref }))).code, 'NOT_FOUND');
  assert.is((await errorOf(submit(alice, { ...sampleProposal(), spaceRef: other.out.document.spaceRef }))).code, 'NOT_FOUND');
  assert.is((await submit({ ...alice, documentRef: doc.ref })).state, 'proposed');
});

test('accepting writes immutable graph records of every kind in one batch and moves the graph revision', async () => {
  const engine = testEngine(14);
  const { result, spaceRef } = await submitted(engine, alice);
  const before = await engine.knowledge.graphRevision(spaceRef);
  assert.match(before!, /^[a-f0-9]{64}$/);
  const accepted = await engine.operator.decide(result.reviewRef, { decision: 'accept', person: 'Dana' });
  assert.is(accepted.state, 'accepted');
  const after = await engine.knowledge.graphRevision(spaceRef);
  assert.match(after!, /^[a-f0-9]{64}$/);
  assert.is.not(after, before);
  assert.is(accepted.accepted!.graphRevision, after);
  const records = await graphOf(engine, spaceRef);
  const kinds = new Map<string, number>();
  for (const r of records) kinds.set(r.kind, (kinds.get(r.kind) ?? 0) + 1);
  assert.equal(Object.fromEntries(kinds), { entity: 2, 'type-membership': 3, statement: 8, evidence: 2, inquiry: 2, 'review-decision': 1, activity: 1 });
  for (const r of records.filter((x) => x.kind === 'entity')) assert.match(r.id, /^kent_[a-z0-9]{24}$/);
  for (const r of records.filter((x) => x.kind === 'inquiry')) assert.match(r.id, /^kinq_[a-z0-9]{24}$/);
  assert.equal(records.map((r) => r.ordinal).sort((a, b) => a - b), records.map((_, i) => i + 1));
  const second = await errorOf(engine.operator.decide(result.reviewRef, { decision: 'reject', person: 'Dana' }));
  assert.is(second.code, 'CONFLICT');
});

test('rejecting and withdrawing write nothing to the graph', async () => {
  const engine = testEngine(15);
  const a = await submitted(engine, alice, sampleProposal(), 1);
  const revision = await engine.knowledge.graphRevision(a.spaceRef);
  await engine.operator.decide(a.result.reviewRef, { decision: 'open-review', person: 'Dana' });
  const rejected = await engine.operator.decide(a.result.reviewRef, { decision: 'reject', person: 'Dana', note: 'thin evidence' });
  assert.is(rejected.state, 'rejected');
  const b = await submitted(engine, alice, sampleProposal(), 2);
  assert.is((await engine.operator.decide(b.result.reviewRef, { decision: 'withdraw', person: 'Agent owner' })).state, 'withdrawn');
  assert.is(await engine.knowledge.graphRevision(a.spaceRef), revision);
  assert.equal(await graphOf(engine, a.spaceRef), []);
  assert.equal(await graphOf(engine, b.spaceRef), []);
});

test('same-name and same-identifier entities are reported as conflicts and never merged', async () => {
  const engine = testEngine(16);
  const doc = await newDocument(engine, alice);
  const spaceRef = doc.out.document.spaceRef;
  const run = { actor: alice, jobId: jobIdOf(3), spaceRef };
  const first = await engine.knowledge.submitProposal(run, sampleProposal(), { idempotencyKey: freshKey() });
  await engine.operator.decide(first.reviewRef, { decision: 'accept', person: 'Dana' });
  const twin = sampleProposal('  MARIE   curie ');
  twin.entities[0]!.identifiers = ['https://example.org/wiki/Subject'];
  const second = await engine.knowledge.submitProposal(run, twin, { idempotencyKey: freshKey() });
  assert.ok(second.conflicts.some((c) => c.includes('same name')), JSON.stringify(second.conflicts));
  assert.ok(second.conflicts.some((c) => c.includes('identifier https://example.org/wiki/Subject')));
  assert.ok(second.conflicts.some((c) => c.includes('"Radium"')));
  await engine.operator.decide(second.reviewRef, { decision: 'accept', person: 'Dana' });
  const entities = (await graphOf(engine, spaceRef)).filter((r) => r.kind === 'entity');
  assert.is(entities.length, 4);
  assert.is(new Set(entities.map((e) => e.id)).size, 4);
});

test('publication needs enablement, a release and an approved promotion; projections are pinned', async () => {
  const engine = testEngine(17);
  const { result, spaceRef } = await submitted(engine, alice);
  const accepted = await engine.operator.decide(result.reviewRef, { decision: 'accept', person: 'Dana' });
  const entityId = accepted.accepted!.entityIds.subject!;
  const release = { kind: 'entity' as const, spaceRef, artifactId: entityId, person: 'Dana' };
  assert.is((await errorOf(engine.operator.release(release))).code, 'CONFLICT');
  await engine.operator.setPublication(spaceRef, { enabled: true, person: 'Owner' });
  const r = await engine.operator.release(release);
  assert.is(r.state, 'pending-promotion');
  assert.is(r.revision, accepted.accepted!.graphRevision);
  assert.is(await engine.knowledge.readPublicArtifact('entity', entityId, r.revision), null, 'released but not promoted');
  await engine.operator.promote(r, { decision: 'approve', person: 'Promoter' });
  const read = await engine.knowledge.readPublicArtifact('entity', entityId, r.revision);
  assert.ok(read);
  const data = JSON.parse(read.dataJson);
  assert.is(data.projection.byteLength, new TextEncoder().encode(JSON.stringify(data.projection.value)).byteLength);
  assert.is(data.projection.value.name, 'Marie Curie');
  assert.is(data.projection.value.statements.length, 4);
  assert.not.ok(read.dataJson.includes(spaceRef), 'no private reference in the projection');
  assert.not.ok(read.dataJson.includes('Dana'), 'no person names in the projection');
  // a later acceptance moves the graph; the released revision stays as it was, the new one is unreleased
  const more = await engine.knowledge.submitProposal({ actor: alice, jobId: jobIdOf(9), spaceRef }, sampleProposal(), { idempotencyKey: freshKey() });
  await engine.operator.decide(more.reviewRef, { decision: 'accept', person: 'Dana' });
  const now = (await engine.knowledge.graphRevision(spaceRef))!;
  assert.is(await engine.knowledge.readPublicArtifact('entity', entityId, now), null);
  assert.is((await engine.knowledge.readPublicArtifact('entity', entityId, r.revision))!.dataJson, read.dataJson);
  // a declined promotion never becomes public
  const inquiry = await engine.operator.release({ kind: 'inquiry', spaceRef, artifactId: accepted.accepted!.inquiryIds['q.child']!, person: 'Dana' });
  await engine.operator.promote(inquiry, { decision: 'decline', person: 'Promoter' });
  assert.is(await engine.knowledge.readPublicArtifact('inquiry', inquiry.artifactId, inquiry.revision), null);
  assert.is((await errorOf(engine.operator.promote(inquiry, { decision: 'approve', person: 'Promoter' }))).code, 'CONFLICT');
});

test('an edition is its exact synthesis bytes, identified by their sha256', async () => {
  const engine = testEngine(18);
  const { result } = await submitted(engine, alice);
  const { edition } = await publishAll(engine, result.reviewRef);
  assert.match(edition.artifactId, /^kedn_[a-z0-9]{24}$/);
  const read = await engine.knowledge.readPublicArtifact('edition', edition.artifactId, edition.revision);
  const value = JSON.parse(read!.dataJson).projection.value;
  assert.is(engine.deps.sha256(value.text), edition.revision);
  assert.is(value.digest, edition.revision);
});

test('reviews: metadata inside the boundary, NOT_FOUND outside', async () => {
  const engine = testEngine(19);
  const { result } = await submitted(engine, alice);
  const review = await engine.knowledge.readReview(alice, result.reviewRef);
  assert.equal({ state: review.state, decidedAt: review.decidedAt, proposalRef: review.proposalRef }, { state: 'proposed', decidedAt: null, proposalRef: result.proposalRef });
  assert.is((await errorOf(engine.knowledge.readReview(bob, result.reviewRef))).code, 'NOT_FOUND');
  await engine.operator.decide(result.reviewRef, { decision: 'accept', person: 'Dana' });
  const decided = await engine.knowledge.readReview(alice, result.reviewRef);
  assert.is(decided.state, 'accepted');
  assert.match(decided.decidedAt!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test('the graph and its releases survive a restart over the same storage', async () => {
  const storage = memoryStorage();
  const engine = testEngine(20, storage);
  const { result, spaceRef } = await submitted(engine, alice);
  const { entity } = await publishAll(engine, result.reviewRef);
  const revision = await engine.knowledge.graphRevision(spaceRef);
  const again = testEngine(21, storage);
  assert.is(await again.knowledge.graphRevision(spaceRef), revision);
  assert.ok(await again.knowledge.readPublicArtifact('entity', entity.artifactId, entity.revision));
  const hits = await again.knowledge.search(alice, new Set(['knowledge:read']), { v: 1, scope: { kind: 'space', spaceRef }, query: 'radium' });
  assert.ok(hits.items.length > 0, 'the index is rebuilt from storage');
});

test.run();
