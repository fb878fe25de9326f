/**
 * Smaller contract gaps, over HTTP: an oversized blocks read points to rich-json, an empty Cookie is
 * no session cookie, asOf.date is a calendar date, a code block's language cannot break its Markdown
 * fence, and GET /auth's budgets (request and research runs) with the research-runs header.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALL_SCOPES, startServer, type TestServer } from '../../fixtures/http-kit.ts';
import type { ResearchRunner } from '../jobs/runner.ts';
import { specBody } from '../jobs/jobs-kit.ts';

let keyCounter = 0;
const key = (what: string) => `gaps-${what}-${String(++keyCounter).padStart(8, '0')}`;

async function newDocument(server: TestServer, token: string) {
  const created = await server.req('/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': key('create') }, body: { v: 1, title: 'Gaps' } });
  assert.is(created.status, 201, created.text);
  return { documentRef: created.json.data.documentRef as string, revision: created.headers['service-revision'] as string };
}

function mutate(server: TestServer, token: string, documentRef: string, revision: string, blocks: unknown[]) {
  return server.req(`/api/v1/documents/${documentRef}/mutations`, {
    method: 'POST',
    token,
    headers: { 'idempotency-key': key('mutate'), 'service-if-revision': revision },
    body: { v: 1, intent: 'Add blocks', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks } },
  });
}

test('a blocks read over the 2 MB response limit says to read rich-json (not refresh-resource); rich-json reads', async () => {
  const server = await startServer();
  try {
    const { token } = await server.credential({ scopes: ALL_SCOPES });
    let { documentRef, revision } = await newDocument(server, token);
    // Code is written twice in blocks (code and its Markdown fence) and once in rich-json: 24 × 50,000
    // characters make rich-json about 1.2 MB and blocks about 2.4 MB.
    const code = 'x'.repeat(50_000);
    for (let i = 0; i < 6; i++) {
      const r = await mutate(server, token, documentRef, revision, Array.from({ length: 4 }, () => ({ type: 'codeBlock', language: 'text', code })));
      assert.is(r.status, 200, r.text.slice(0, 300));
      revision = r.headers['service-revision'] as string;
    }
    const blocks = await server.req(`/api/v1/documents/${documentRef}?format=blocks`, { token });
    assert.is(blocks.status, 409);
    assert.is(blocks.json.error.code, 'CONFLICT');
    assert.is(blocks.json.error.requiredAction, undefined, 'refreshing would not help');
    assert.match(blocks.json.error.message, /format=rich-json/);
    const rich = await server.req(`/api/v1/documents/${documentRef}`, { token });
    assert.is(rich.status, 200);
    assert.is(rich.json.data.document.blocks.length, 24);
  } finally {
    await server.close();
  }
});

test('an empty Cookie header is not a session cookie: with a bearer token it is no AUTH_AMBIGUOUS', async () => {
  const server = await startServer();
  try {
    const { token } = await server.credential({ scopes: ['document:read'] });
    const empty = await server.req('/api/v1/auth', { token, headers: { cookie: '' } });
    assert.is(empty.status, 200, empty.text);
    const blank = await server.req('/api/v1/auth', { token, headers: { cookie: '  ' } });
    assert.is(blank.status, 200, blank.text);
    const session = await server.req('/api/v1/auth', { token, headers: { cookie: 'session=abc' } });
    assert.is(session.status, 401);
    assert.is(session.json.error.code, 'AUTH_AMBIGUOUS');
  } finally {
    await server.close();
  }
});

test('acceptance asOf.date must be a real calendar date: 2026-02-30 is 400, 2024-02-29 is accepted', async () => {
  const runner: ResearchRunner = {
    async run(_job, ctx) {
      await ctx.fail({ message: 'not needed' });
    },
  };
  const server = await startServer({ engine: { runner } });
  try {
    const { token } = await server.credential({ scopes: ALL_SCOPES });
    const requirement = { claimClass: 'direct-answer', requirement: 'Answer directly.', providerRecovery: { anchor: 'answer', requiresConfidencePoint: false, v: 1 } };
    const start = (date: string) =>
      server.req('/api/v1/research-jobs', {
        method: 'POST',
        token,
        headers: { 'idempotency-key': key('start') },
        body: specBody({ acceptance: { revision: 3, v: 1, coverageRequirements: [requirement], asOf: { date, coverageRequirementIndex: 0, v: 1 } } }),
      });
    for (const bad of ['2026-02-30', '2025-02-29', '2026-04-31']) {
      const r = await start(bad);
      assert.is(r.status, 400, bad);
      assert.is(r.json.error.code, 'INVALID_REQUEST');
      assert.equal(r.json.error.fieldErrors.map((f: { field: string }) => f.field), ['acceptance.asOf.date'], bad);
    }
    assert.is((await start('2024-02-29')).status, 202);
    assert.is((await start('2026-12-31')).status, 202);
  } finally {
    await server.close();
  }
});

test('codeBlock.language refuses line breaks and fence characters (they broke the Markdown export); a plain language exports', async () => {
  const server = await startServer();
  try {
    const { token } = await server.credential({ scopes: ALL_SCOPES });
    const { documentRef, revision } = await newDocument(server, token);
    for (const language of ['js\nalert(1)', 'js\r', 'ts`x', '~~~', 'a\u2028b']) {
      const r = await mutate(server, token, documentRef, revision, [{ type: 'codeBlock', language, code: 'x = 1' }]);
      assert.is(r.status, 400, JSON.stringify(language));
      assert.equal(r.json.error.fieldErrors.map((f: { field: string }) => f.field), ['mutation.blocks.0.language']);
      assert.match(r.json.error.fieldErrors[0].message, /line breaks, backticks or tildes/);
    }
    const good = await mutate(server, token, documentRef, revision, [{ type: 'codeBlock', language: 'c++', code: 'int x;' }]);
    assert.is(good.status, 200, good.text);
    const md = await server.req(`/api/v1/documents/${documentRef}?format=markdown`, { token });
    assert.is(md.headers['x-service-markdown-loss-count'], '0');
    assert.is(md.text, '```c++\nint x;\n```\n');
  } finally {
    await server.close();
  }
});

test('GET /auth budgets: request and researchRuns; X-Service-Research-Runs-Remaining when the research budget is known', async () => {
  const none = await startServer();
  try {
    const { token } = await none.credential({ scopes: ['document:read'], requestBudget: 50 });
    const r = await none.req('/api/v1/auth', { token });
    assert.is(r.status, 200);
    const { request, researchRuns } = r.json.data.budgets;
    assert.equal(Object.keys(r.json.data.budgets).sort(), ['request', 'researchRuns']);
    assert.equal(Object.keys(request).sort(), ['limit', 'remaining', 'resetsAt', 'windowMs']);
    assert.is(request.limit, 50);
    assert.is(request.remaining, 49);
    assert.equal(researchRuns, { limit: 0, remaining: 0 }, 'no runner: no research runs');
    assert.is(r.headers['x-service-research-runs-remaining'], '0');
  } finally {
    await none.close();
  }
  const counted: ResearchRunner = { async run() {}, runBudget: (account) => (account === 'owner' ? { limit: 5, remaining: 3 } : null) };
  const budgeted = await startServer({ engine: { runner: counted } });
  try {
    const owner = await budgeted.credential({ scopes: ['document:read'] });
    const r = await budgeted.req('/api/v1/auth', { token: owner.token });
    assert.equal(r.json.data.budgets.researchRuns, { limit: 5, remaining: 3 });
    assert.is(r.headers['x-service-research-runs-remaining'], '3');
    // The research operations answer the same header.
    const list = await budgeted.req('/api/v1/research-jobs', { token: (await budgeted.credential({ scopes: ['research:read'] })).token });
    assert.is(list.headers['x-service-research-runs-remaining'], '3');
    const other = await budgeted.credential({ scopes: ['document:read'], account: 'acme' });
    const unknown = await budgeted.req('/api/v1/auth', { token: other.token });
    assert.is(unknown.json.data.budgets.researchRuns, null);
    assert.is(unknown.headers['x-service-research-runs-remaining'], undefined, 'no header when the budget is unknown');
  } finally {
    await budgeted.close();
  }
});

test.run();
