/**
 * Public locators: HTML (escaped by the template library), Markdown by `.md` or Accept, immutable
 * caching, 404 for anything unreleased; and a sweep of every route proving no private record of one
 * space is readable anonymously or from another account.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { knowledgeWorld, publishOverHttp } from '../../../fixtures/knowledge-http.ts';
import { contractOperations } from '../../contract/operations.ts';
import { wantsMarkdown } from './public-pages.ts';

const locator = (r: { kind: string; artifactId: string; revision: string }) => `/k/${r.kind}/${r.artifactId}/${r.revision}`;

test('locators: HTML page, .md and Accept: text/markdown, immutable, 304; 404 before promotion and for other revisions', async () => {
  const w = await knowledgeWorld();
  try {
    const { entity, inquiry, edition, promote } = await publishOverHttp(w);
    for (const ref of [entity, inquiry, edition]) {
      const r = await w.s.req(locator(ref));
      assert.is(r.status, 404, 'released but not promoted');
      assert.match(String(r.headers['content-type']), /^text\/html/);
      assert.is((await w.s.req(`${locator(ref)}.md`)).status, 404);
      await promote(ref);
    }
    const html = await w.s.req(locator(entity));
    assert.is(html.status, 200);
    assert.match(String(html.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.is(html.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(html.headers['content-security-policy']), /default-src 'none'/);
    assert.match(html.text, /<html lang="en">/);
    assert.match(html.text, /<h1>Marie Curie<\/h1>/);
    assert.match(html.text, /<a href="https:\/\/example.org\/wiki\/Subject" rel="nofollow noopener">/);
    const md = await w.s.req(`${locator(entity)}.md`);
    assert.is(md.status, 200);
    assert.match(String(md.headers['content-type']), /^text\/markdown/);
    assert.match(md.text, /^# Marie Curie\n/);
    const accept = await w.s.req(locator(entity), { headers: { accept: 'text/markdown' } });
    assert.is(accept.text, md.text);
    const etag = String(html.headers.etag);
    assert.is((await w.s.req(locator(entity), { headers: { 'if-none-match': etag } })).status, 304);
    assert.is.not(md.headers.etag, etag, 'the two representations have their own tags');
    // the edition's text holds markup: escaped in HTML, exact in Markdown
    const ed = await w.s.req(locator(edition));
    assert.not.ok(ed.text.includes('<script>'), 'no markup from content');
    assert.match(ed.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(ed.text, /<title>Curie &lt;b&gt;edition&lt;\/b&gt;<\/title>/);
    assert.not.ok(/href="javascript:/i.test(ed.text));
    const edMd = await w.s.req(`${locator(edition)}.md`);
    assert.is(edMd.text, '# Curie\n\nRadium <script>alert(1)</script> [x](javascript:alert(1))\n', 'an edition is its exact synthesis bytes');
    const inq = await w.s.req(locator(inquiry));
    assert.match(inq.text, /What did Marie Curie discover\?/);
    for (const bad of [
      `/k/entity/${entity.artifactId}/${'0'.repeat(64)}`,
      `/k/entity/${entity.artifactId}/${'0'.repeat(64)}.md`,
      `/k/person/${entity.artifactId}/${entity.revision}`,
      `/k/entity/${entity.artifactId}/not-hex`,
      `/k/inquiry/${entity.artifactId}/${entity.revision}`,
    ]) {
      const r = await w.s.req(bad);
      assert.is(r.status, 404, bad);
      assert.is(r.headers['cache-control'], 'no-store');
    }
  } finally {
    await w.s.close();
  }
});

test('Accept negotiation prefers Markdown only when asked for at least as strongly as HTML', () => {
  assert.ok(wantsMarkdown('text/markdown'));
  assert.ok(wantsMarkdown('text/html;q=0.5, text/markdown'));
  assert.not.ok(wantsMarkdown('text/html, text/markdown;q=0.9'));
  assert.not.ok(wantsMarkdown('text/markdown;q=0'));
  assert.not.ok(wantsMarkdown(undefined));
  assert.not.ok(wantsMarkdown('*/*'));
});

test('no private record is readable anonymously or from another account, on any route', async () => {
  const w = await knowledgeWorld();
  try {
    const { accepted, entity } = await publishOverHttp(w); // released, never promoted
    const entityId = accepted.entityIds.subject as string;
    const values: Record<string, string> = {
      documentRef: w.documentRef,
      reviewRef: w.reviewRef,
      jobId: `kjob_${'0'.repeat(47)}1`,
      spaceRef: w.spaceRef,
      kind: 'entity',
      artifactId: entityId,
      revision: entity.revision,
    };
    const secrets = [w.spaceRef, w.reviewRef, w.proposalRef, w.documentRef, entityId, 'Marie Curie', 'Radium'];
    const bodies: Record<string, object> = {
      '/api/v1/search': { v: 1, scope: { kind: 'space', spaceRef: w.spaceRef }, query: 'radium' },
      '/api/v1/proposals': { v: 2, entities: [], facts: [], evidence: [], inquiries: [], spaceRef: w.spaceRef },
      '/api/v1/documents': { v: 1, title: 'x' },
      '/api/v1/library': { type: 'list' },
    };
    let tried = 0;
    for (const op of contractOperations) {
      if (op.audience === 'operator' || op.path === '/openapi.json') continue;
      const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? 'x');
      for (const token of [undefined, w.bob.token]) {
        const options = { method: op.method, headers: { 'idempotency-key': `sweep-${'0'.repeat(16)}${tried}` }, ...(token ? { token } : {}), ...(op.method === 'POST' ? { body: bodies[op.path] ?? { v: 1 } } : {}) };
        const r = await w.s.req(path, options);
        tried++;
        // a reference the request itself carries may be echoed (e.g. in a sign-in note); nothing else may appear
        const sent = `${path} ${JSON.stringify(options)}`;
        for (const secret of secrets) if (!sent.includes(secret)) assert.not.ok(r.text.includes(secret), `${op.method} ${path} (${token ? 'bob' : 'anonymous'}) answered ${r.status} and revealed ${secret}`);
        if (op.auth !== 'none' && !token) assert.is(r.status, 401, `${op.method} ${op.path} anonymous`);
      }
    }
    // the markdown locator too
    for (const suffix of ['', '.md']) {
      const r = await w.s.req(`/k/entity/${entityId}/${entity.revision}${suffix}`);
      assert.is(r.status, 404);
      for (const secret of secrets) assert.not.ok(r.text.includes(secret));
    }
    assert.ok(tried >= 30, `swept ${tried} requests`);
  } finally {
    await w.s.close();
  }
});

test.run();
