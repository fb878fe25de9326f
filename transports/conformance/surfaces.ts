/**
 * API scenarios (see ./suite.ts): Research jobs, proposals, activation-blocked surfaces, public artifacts, the library and OpenAPI.
 * @module
 */
import * as assert from 'uvu/assert';
import { DOC_SCOPES, a36, hex, isObject, newKey } from './client.ts';
import { show, expectStatus, expectEnvelope, expectError, expectOk, researchSpec, proposalRequest } from './assert.ts';
import type { Kit, Suite } from './scenario-kit.ts';


/** Register these scenarios on the suite. */
export function surfaceScenarios(s: Suite, k: Kit): void {
  const { c, createDoc, remaining, authCost } = k;

  // ---- research jobs ------------------------------------------------------------------------

  s('POST /research-jobs with a well-formed spec and the right scopes is 410 FEATURE_RETIRED', async () => {
    const token = await c.token(['inquiry:create', 'knowledge:propose', 'research:run', ...DOC_SCOPES]);
    const r = await c.call('POST', '/api/v1/research-jobs', { token, key: newKey(), body: researchSpec() });
    expectError(r, 410, 'FEATURE_RETIRED');
    const doc = await createDoc(token);
    const r2 = await c.call('POST', '/api/v1/research-jobs', { token, key: newKey(), body: researchSpec({ kind: 'document', documentRef: doc.documentRef }) });
    expectError(r2, 410, 'FEATURE_RETIRED');
  });

  s('GET /research-jobs is a page {items, nextCursor}, empty when the credential started no job', async () => {
    const token = await c.token(['research:read', 'research:run', ...DOC_SCOPES]);
    await createDoc(token, 'creating a document starts no research');
    const list = expectOk(await c.call('GET', '/api/v1/research-jobs', { token }));
    assert.equal(list.items, []);
    assert.is(list.nextCursor, null);
    expectError(await c.call('GET', '/api/v1/research-jobs?limit=0', { token }), 400, 'INVALID_REQUEST');
    const readOnly = await c.token(['research:read']);
    expectOk(await c.call('GET', '/api/v1/research-jobs', { token: readOnly }));
  });

  s('unknown research jobs are 404 NOT_FOUND on every job route', async () => {
    const token = await c.token(['research:read', 'research:run', ...DOC_SCOPES]);
    const job = `kjob_${hex(48)}`;
    const answers = [
      await c.call('GET', `/api/v1/research-jobs/${job}`, { token }),
      await c.call('GET', `/api/v1/research-jobs/${job}/events`, { token }),
      await c.call('GET', `/api/v1/research-jobs/${job}/events`, { token, headers: { Accept: 'text/event-stream' } }),
      await c.call('GET', `/api/v1/research-jobs/${job}/report?format=markdown`, { token }),
    ];
    const wrong = answers.filter((r) => r.status !== 404 || r.json?.error?.code !== 'NOT_FOUND').map(show);
    assert.equal(wrong, [], 'every job route answers 404 NOT_FOUND for an unknown job');
    const cancel = await c.call('POST', `/api/v1/research-jobs/${job}/cancellations`, { token, key: newKey(), revision: 'r1', body: { v: 1 } });
    // The revision is made up (no job exists to read one from): 404 or a 400 for the header are both readings.
    assert.ok(cancel.status === 404 || cancel.status === 400, show(cancel));
    expectEnvelope(cancel);
  });
  // ---- proposals ----------------------------------------------------------------------------

  s('a well-formed proposal is 409 AGENT_RUN_REQUIRED (submit-through-research-job) without charging the budget', async () => {
    const token = await c.token(['knowledge:propose']);
    const cost = await authCost(token);
    const before = await remaining(token);
    for (let i = 0; i < 3; i++) {
      const r = await c.call('POST', '/api/v1/proposals', { token, key: newKey(), body: proposalRequest() });
      const error = expectError(r, 409, 'AGENT_RUN_REQUIRED');
      assert.is(error.requiredAction, 'submit-through-research-job');
    }
    const malformed = await c.call('POST', '/api/v1/proposals', { token, key: newKey(), body: { ...proposalRequest(), v: 1 } });
    expectError(malformed, 400, 'INVALID_REQUEST');
    const tooMany = { ...proposalRequest(), inquiries: Array.from({ length: 33 }, (_, i) => ({ key: `q${i}`, question: 'Q?', answerForm: 'short-answer', language: 'en', parentKeys: [] })) };
    expectError(await c.call('POST', '/api/v1/proposals', { token, key: newKey(), body: tooMany }), 400, 'INVALID_REQUEST');
    // Every write requires an Idempotency-Key.
    expectError(await c.call('POST', '/api/v1/proposals', { token, body: proposalRequest() }), 400, 'IDEMPOTENCY_REQUIRED');
    const after = await remaining(token);
    assert.is(before - after, cost, 'proposal answers (409 and 400) charged nothing');
  });

  s('operator activation switch: blocked proposals answer 503 to every authenticated request, uncharged', async () => {
    const token = await c.token(['knowledge:propose']);
    const noScope = await c.token(['document:read']);
    const off = await c.operator('/operator/v1/activation', { proposals: false });
    assert.is(off.status, 200, show(off));
    const state = isObject(off.json?.data) ? off.json.data : off.json;
    assert.is(state.proposals, false, 'the whole activation state is returned');
    assert.type(state.search, 'boolean');
    assert.type(state.reviews, 'boolean');
    try {
      const cost = await authCost(token);
      const before = await remaining(token);
      const r = await c.call('POST', '/api/v1/proposals', { token, key: newKey(), body: proposalRequest() });
      expectError(r, 503, 'TEMPORARILY_UNAVAILABLE');
      expectError(await c.call('POST', '/api/v1/proposals', { token, key: newKey(), body: { v: 1 } }), 503, 'TEMPORARILY_UNAVAILABLE');
      expectError(await c.call('POST', '/api/v1/proposals', { token: noScope, key: newKey(), body: proposalRequest() }), 503, 'TEMPORARILY_UNAVAILABLE');
      assert.is(before - (await remaining(token)), cost, '503 answers charged nothing');
    } finally {
      const on = await c.operator('/operator/v1/activation', { proposals: true });
      assert.is(on.status, 200, show(on));
    }
    expectError(await c.call('POST', '/api/v1/proposals', { token, key: newKey(), body: proposalRequest() }), 409, 'AGENT_RUN_REQUIRED');
    const anonymous = await c.call('POST', '/operator/v1/activation', { body: { proposals: false } });
    assert.is(anonymous.status, 401, 'the operator API needs the operator key');
    const wrong = await c.call('POST', '/operator/v1/activation', { token: 'not-the-operator-key', body: { proposals: false } });
    assert.is(wrong.status, 401);
    const userToken = await c.call('POST', '/operator/v1/credentials', { token, body: { label: 'x', scopes: ['document:read'] } });
    assert.is(userToken.status, 401, 'an API token is not an operator key');
  });
  // ---- activation-blocked reads -------------------------------------------------------------

  s('search and review reads are 503 TEMPORARILY_UNAVAILABLE with Retry-After, uncharged, whatever the scope', async () => {
    const token = await c.token(['public:read', 'knowledge:read', 'review:read']);
    const bare = await c.token(['document:read']);
    const cost = await authCost(token);
    const before = await remaining(token);
    const answers = [
      await c.call('POST', '/api/v1/search', { token, body: { scope: { kind: 'public' }, query: 'water' } }),
      await c.call('POST', '/api/v1/search', { token, body: { scope: { kind: 'space', spaceRef: `ksp_${hex(48)}` }, query: 'water' } }),
      await c.call('GET', `/api/v1/reviews/krvw_${hex(48)}`, { token }),
      await c.call('GET', `/api/v1/reviews/krvw_${hex(48)}`, { token: bare }),
      await c.call('POST', '/api/v1/search', { token: bare, body: { scope: { kind: 'public' }, query: 'water' } }),
    ];
    for (const r of answers) {
      const error = expectError(r, 503, 'TEMPORARILY_UNAVAILABLE');
      assert.type(error.retryable, 'boolean');
    }
    assert.is(before - (await remaining(token)), cost, 'activation-blocked answers charged nothing');
    expectError(await c.call('GET', `/api/v1/reviews/krvw_${hex(48)}`), 401, 'AUTH_REQUIRED');
  });
  // ---- public artifacts ---------------------------------------------------------------------

  s('public artifacts: an unreleased artifact is 404 NOT_FOUND anonymously, never 401', async () => {
    const token = await c.token();
    const kinds: [string, string][] = [
      ['entity', 'kent_'],
      ['inquiry', 'kinq_'],
      ['edition', 'kedn_'],
    ];
    for (const [kind, prefix] of kinds) {
      const path = `/api/v1/public/artifacts/${kind}/${prefix}${a36(24)}/${hex(64)}`;
      expectError(await c.call('GET', path), 404, 'NOT_FOUND');
      expectError(await c.call('GET', path, { token }), 404, 'NOT_FOUND');
    }
    for (const path of [
      `/api/v1/public/artifacts/entity/kinq_${a36(24)}/${hex(64)}`,
      `/api/v1/public/artifacts/entity/kent_${a36(24)}/not-a-revision`,
      `/api/v1/public/artifacts/widget/kent_${a36(24)}/${hex(64)}`,
    ]) {
      const r = await c.call('GET', path);
      assert.ok(r.status === 404 || r.status === 400, `malformed locator: ${show(r)}`);
      expectEnvelope(r);
    }
  });
  // ---- library ------------------------------------------------------------------------------

  s('library commands need a library scope (403) and a known command type (400)', async () => {
    const noScope = await c.token(['document:read']);
    const r = await c.call('POST', '/api/v1/library', { token: noScope, body: { type: 'list' } });
    expectError(r, 403, 'FORBIDDEN');
    const token = await c.token(['library:read', 'library:write']);
    expectError(await c.call('POST', '/api/v1/library', { token, body: { type: 'no-such-command' } }), 400, 'INVALID_REQUEST');
    const short = await c.call('POST', '/api/v1/library', { token, body: { type: 'save-link', url: 'https://example.org/', idempotencyKey: 'short' } });
    expectError(short, 400, 'INVALID_REQUEST');
  });
  // ---- OpenAPI ------------------------------------------------------------------------------

  s('GET /openapi.json is a valid OpenAPI 3.1 document, version 1.0.0, without operator operations', async () => {
    const r = await c.call('GET', '/openapi.json');
    expectStatus(r, 200);
    assert.match(r.headers.get('content-type') ?? '', /json/i);
    const spec = r.json;
    assert.ok(isObject(spec));
    assert.match(spec.openapi, /^3\.1\.\d+$/);
    assert.is(spec.info?.version, '1.0.0');
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(structuredClone(spec));
    assert.ok(result.valid, String(JSON.stringify(result.errors)).slice(0, 800));
    const paths = Object.keys(spec.paths ?? {});
    const has = (suffix: string) => paths.some((x) => x === `/api/v1${suffix}` || x === suffix);
    for (const path of ['/auth', '/documents', '/documents/{documentRef}', '/documents/{documentRef}/mutations', '/research-jobs', '/proposals', '/search', '/library']) {
      assert.ok(has(path), `OpenAPI lists ${path}`);
    }
    assert.not.ok(
      paths.some((x) => x.includes('operator')),
      'operator-only operations are omitted',
    );
  });
}
