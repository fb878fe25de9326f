/**
 * The document operations over a real socket: every status of create, read, mutate and list, their
 * headers (Service-Revision, ETag/If-None-Match, X-Service-Markdown-Loss-Count, Location), the limits
 * at their edges, and the boundaries between accounts and between a document-bound token and other
 * documents (404, never 403).
 */
import { manualClock } from '../clock.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { sha256Hex } from '../hash.ts';
import { Patterns } from '../ids.ts';
import { startServer, type Reply, type TestServer } from '../../fixtures/http-kit.ts';
import {
  BlocksEnvelopeSchema,
  DocumentEnvelopeSchema,
  DocumentMutationEnvelopeSchema,
  DocumentPageEnvelopeSchema,
  ErrorEnvelopeSchema,
  PrincipalEnvelopeSchema,
} from '../contract/response-schemas.ts';

/** The body conforms to a published response schema. */
function conforms(schema: v.GenericSchema, value: unknown): void {
  const r = v.safeParse(schema, value);
  assert.ok(r.success, r.success ? '' : JSON.stringify(r.issues.map((i) => [i.path?.map((p) => p.key).join('.'), i.message])));
}

const FIELD = /^(\$|[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*)$/;
let keySeq = 0;
/** A fresh Idempotency-Key (24 chars). */
const key = () => `test-key-${String(++keySeq).padStart(15, '0')}`;

function assertError(r: Reply, status: number, code: string): void {
  assert.is(r.status, status, `status of ${r.text}`);
  assert.is(r.json.error.code, code, r.text);
  assert.is(r.json.meta.apiVersion, '1');
  assert.is(r.headers['x-request-id'], r.json.meta.requestId);
  for (const fe of r.json.error.fieldErrors ?? []) assert.match(fe.field, FIELD);
  conforms(ErrorEnvelopeSchema, r.json);
}

interface Ctx {
  s: TestServer;
  /** account alice, every document scope */
  alice: string;
  /** account bob, every document scope */
  bob: string;
}

async function create(s: TestServer, token: string, title = 'Notes', idempotencyKey = key()): Promise<Reply> {
  return s.req('/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': idempotencyKey }, body: { v: 1, title } });
}

/** `idempotencyKey` null sends no key; undefined a fresh one. */
async function mutate(s: TestServer, token: string, ref: string, revision: string | undefined, mutation: object, idempotencyKey: string | null = key(), intent = 'test'): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
  if (revision !== undefined) headers['service-if-revision'] = revision;
  return s.req(`/api/v1/documents/${ref}/mutations`, { method: 'POST', token, headers, body: { v: 1, intent, mutation } });
}

const addParagraphs = (...texts: string[]) => ({
  kind: 'create',
  beforeBlockId: null,
  parentBlockId: null,
  blocks: texts.map((markdown) => ({ type: 'paragraph', markdown })),
});

const DOC_SCOPES = ['document:create', 'document:read', 'document:write'];

const docs = suite<Ctx>('document routes');

docs.before(async (ctx) => {
  ctx.s = await startServer();
  ctx.alice = (await ctx.s.credential({ account: 'alice', scopes: DOC_SCOPES })).token;
  ctx.bob = (await ctx.s.credential({ account: 'bob', scopes: DOC_SCOPES })).token;
});
docs.after(async (ctx) => {
  await ctx.s.close();
});

docs('POST /documents: 201 with the Document, receipt created, Service-Revision and Location', async ({ s, alice }) => {
  const r = await create(s, alice, 'First notes');
  assert.is(r.status, 201);
  conforms(DocumentEnvelopeSchema, r.json);
  const d = r.json.data;
  assert.is(d.v, 1);
  assert.match(d.documentRef, Patterns.documentRef);
  assert.match(d.spaceRef, Patterns.spaceRef);
  assert.is(d.title, 'First notes');
  assert.is(d.version, 1);
  assert.is(d.format, 'service-rich-document');
  assert.is(d.formatGeneration, 1);
  assert.equal(d.document, { type: 'blocks', blocks: [] });
  assert.is(d.contentSha256, sha256Hex(JSON.stringify(d.document)));
  assert.ok(d.browserHref.endsWith(`/documents/${d.documentRef}`));
  assert.equal(Object.keys(d), ['v', 'documentRef', 'spaceRef', 'title', 'version', 'format', 'formatGeneration', 'contentSha256', 'browserHref', 'document']);
  assert.is(r.json.receipt.idempotency, 'created');
  assert.is(r.json.receipt.v, 1);
  assert.match(r.json.receipt.receiptRef, Patterns.receiptRef);
  assert.ok(r.headers['service-revision']);
  assert.is(r.headers.location, `/api/v1/documents/${d.documentRef}`);
  assert.match(String(r.headers['x-service-requests-remaining']), /^\d+$/);
});

docs('POST /documents: exact replay is 200 replayed; the key with another body is 409 IDEMPOTENCY_CONFLICT', async ({ s, alice }) => {
  const k = key();
  const a = await create(s, alice, 'Replay me', k);
  const b = await create(s, alice, 'Replay me', k);
  assert.is(b.status, 200);
  assert.is(b.json.receipt.idempotency, 'replayed');
  assert.is(b.json.receipt.receiptRef, a.json.receipt.receiptRef);
  assert.is(b.json.data.documentRef, a.json.data.documentRef);
  assertError(await create(s, alice, 'Something else', k), 409, 'IDEMPOTENCY_CONFLICT');
});

docs('POST /documents: Idempotency-Key missing → 400 IDEMPOTENCY_REQUIRED; 15 and 129 chars → 400; 16 and 128 chars → 201', async ({ s, alice }) => {
  const none = await s.req('/api/v1/documents', { method: 'POST', token: alice, body: { v: 1, title: 't' } });
  assertError(none, 400, 'IDEMPOTENCY_REQUIRED');
  for (const k of ['k'.repeat(15), 'k'.repeat(129), 'has space in the key']) assertError(await create(s, alice, 't', k), 400, 'INVALID_REQUEST');
  assert.is((await create(s, alice, 't', `${'a'.repeat(15)}${keySeq++}`.slice(0, 16))).status, 201);
  assert.is((await create(s, alice, 't', `${'b'.repeat(120)}${String(keySeq++).padStart(8, '0')}`)).status, 201);
});

docs('POST /documents: a bad body is 400 with fieldErrors; title 240 passes, 241 does not', async ({ s, alice }) => {
  let r = await s.req('/api/v1/documents', { method: 'POST', token: alice, headers: { 'idempotency-key': key() }, body: { v: 1, title: '', extra: 1 } });
  assertError(r, 400, 'INVALID_REQUEST');
  const fields = r.json.error.fieldErrors.map((f: { field: string }) => f.field).sort();
  assert.equal(fields, ['extra', 'title']);
  assert.is((await create(s, alice, 'x'.repeat(240))).status, 201);
  assertError(await create(s, alice, 'x'.repeat(241)), 400, 'INVALID_REQUEST');
  r = await s.req('/api/v1/documents', { method: 'POST', token: alice, headers: { 'idempotency-key': key(), 'content-type': 'application/json' }, body: 'nope' });
  assertError(r, 400, 'INVALID_REQUEST');
});

docs('POST /documents: 401 without a token, 403 without document:create, 403 for a document-bound token', async ({ s, alice }) => {
  assertError(await s.req('/api/v1/documents', { method: 'POST', headers: { 'idempotency-key': key() }, body: { v: 1, title: 't' } }), 401, 'AUTH_REQUIRED');
  const reader = await s.credential({ account: 'alice', scopes: ['document:read'] });
  assertError(await create(s, reader.token), 403, 'FORBIDDEN');
  const ref = (await create(s, alice)).json.data.documentRef;
  const bound = await s.credential({ documentRef: ref, scopes: DOC_SCOPES });
  assertError(await create(s, bound.token), 403, 'FORBIDDEN');
});

docs('GET /documents/{ref}: rich-json by default with Service-Revision and a weak ETag per representation', async ({ s, alice }) => {
  const created = (await create(s, alice, 'Readable')).json.data;
  const r = await s.req(`/api/v1/documents/${created.documentRef}`, { token: alice });
  assert.is(r.status, 200);
  assert.equal(r.json.data, created);
  const revision = String(r.headers['service-revision']);
  assert.ok(revision.length > 0);
  assert.is(r.headers.etag, `W/"${revision}-rich-json"`);
  const explicit = await s.req(`/api/v1/documents/${created.documentRef}?format=rich-json`, { token: alice });
  assert.is(explicit.headers.etag, r.headers.etag);
  const blocks = await s.req(`/api/v1/documents/${created.documentRef}?format=blocks`, { token: alice });
  assert.is(blocks.headers['service-revision'], revision);
  assert.is(blocks.headers.etag, `W/"${revision}-blocks"`);
  const md = await s.req(`/api/v1/documents/${created.documentRef}?format=markdown`, { token: alice });
  assert.is(md.headers['service-revision'], revision);
  assert.is(md.headers.etag, `W/"${revision}-markdown"`);
  assert.is(md.headers['x-service-markdown-loss-count'], '0');
});

docs('GET format=blocks and format=markdown after a mutation; markdown is text/markdown with the loss count', async ({ s, alice }) => {
  const created = await create(s, alice, 'Formats');
  const ref = created.json.data.documentRef;
  const m = await mutate(s, alice, ref, String(created.headers['service-revision']), {
    kind: 'create',
    beforeBlockId: null,
    parentBlockId: null,
    blocks: [
      { type: 'heading', level: 2, markdown: 'Intro' },
      { type: 'paragraph', markdown: 'See [the source](https://example.org/a).', children: [{ type: 'paragraph', markdown: 'nested' }] },
    ],
  });
  assert.is(m.status, 200);
  const b = await s.req(`/api/v1/documents/${ref}?format=blocks`, { token: alice });
  assert.is(b.status, 200);
  conforms(BlocksEnvelopeSchema, b.json);
  conforms(DocumentEnvelopeSchema, (await s.req(`/api/v1/documents/${ref}`, { token: alice })).json);
  assert.is(b.json.data.v, 1);
  assert.is(b.json.data.documentRef, ref);
  assert.is(b.json.data.blocks.length, 3);
  const [h, p, child] = b.json.data.blocks;
  assert.is(h.type, 'heading');
  assert.is(h.parentBlockId, null);
  assert.is(p.markdown, 'See [the source](https://example.org/a).');
  assert.is(child.parentBlockId, p.id);
  assert.equal(m.json.data.receipt.affectedBlockIds, [h.id, p.id, child.id]);
  const md = await s.req(`/api/v1/documents/${ref}?format=markdown`, { token: alice });
  assert.is(md.status, 200);
  assert.match(String(md.headers['content-type']), /^text\/markdown; charset=utf-8/);
  const engineRead = await s.engine.documents.read({ accountId: 'alice', credentialRef: null, documentRef: null }, ref, 'markdown');
  assert.ok(engineRead.format === 'markdown');
  assert.is(md.headers['x-service-markdown-loss-count'], String(engineRead.lossCount));
  assert.is(md.text, engineRead.markdown);
  assert.match(md.text, /## Intro/);
  assert.match(md.text, /See \[the source\]\(https:\/\/example\.org\/a\)\./);
  assert.ok(md.headers['x-request-id']);
  assert.match(String(md.headers['x-service-requests-remaining']), /^\d+$/);
});

docs('GET with a bad format is 400; an unknown or malformed ref is 404; 401 without token, 403 without document:read', async ({ s, alice }) => {
  const ref = (await create(s, alice)).json.data.documentRef;
  assertError(await s.req(`/api/v1/documents/${ref}`), 401, 'AUTH_REQUIRED');
  assertError(await s.req('/api/v1/documents'), 401, 'AUTH_REQUIRED');
  const writer = await s.credential({ account: 'alice', scopes: ['document:write'] });
  assertError(await s.req(`/api/v1/documents/${ref}`, { token: writer.token }), 403, 'FORBIDDEN');
  assertError(await s.req(`/api/v1/documents/${ref}`, { token: writer.token, headers: { 'if-none-match': '*' } }), 403, 'FORBIDDEN');
  const bad = await s.req(`/api/v1/documents/${ref}?format=html`, { token: alice });
  assertError(bad, 400, 'INVALID_REQUEST');
  assert.equal(bad.json.error.fieldErrors.map((f: { field: string }) => f.field), ['query.format']);
  assertError(await s.req(`/api/v1/documents/sdoc_${'0'.repeat(48)}`, { token: alice }), 404, 'NOT_FOUND');
  assertError(await s.req('/api/v1/documents/not-a-ref', { token: alice }), 404, 'NOT_FOUND');
});

docs('authenticated answers carry the budget under the IETF draft names too: RateLimit-Limit and RateLimit-Reset beside X-Service-Requests-Remaining, on 2XX and 4XX alike', async ({ s, alice }) => {
  const ok = await s.req('/api/v1/auth', { token: alice });
  const limit = ok.json.data.budgets.request.limit as number;
  const windowMs = ok.json.data.budgets.request.windowMs as number;
  for (const r of [ok, await s.req('/api/v1/documents/sdoc_000000000000000000000000000000000000000000000000', { token: alice })]) {
    assert.ok([200, 404].includes(r.status));
    assert.is(Number(r.headers['ratelimit-limit']), limit);
    const reset = Number(r.headers['ratelimit-reset']);
    assert.ok(Number.isInteger(reset) && reset >= 0 && reset <= Math.ceil(windowMs / 1000), `RateLimit-Reset ${reset}`);
    assert.match(String(r.headers['x-service-requests-remaining']), /^\d+$/);
  }
  const anonymous = await s.req('/api/v1/auth', {});
  assert.is(anonymous.headers['ratelimit-limit'], undefined, 'no credential, no budget to name');
});

docs('If-None-Match: 304 with an empty body, Service-Revision and ETag, charged like any request; another representation or revision answers 200', async ({ s, alice }) => {
  const created = await create(s, alice, 'Conditional');
  const ref = created.json.data.documentRef;
  const first = await s.req(`/api/v1/documents/${ref}`, { token: alice });
  const etag = String(first.headers.etag);
  const remaining = Number(first.headers['x-service-requests-remaining']);
  const nm = await s.req(`/api/v1/documents/${ref}`, { token: alice, headers: { 'if-none-match': etag } });
  assert.is(nm.status, 304);
  assert.is(nm.text, '');
  assert.is(nm.headers.etag, etag);
  assert.is(nm.headers['service-revision'], first.headers['service-revision']);
  assert.ok(nm.headers['x-request-id']);
  assert.is(Number(nm.headers['x-service-requests-remaining']), remaining - 1, 'a 304 is charged like every authenticated request');
  const list = await s.req(`/api/v1/documents/${ref}`, { token: alice, headers: { 'if-none-match': `W/"other", ${etag}` } });
  assert.is(list.status, 304);
  const star = await s.req(`/api/v1/documents/${ref}`, { token: alice, headers: { 'if-none-match': '*' } });
  assert.is(star.status, 304);
  const strong = await s.req(`/api/v1/documents/${ref}`, { token: alice, headers: { 'if-none-match': etag.slice(2) } });
  assert.is(strong.status, 304, 'weak comparison');
  const otherFormat = await s.req(`/api/v1/documents/${ref}?format=blocks`, { token: alice, headers: { 'if-none-match': etag } });
  assert.is(otherFormat.status, 200);
  assert.is(Number(otherFormat.headers['x-service-requests-remaining']), remaining - 5, 'four 304s and this read were charged');
  await mutate(s, alice, ref, String(first.headers['service-revision']), addParagraphs('changed'));
  const changed = await s.req(`/api/v1/documents/${ref}`, { token: alice, headers: { 'if-none-match': etag } });
  assert.is(changed.status, 200);
  assert.is.not(changed.headers.etag, etag);
  assertError(await s.req(`/api/v1/documents/sdoc_${'1'.repeat(48)}`, { token: alice, headers: { 'if-none-match': '*' } }), 404, 'NOT_FOUND');
});

docs('mutation: 200 with {v, document, receipt}, envelope receipt and the new Service-Revision; exact replay is replayed', async ({ s, alice }) => {
  const created = await create(s, alice, 'Mutable');
  const ref = created.json.data.documentRef;
  const rev1 = String(created.headers['service-revision']);
  const k = key();
  const r = await mutate(s, alice, ref, rev1, addParagraphs('hello', 'world'), k);
  assert.is(r.status, 200);
  conforms(DocumentMutationEnvelopeSchema, r.json);
  const data = r.json.data;
  assert.equal(Object.keys(data), ['v', 'document', 'receipt']);
  assert.is(data.v, 1);
  assert.is(data.document.version, 2);
  assert.is(data.document.contentSha256, sha256Hex(JSON.stringify(data.document.document)));
  assert.is(data.receipt.v, 1);
  assert.is(data.receipt.documentRef, ref);
  assert.match(data.receipt.operationRef, Patterns.operationRef);
  assert.is(data.receipt.baseVersion, 1);
  assert.is(data.receipt.resultingVersion, 2);
  assert.is(data.receipt.contentSha256, data.document.contentSha256);
  assert.is(data.receipt.affectedBlockIds.length, 2);
  assert.is(r.json.receipt.idempotency, 'created');
  const rev2 = String(r.headers['service-revision']);
  assert.is.not(rev2, rev1);
  const read = await s.req(`/api/v1/documents/${ref}`, { token: alice });
  assert.is(read.headers['service-revision'], rev2);
  const replay = await mutate(s, alice, ref, rev1, addParagraphs('hello', 'world'), k);
  assert.is(replay.status, 200);
  assert.is(replay.json.receipt.idempotency, 'replayed');
  assert.equal(replay.json.data.receipt, data.receipt);
});

docs('mutation errors: 428 without revision, 412 stale, 400 without key or with a bad body, 409 key conflict and structural conflict', async ({ s, alice }) => {
  const created = await create(s, alice, 'Errors');
  const ref = created.json.data.documentRef;
  const rev1 = String(created.headers['service-revision']);
  const r428 = await mutate(s, alice, ref, undefined, addParagraphs('x'));
  assertError(r428, 428, 'PRECONDITION_REQUIRED');
  assertError(await mutate(s, alice, ref, rev1, addParagraphs('x'), null), 400, 'IDEMPOTENCY_REQUIRED');
  const k = key();
  assert.is((await mutate(s, alice, ref, rev1, addParagraphs('first'), k)).status, 200);
  const stale = await mutate(s, alice, ref, rev1, addParagraphs('second'));
  assertError(stale, 412, 'PRECONDITION_FAILED');
  const current = String((await s.req(`/api/v1/documents/${ref}`, { token: alice })).headers['service-revision']);
  assertError(await mutate(s, alice, ref, current, addParagraphs('other body'), k), 409, 'IDEMPOTENCY_CONFLICT');
  const structural = await mutate(s, alice, ref, current, { kind: 'edit', blockId: 'no-such-block', block: { type: 'paragraph', markdown: 'x' } });
  assertError(structural, 409, 'CONFLICT');
  const badBody = await mutate(s, alice, ref, current, { kind: 'explode' });
  assertError(badBody, 400, 'INVALID_REQUEST');
  assert.ok(badBody.json.error.fieldErrors.length > 0);
  assertError(await mutate(s, alice, ref, current, addParagraphs('x'), 'k'.repeat(15)), 400, 'INVALID_REQUEST');
  assertError(await mutate(s, alice, ref, current, addParagraphs('x'), 'k'.repeat(129)), 400, 'INVALID_REQUEST');
  assert.is((await mutate(s, alice, ref, current, addParagraphs('x'), `${'m'.repeat(12)}${String(++keySeq).padStart(4, '0')}`)).status, 200);
});

docs('mutation: 401 without token, 403 without document:write, 404 for an unknown document, 405 on GET', async ({ s, alice }) => {
  const created = await create(s, alice);
  const ref = created.json.data.documentRef;
  const rev = String(created.headers['service-revision']);
  assertError(await s.req(`/api/v1/documents/${ref}/mutations`, { method: 'POST', body: {} }), 401, 'AUTH_REQUIRED');
  const reader = await s.credential({ account: 'alice', scopes: ['document:read'] });
  assertError(await mutate(s, reader.token, ref, rev, addParagraphs('x')), 403, 'FORBIDDEN');
  assertError(await mutate(s, alice, `sdoc_${'2'.repeat(48)}`, rev, addParagraphs('x')), 404, 'NOT_FOUND');
  const get = await s.req(`/api/v1/documents/${ref}/mutations`, { token: alice });
  assertError(get, 405, 'METHOD_NOT_ALLOWED');
  assert.is(get.headers.allow, 'POST');
});

docs('another account sees nothing: read, mutate and conditional read are 404, the list leaves it out', async ({ s, alice, bob }) => {
  const created = await create(s, alice, 'Private to alice');
  const ref = created.json.data.documentRef;
  const rev = String(created.headers['service-revision']);
  assertError(await s.req(`/api/v1/documents/${ref}`, { token: bob }), 404, 'NOT_FOUND');
  assertError(await s.req(`/api/v1/documents/${ref}?format=markdown`, { token: bob }), 404, 'NOT_FOUND');
  assertError(await s.req(`/api/v1/documents/${ref}`, { token: bob, headers: { 'if-none-match': '*' } }), 404, 'NOT_FOUND');
  assertError(await mutate(s, bob, ref, rev, addParagraphs('intrusion')), 404, 'NOT_FOUND');
  const list = await s.req('/api/v1/documents?limit=50', { token: bob });
  assert.not.ok(list.json.data.items.some((i: { documentRef: string }) => i.documentRef === ref));
});

docs('a document-bound token: its document works, any other is 404 (never 403), the list holds only it, GET /auth names it', async ({ s, alice }) => {
  const mine = await create(s, alice, 'Bound');
  const other = await create(s, alice, 'Not bound');
  const ref = mine.json.data.documentRef;
  const otherRef = other.json.data.documentRef;
  const bound = await s.credential({ documentRef: ref, scopes: DOC_SCOPES });
  assert.is(bound.accountId, 'alice');
  assert.is(bound.documentRef, ref);
  assert.is((await s.req(`/api/v1/documents/${ref}`, { token: bound.token })).status, 200);
  assert.is((await mutate(s, bound.token, ref, String(mine.headers['service-revision']), addParagraphs('ok'))).status, 200);
  assertError(await s.req(`/api/v1/documents/${otherRef}`, { token: bound.token }), 404, 'NOT_FOUND');
  assertError(await mutate(s, bound.token, otherRef, String(other.headers['service-revision']), addParagraphs('no')), 404, 'NOT_FOUND');
  const list = await s.req('/api/v1/documents', { token: bound.token });
  assert.is(list.status, 200);
  assert.equal(list.json.data.items.map((i: { documentRef: string }) => i.documentRef), [ref]);
  const principal = (await s.req('/api/v1/auth', { token: bound.token })).json;
  conforms(PrincipalEnvelopeSchema, principal);
  const p = principal.data;
  assert.is(p.documentRef, ref);
  assert.is(p.spaceRef, mine.json.data.spaceRef);
  assert.is(p.browserHref, mine.json.data.browserHref);
  // research starts: the bound document passes to 410, another document is 404, a new document 403
  const research = await s.credential({ documentRef: ref, scopes: ['inquiry:create', 'knowledge:propose', 'research:run'] });
  const spec = (spaceRef: object) => ({
    v: 1,
    question: 'q?',
    profile: 'deep',
    visibilityIntent: 'private',
    deliverable: { kind: 'report', form: 'evidence-review', language: 'en' },
    spaceRef,
  });
  const start = (spaceRef: object) =>
    s.req('/api/v1/research-jobs', { method: 'POST', token: research.token, headers: { 'idempotency-key': key() }, body: spec(spaceRef) });
  assertError(await start({ kind: 'document', documentRef: ref }), 410, 'FEATURE_RETIRED');
  assertError(await start({ kind: 'document', documentRef: otherRef }), 404, 'NOT_FOUND');
  assertError(await start({ kind: 'new-document', title: 'New' }), 403, 'FORBIDDEN');
  // the bound credential of another account's document is refused by the operator API (404)
  const cross = await s.req('/operator/v1/credentials', { method: 'POST', token: s.operatorKey, body: { label: 'x', scopes: ['document:read'], account: 'bob', documentRef: ref } });
  assertError(cross, 404, 'NOT_FOUND');
});

docs.run();

// ---------------------------------------------------------------------------------------------

const listing = suite<{ s: TestServer; token: string; refs: string[] }>('document list');

listing.before(async (ctx) => {
  // A clock that moves 1 ms per document: "newest first" must not depend on ties within a millisecond.
  const clock = manualClock();
  ctx.s = await startServer({ clock });
  ctx.token = (await ctx.s.credential({ account: 'lister', scopes: DOC_SCOPES })).token;
  ctx.refs = [];
  for (let i = 0; i < 52; i++) {
    clock.advance(1);
    ctx.refs.push((await create(ctx.s, ctx.token, `Doc ${i}`)).json.data.documentRef);
  }
});
listing.after(async (ctx) => {
  await ctx.s.close();
});

listing('limit 0 and 51 are 400; 1 and 50 pass; default 20; newest first; summaries without bodies', async ({ s, token, refs }) => {
  for (const bad of ['0', '51', '-1', 'ten', '1.5']) {
    const r = await s.req(`/api/v1/documents?limit=${bad}`, { token });
    assertError(r, 400, 'INVALID_REQUEST');
    assert.equal(r.json.error.fieldErrors.map((f: { field: string }) => f.field), ['query.limit']);
  }
  const one = await s.req('/api/v1/documents?limit=1', { token });
  assert.is(one.status, 200);
  conforms(DocumentPageEnvelopeSchema, one.json);
  assert.is(one.json.data.items.length, 1);
  assert.type(one.json.data.nextCursor, 'string');
  assert.is(one.json.data.items[0].documentRef, refs[51], 'newest updatedAt first');
  assert.not.ok('document' in one.json.data.items[0]);
  const fifty = await s.req('/api/v1/documents?limit=50', { token });
  assert.is(fifty.json.data.items.length, 50);
  const def = await s.req('/api/v1/documents', { token });
  assert.is(def.json.data.items.length, 20);
});

listing('cursors page through everything once; a cursor of another credential is 400', async ({ s, token, refs }) => {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const path: string = `/api/v1/documents?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const r: Reply = await s.req(path, { token });
    assert.is(r.status, 200);
    seen.push(...r.json.data.items.map((i: { documentRef: string }) => i.documentRef));
    cursor = r.json.data.nextCursor;
  } while (cursor);
  assert.is(seen.length, 52);
  assert.equal([...seen].sort(), [...refs].sort());
  const first = await s.req('/api/v1/documents?limit=5', { token });
  const other = await s.credential({ account: 'lister', scopes: ['document:read'] });
  const r = await s.req(`/api/v1/documents?cursor=${encodeURIComponent(first.json.data.nextCursor)}`, { token: other.token });
  assertError(r, 400, 'INVALID_REQUEST');
  assertError(await s.req('/api/v1/documents?cursor=%E0%A4%A', { token }), 400, 'INVALID_REQUEST');
});

listing.run();

// ---------------------------------------------------------------------------------------------

const limits = suite('response limit and the document page');

limits('a mutation that would make a document unreadable (over 2 MB) is refused with 409 and applies nothing', async () => {
  const s = await startServer();
  try {
    const token = (await s.credential({ scopes: DOC_SCOPES })).token;
    const created = await create(s, token, 'Huge');
    const ref = created.json.data.documentRef;
    let revision = String(created.headers['service-revision']);
    const text = 'lorem ipsum '.repeat(3400).slice(0, 40_000);
    for (let i = 0; i < 8; i++) {
      const r = await mutate(s, token, ref, revision, addParagraphs(text, text, text, text, text, text));
      assert.is(r.status, 200, r.text.slice(0, 300));
      revision = String(r.headers['service-revision']);
    }
    assert.is((await s.req(`/api/v1/documents/${ref}`, { token })).status, 200, 'just under 2 MB is readable');
    const crossing = await mutate(s, token, ref, revision, addParagraphs(text, text, text, text, text, text));
    assertError(crossing, 409, 'CONFLICT');
    assert.match(crossing.json.error.message, /2 MB.*nothing was applied/);
    assert.ok(crossing.text.length < 4096, 'nothing of the document is sent');
    for (const format of ['rich-json', 'blocks', 'markdown']) {
      const r = await s.req(`/api/v1/documents/${ref}?format=${format}`, { token });
      assert.is(r.status, 200, format);
      assert.is(r.headers['service-revision'], revision, 'the revision did not move');
    }
    const list = await s.req('/api/v1/documents', { token });
    assert.is(list.json.data.items[0].version, 9);
  } finally {
    await s.close();
  }
});

limits('GET /documents/{ref} answers 401 with an HTML note by default: the page is for the signed-in person', async () => {
  const s = await startServer();
  try {
    const token = (await s.credential({ scopes: DOC_SCOPES })).token;
    const ref = (await create(s, token, 'Private')).json.data.documentRef;
    const r = await s.req(`/documents/${ref}`);
    assert.is(r.status, 401);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.ok(r.text.includes('Sign-in required'));
    assert.not.ok(r.text.includes('Private'));
    assert.is((await s.req(`/documents/sdoc_${'3'.repeat(48)}`)).status, 401, 'no difference between existing and absent documents');
  } finally {
    await s.close();
  }
});

limits('with documentPages "open" (a local dev flag) GET /documents/{ref} renders a read-only HTML page, escaping content', async () => {
  const s = await startServer({ documentPages: 'open' });
  try {
    const token = (await s.credential({ scopes: DOC_SCOPES })).token;
    const created = await create(s, token, '<script>alert(1)</script> Title');
    const ref = created.json.data.documentRef;
    await mutate(s, token, ref, String(created.headers['service-revision']), {
      kind: 'create',
      beforeBlockId: null,
      parentBlockId: null,
      blocks: [
        { type: 'heading', level: 1, markdown: 'Heading <b>' },
        { type: 'codeBlock', code: 'if (a < b) {}', language: 'js' },
        { type: 'table', rows: [['a', 'b']] },
      ],
    });
    const r = await s.req(`/documents/${ref}`);
    assert.is(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.ok(r.headers['content-security-policy']);
    assert.not.ok(r.text.includes('<script>'));
    assert.ok(r.text.includes('&lt;script&gt;'));
    assert.ok(r.text.includes('Heading &lt;b&gt;'));
    assert.ok(r.text.includes('if (a &lt; b) {}'));
    assertError(await s.req(`/documents/sdoc_${'3'.repeat(48)}`), 404, 'NOT_FOUND');
    assertError(await s.req('/documents/nope'), 404, 'NOT_FOUND');
  } finally {
    await s.close();
  }
});

limits.run();
