/**
 * The knowledge surfaces over a real socket: operator decisions and releases, the anonymous public
 * read (404 until promoted, immutable caching, ETag/304), review reads and search inside the
 * credential's boundary, activation defaults.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { key, knowledgeWorld, publishOverHttp } from '../../../fixtures/knowledge-http.ts';
import { sampleProposal } from '../../../fixtures/knowledge-kit.ts';

const artifactPath = (r: { kind: string; artifactId: string; revision: string }) => `/api/v1/public/artifacts/${r.kind}/${r.artifactId}/${r.revision}`;

test('public artifacts: 404 until promoted, then the exact envelope, immutable, ETag and 304, never charged', async () => {
  const w = await knowledgeWorld();
  try {
    const { entity, inquiry, edition, promote } = await publishOverHttp(w);
    for (const ref of [entity, inquiry, edition]) assert.is((await w.s.req(artifactPath(ref))).status, 404, 'released, promotion pending');
    for (const ref of [entity, inquiry, edition]) assert.is((await promote(ref)).status, 200);
    for (const ref of [entity, inquiry, edition]) {
      const r = await w.s.req(artifactPath(ref));
      assert.is(r.status, 200, r.text);
      assert.equal(r.json.data.ref, { ...ref, v: 1 });
      assert.is(r.json.data.canonicalUrl, `/k/${ref.kind}/${ref.artifactId}/${ref.revision}`);
      assert.is(r.json.data.projection.kind, ref.kind);
      assert.is(r.json.data.projection.byteLength, Buffer.byteLength(JSON.stringify(r.json.data.projection.value)));
      assert.is(r.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.is(r.headers['service-revision'], ref.revision);
      assert.match(String(r.headers.etag), /^W\/"/);
      assert.is(r.headers['x-service-requests-remaining'], undefined);
      const again = await w.s.req(artifactPath(ref), { headers: { 'if-none-match': String(r.headers.etag) } });
      assert.is(again.status, 304);
      assert.is(again.text, '');
      assert.not.ok(r.text.includes(w.spaceRef) || r.text.includes(w.reviewRef) || r.text.includes('Dana'), 'nothing private in a projection');
    }
    // a valid revision that was never released, another kind for the same id, a declined release
    const other = { ...entity, revision: 'f'.repeat(64) };
    assert.is((await w.s.req(artifactPath(other))).status, 404);
    assert.is((await w.s.req(artifactPath({ ...entity, kind: 'inquiry', artifactId: entity.artifactId.replace('kent_', 'kinq_') }))).status, 404);
    const principal = await w.s.req('/api/v1/auth', { token: w.alice.token });
    assert.ok(principal.json.data.remainingBudget > 0);
  } finally {
    await w.s.close();
  }
});

test('operator routes: refused transitions are 409, release needs enablement, bad bodies 400, unknown review 404', async () => {
  const w = await knowledgeWorld();
  try {
    assert.is((await w.op(`/reviews/${w.reviewRef}/decisions`, { decision: 'open-review', person: 'Dana' })).json.data.state, 'in-review');
    assert.is((await w.op(`/reviews/${w.reviewRef}/decisions`, { decision: 'open-review', person: 'Dana' })).status, 409);
    assert.is((await w.op(`/reviews/${w.reviewRef}/decisions`, { decision: 'merge', person: 'Dana' })).status, 400);
    assert.is((await w.op(`/reviews/krvw_${'0'.repeat(48)}/decisions`, { decision: 'accept', person: 'Dana' })).status, 404);
    const accepted = await w.op(`/reviews/${w.reviewRef}/decisions`, { decision: 'accept', person: 'Dana' });
    assert.match(accepted.json.data.graphRevision, /^[a-f0-9]{64}$/);
    const release = await w.op('/releases', { kind: 'entity', spaceRef: w.spaceRef, artifactId: accepted.json.data.entityIds.subject, person: 'Dana' });
    assert.is(release.status, 409, 'no owner enablement yet');
    const anonymous = await w.s.req('/operator/v1/releases', { method: 'POST', body: { kind: 'entity' } });
    assert.is(anonymous.status, 401);
    const read = await w.op(`/reviews/${w.reviewRef}`);
    assert.equal(read.json.data.history.map((h: { state: string }) => h.state), ['proposed', 'in-review', 'accepted']);
  } finally {
    await w.s.close();
  }
});

test('reviews: 503 by default; once activated the documented shape inside the boundary, 404 outside', async () => {
  const blocked = await knowledgeWorld(false);
  try {
    const r = await blocked.s.req(`/api/v1/reviews/${blocked.reviewRef}`, { token: blocked.alice.token });
    assert.is(r.status, 503);
    assert.ok(r.headers['retry-after']);
    assert.is((await blocked.s.req(`/api/v1/reviews/${blocked.reviewRef}`)).status, 401);
    const search = await blocked.s.req('/api/v1/search', { method: 'POST', token: blocked.alice.token, body: { v: 1, scope: { kind: 'public' }, query: 'x' } });
    assert.is(search.status, 503);
    const principal = await blocked.s.req('/api/v1/auth', { token: blocked.alice.token });
    assert.is(principal.json.data.remainingBudget, 9998, 'only the document creation and GET /auth were charged');
  } finally {
    await blocked.s.close();
  }
  const w = await knowledgeWorld();
  try {
    const r = await w.s.req(`/api/v1/reviews/${w.reviewRef}`, { token: w.alice.token });
    assert.is(r.status, 200);
    assert.equal(Object.keys(r.json.data).sort(), ['browserHref', 'createdAt', 'decidedAt', 'proposalRef', 'reviewRef', 'state', 'v']);
    assert.is(r.json.data.state, 'proposed');
    assert.is((await w.s.req(`/api/v1/reviews/${w.reviewRef}`, { token: w.bob.token })).status, 404);
    const bound = await w.s.credential({ account: 'alice', scopes: ['review:read', 'document:create', 'document:read'] });
    const other = await w.s.req('/api/v1/documents', { method: 'POST', token: w.alice.token, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Other' } });
    const boundOther = await w.s.credential({ account: 'alice', documentRef: other.json.data.documentRef, scopes: ['review:read'] });
    assert.is((await w.s.req(`/api/v1/reviews/${w.reviewRef}`, { token: bound.token })).status, 200);
    assert.is((await w.s.req(`/api/v1/reviews/${w.reviewRef}`, { token: boundOther.token })).status, 404);
    const page = await w.s.req(`/reviews/${w.reviewRef}`);
    assert.is(page.status, 401);
    assert.match(page.text, /Sign-in required/);
  } finally {
    await w.s.close();
  }
});

test('search: space scope inside the boundary, public scope over promoted releases only, ranked, paged, cursors bound', async () => {
  const w = await knowledgeWorld();
  try {
    const search = (token: string, body: object) => w.s.req('/api/v1/search', { method: 'POST', token, body: { v: 1, ...body } });
    const { entity, promote } = await publishOverHttp(w);
    const space = { kind: 'space', spaceRef: w.spaceRef };
    const hits = await search(w.alice.token, { scope: space, query: 'radium' });
    assert.is(hits.status, 200, hits.text);
    assert.is(hits.json.data.items[0].title, 'Radium', 'the entity named Radium ranks first');
    assert.ok(hits.json.data.items.every((i: { score: number }, k: number, all: { score: number }[]) => k === 0 || all[k - 1]!.score >= i.score));
    assert.is((await search(w.bob.token, { scope: space, query: 'radium' })).status, 404, "bob cannot search alice's space");
    const publicOnly = await w.s.credential({ account: 'alice', scopes: ['public:read'] });
    assert.is((await search(publicOnly.token, { scope: space, query: 'radium' })).status, 403);
    // public: nothing until promoted; then only the promoted entity, never unreleased graph records
    assert.equal((await search(w.bob.token, { scope: { kind: 'public' }, query: 'curie' })).json.data.items, []);
    await promote(entity);
    const pub = await search(w.bob.token, { scope: { kind: 'public' }, query: 'curie' });
    assert.equal(pub.json.data.items.map((i: { ref: unknown }) => i.ref), [{ ...entity, v: 1 }]);
    assert.equal((await search(w.bob.token, { scope: { kind: 'public' }, query: 'isolated' })).json.data.items, [], 'unreleased inquiry text stays private');
    // paging
    const first = await search(w.alice.token, { scope: space, query: 'radium', limit: 1 });
    assert.is(first.json.data.items.length, 1);
    const cursor = first.json.data.nextCursor;
    assert.type(cursor, 'string');
    const second = await search(w.alice.token, { scope: space, query: 'radium', limit: 1, cursor });
    assert.is.not(second.json.data.items[0].ref, first.json.data.items[0].ref);
    assert.is((await search(w.alice.token, { scope: space, query: 'curie', limit: 1, cursor })).status, 400, 'cursor of another query');
    const otherCred = await w.s.credential({ account: 'alice', scopes: ['knowledge:read'] });
    assert.is((await search(otherCred.token, { scope: space, query: 'radium', limit: 1, cursor })).status, 400, 'cursor of another credential');
    assert.is((await search(w.alice.token, { scope: space, query: '' })).status, 400);
    assert.is((await search(w.alice.token, { scope: { kind: 'space' }, query: 'x' })).status, 400);
  } finally {
    await w.s.close();
  }
});

test('search stays current: an acceptance is searchable at once, and only in its own space', async () => {
  const w = await knowledgeWorld();
  try {
    await w.op(`/reviews/${w.reviewRef}/decisions`, { decision: 'accept', person: 'Dana' });
    const other = await w.s.req('/api/v1/documents', { method: 'POST', token: w.alice.token, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Other' } });
    const otherSpace = other.json.data.spaceRef;
    const actor = { accountId: 'alice', credentialRef: w.alice.credentialRef, documentRef: null };
    const p = sampleProposal('Lise Meitner');
    const r = await w.s.engine.knowledge.submitProposal({ actor, jobId: `kjob_${'2'.repeat(48)}`, spaceRef: otherSpace }, p, { idempotencyKey: key() });
    const body = (spaceRef: string) => ({ v: 1, scope: { kind: 'space', spaceRef }, query: 'meitner' });
    const before = await w.s.req('/api/v1/search', { method: 'POST', token: w.alice.token, body: body(otherSpace) });
    assert.equal(before.json.data.items, []);
    await w.op(`/reviews/${r.reviewRef}/decisions`, { decision: 'accept', person: 'Dana' });
    const after = await w.s.req('/api/v1/search', { method: 'POST', token: w.alice.token, body: body(otherSpace) });
    assert.is(after.json.data.items[0].title, 'Lise Meitner');
    const first = await w.s.req('/api/v1/search', { method: 'POST', token: w.alice.token, body: body(w.spaceRef) });
    assert.equal(first.json.data.items, [], 'the first space holds no Meitner');
  } finally {
    await w.s.close();
  }
});

test('POST /proposals: a spaceRef outside the credential is 404; a well-formed standalone request 409 uncharged', async () => {
  const w = await knowledgeWorld();
  try {
    const send = (token: string, body: object) => w.s.req('/api/v1/proposals', { method: 'POST', token, headers: { 'idempotency-key': key() }, body });
    assert.is((await send(w.bob.token, { ...sampleProposal(), spaceRef: w.spaceRef })).status, 404);
    const r = await send(w.alice.token, { ...sampleProposal(), spaceRef: w.spaceRef });
    assert.is(r.status, 409);
    assert.is(r.json.error.code, 'AGENT_RUN_REQUIRED');
    assert.is(r.json.error.requiredAction, 'submit-through-research-job');
    const bad = await send(w.alice.token, { ...sampleProposal(), facts: [{ ...sampleProposal().facts[0], subject: 'ghost' }] });
    assert.is(bad.status, 400);
    assert.equal(bad.json.error.fieldErrors.map((f: { field: string }) => f.field), ['facts.0.subject', 'evidence.1.factKey']);
  } finally {
    await w.s.close();
  }
});

test('operator decisions with an Idempotency-Key: a repeat whose answer was lost replays (200, receipt replayed, the review as it is now); another decision under the key is 409 IDEMPOTENCY_CONFLICT', async () => {
  const w = await knowledgeWorld();
  try {
    const decide = (body: object, k?: string) =>
      w.s.req(`/operator/v1/reviews/${w.reviewRef}/decisions`, { method: 'POST', token: w.s.operatorKey, body, ...(k ? { headers: { 'idempotency-key': k } } : {}) });
    const k = key();
    const open = await decide({ decision: 'open-review', person: 'Dana' }, k);
    assert.is(open.status, 200, open.text);
    assert.is(open.json.receipt.idempotency, 'created');
    assert.is(open.json.data.state, 'in-review');
    const k2 = key();
    const accepted = await decide({ decision: 'accept', person: 'Dana', note: null }, k2);
    assert.is(accepted.json.data.state, 'accepted');
    const again = await decide({ decision: 'accept', person: 'Dana', note: null }, k2);
    assert.is(again.status, 200, again.text);
    assert.is(again.json.receipt.idempotency, 'replayed');
    assert.is(again.json.receipt.receiptRef, accepted.json.receipt.receiptRef);
    assert.equal(again.json.data, accepted.json.data);
    const first = await decide({ decision: 'open-review', person: 'Dana' }, k);
    assert.is(first.json.receipt.idempotency, 'replayed');
    assert.is(first.json.data.state, 'accepted', 'a replay answers the review as it is now');
    assert.is((await decide({ decision: 'reject', person: 'Dana' }, k2)).json.error.code, 'IDEMPOTENCY_CONFLICT');
    assert.is((await decide({ decision: 'accept', person: 'Dana' })).status, 409, 'without a key a repeated decision is refused by the state machine');
    assert.is((await decide({ decision: 'accept', person: 'Dana' }, 'short')).status, 400);
    const read = await w.op(`/reviews/${w.reviewRef}`);
    assert.equal(read.json.data.history.map((h: { state: string }) => h.state), ['proposed', 'in-review', 'accepted']);
  } finally {
    await w.s.close();
  }
});

test('POST /operator/v1/credentials with an Idempotency-Key: a repeat answers the same credential (token null: shown once); another body is 409', async () => {
  const w = await knowledgeWorld();
  try {
    const create = (body: object, k: string) => w.s.req('/operator/v1/credentials', { method: 'POST', token: w.s.operatorKey, body, headers: { 'idempotency-key': k } });
    const k = key();
    const body = { account: 'alice', label: 'retried', scopes: ['document:read'] };
    const first = await create(body, k);
    assert.is(first.status, 201, first.text);
    assert.is(first.json.receipt.idempotency, 'created');
    assert.type(first.json.data.token, 'string');
    const again = await create(body, k);
    assert.is(again.status, 201);
    assert.is(again.json.receipt.idempotency, 'replayed');
    assert.is(again.json.data.credentialRef, first.json.data.credentialRef);
    assert.is(again.json.data.token, null);
    assert.is((await create({ ...body, label: 'other' }, k)).json.error.code, 'IDEMPOTENCY_CONFLICT');
    assert.is((await w.s.req('/api/v1/auth', { token: first.json.data.token })).status, 200, 'the first token works');
  } finally {
    await w.s.close();
  }
});

test.run();
