/**
 * The typed client over the in-process fetch and over node:http: typed calls, idempotency keys,
 * retries only where the contract allows them (with a fault-injecting fetch), the 412 re-plan loop,
 * and the error class.
 */
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { contractOperations } from '../contract/operations.ts';
import { createApiHandler } from '../api/handler.ts';
import { createEngine } from '../engine.ts';
import { createFetch } from '../../transports/inproc/index.ts';
import { listen } from '../../transports/http/index.ts';
import { createClient, isApiClientError, type ApiClientError, type ClientOptions, type OperationId } from './index.ts';

const baseUrl = 'http://kw.local';

async function service() {
  const operatorKey = randomBytes(32).toString('base64url');
  const engine = createEngine({ storage: memoryStorage(), baseUrl });
  const handler = createApiHandler({ engine, operatorKey, log: () => undefined });
  const fetch = createFetch(handler);
  const res = await fetch(`${baseUrl}/operator/v1/credentials`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: 'client tests', scopes: ['document:create', 'document:read', 'document:write', 'research:read', 'library:write'] }),
  });
  const token = ((await res.json()) as { data: { token: string } }).data.token;
  return { engine, handler, fetch, token, close: () => engine.close() };
}

/** A fetch that records every request and lets a test replace answers. */
function faulty(inner: typeof fetch, fault: (n: number, request: Request) => Promise<Response | 'throw' | 'lose' | null>) {
  const seen: { method: string; path: string; key: string | null }[] = [];
  const wrapped = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    seen.push({ method: request.method, path: new URL(request.url).pathname, key: request.headers.get('idempotency-key') });
    const action = await fault(seen.length, request.clone());
    if (action === 'throw') throw new TypeError('fetch failed (injected)');
    if (action === 'lose') {
      await (await inner(request)).arrayBuffer(); // the server handled it; the answer is lost on the way
      throw new TypeError('socket hang up (injected)');
    }
    return action ?? inner(request);
  }) as typeof fetch;
  return { fetch: wrapped, seen };
}

const unavailable = (retryAfterMs: number, status = 503) =>
  new Response(
    JSON.stringify({
      error: { code: status === 429 ? 'RATE_LIMITED' : status === 500 ? 'INTERNAL_ERROR' : 'TEMPORARILY_UNAVAILABLE', message: 'injected', retryable: true, retryAfterMs },
      meta: { apiVersion: '1', requestId: 'req_injected_0000000000000000' },
    }),
    { status, headers: { 'content-type': 'application/json', 'retry-after': String(Math.ceil(retryAfterMs / 1000)) } },
  );

const fast: Partial<ClientOptions['retry']> = { shortDelayMs: 1 };

async function rejection(p: Promise<unknown>): Promise<ApiClientError> {
  try {
    await p;
  } catch (e) {
    if (isApiClientError(e)) return e;
    throw e;
  }
  throw new Error('expected an ApiClientError');
}

test('the client has one method per public operation of the contract, and nothing else', () => {
  const publicIds = contractOperations.filter((op) => op.audience === 'public').map((op) => op.operationId);
  const client = createClient({ baseUrl }) as unknown as Record<string, unknown>;
  assert.equal(Object.keys(client).sort(), [...publicIds, 'jobEvents', 'mutateWithReplan'].sort());
  for (const id of publicIds) assert.type(client[id], 'function', id);
  // The type side: every public operationId is a key of the Client type, and no operator one is.
  const ids: OperationId[] = ['getAuth', 'createDocument', 'getOpenApi', 'putLibraryUpload'];
  // @ts-expect-error: operator operations are not on the client
  const operator: OperationId = 'createCredential';
  assert.ok(ids.length && operator);
});

test('a success body outside the contract’s 2xx schema is INVALID_RESPONSE when responses are validated', async () => {
  const bogus = (async () => new Response(JSON.stringify({ data: { nope: true }, meta: { apiVersion: '1', requestId: 'req_0123456789abcdef01234567' } }), { status: 200, headers: { 'content-type': 'application/json' } })) as typeof fetch;
  const e = await rejection(createClient({ baseUrl, token: 't', fetch: bogus, validateResponses: true }).getAuth());
  assert.is(e.code, 'INVALID_RESPONSE');
  const loose = await createClient({ baseUrl, token: 't', fetch: bogus }).getAuth();
  assert.is(loose.status, 200);
});

test('inputs and results are typed from the registry schemas (checked by npm run typecheck)', () => {
  const client = createClient({ baseUrl });
  // Never called: these lines exist for the type checker. Each @ts-expect-error fails the typecheck
  // if the client's types stopped rejecting the input, i.e. if they decayed to `any`.
  const typeChecks = async () => {
    // @ts-expect-error: title must be a string
    await client.createDocument({ body: { v: 1, title: 3 } });
    // @ts-expect-error: the body needs v: 1
    await client.createDocument({ body: { v: 2, title: 'x' } });
    // @ts-expect-error: documentRef is a required path parameter
    await client.getDocument({ query: { format: 'blocks' } });
    // @ts-expect-error: a mutation kind outside the four
    await client.mutateDocument({ path: { documentRef: 'sdoc_x' }, body: { v: 1, intent: 'x', mutation: { kind: 'rename' } } });
    // @ts-expect-error: getDocument has no such header
    await client.getDocument({ path: { documentRef: 'sdoc_x' }, headers: { ifRevision: 'r' } });
    const created = await client.createDocument({ body: { v: 1, title: 'typed' } });
    const title: string = created.body!.data.title;
    // @ts-expect-error: the result's data has no such field
    void created.body!.data.noSuchField;
    const page = await client.listDocuments();
    const refs: string[] = page.body!.data.items.map((item) => item.documentRef);
    return [title, refs];
  };
  assert.type(typeChecks, 'function');
});

test('typed calls over the in-process fetch: create, read in two formats, mutate, replay with the same key', async () => {
  const s = await service();
  try {
    const client = createClient({ baseUrl, token: s.token, fetch: s.fetch, validateResponses: true });
    const created = await client.createDocument({ body: { v: 1, title: 'Client notes' } });
    assert.is(created.status, 201);
    const doc = created.body!.data;
    assert.is(doc.title, 'Client notes');
    assert.match(created.idempotencyKey!, /^[A-Za-z0-9_-]{16,128}$/);
    const replay = await client.createDocument({ body: { v: 1, title: 'Client notes' }, idempotencyKey: created.idempotencyKey! });
    assert.is(replay.status, 200);
    assert.is(replay.body!.receipt!.idempotency, 'replayed');

    const revision = created.headers.get('service-revision')!;
    const mutated = await client.mutateDocument({
      path: { documentRef: doc.documentRef },
      headers: { ifRevision: revision },
      body: { v: 1, intent: 'add a line', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: 'Hello **world**' }] } },
    });
    assert.is(mutated.body!.data.receipt.affectedBlockIds.length, 1);
    const md = await client.getDocument({ path: { documentRef: doc.documentRef }, query: { format: 'markdown' } });
    assert.is(md.body, null);
    assert.match(md.text, /Hello \*\*world\*\*/);
    const etag = md.headers.get('etag')!;
    const notModified = await client.getDocument({ path: { documentRef: doc.documentRef }, query: { format: 'markdown' }, headers: { ifNoneMatch: etag } });
    assert.is(notModified.status, 304);
    const page = await client.listDocuments({ query: { limit: 5 } });
    assert.is(page.body!.data.items.length, 1);
  } finally {
    await s.close();
  }
});

test('error answers throw ApiClientError with the contract fields, and 4xx are never retried', async () => {
  const s = await service();
  try {
    const f = faulty(s.fetch, async () => null);
    const client = createClient({ baseUrl, token: s.token, fetch: f.fetch, retry: fast });
    const bad = await rejection(client.createDocument({ body: { v: 1, title: '' } }, { headers: { 'x-request-id': 'my-request-id-000001' } }));
    assert.is(bad.status, 400);
    assert.is(bad.code, 'INVALID_REQUEST');
    assert.ok(bad.fieldErrors.some((fe) => fe.field === 'title'));
    assert.is(bad.clientRequestId, 'my-request-id-000001');
    assert.match(bad.requestId!, /^req_/);
    assert.is(bad.attempts, 1);
    const missing = await rejection(client.getDocument({ path: { documentRef: `sdoc_${'0'.repeat(48)}` } }));
    assert.is(missing.code, 'NOT_FOUND');
    const anonymous = await rejection(createClient({ baseUrl, fetch: f.fetch, retry: fast }).getAuth());
    assert.is(anonymous.code, 'AUTH_REQUIRED');
    assert.is(anonymous.requiredAction, 'authenticate');
    const key = 'conformance-key-client-01';
    await client.createDocument({ body: { v: 1, title: 'First' }, idempotencyKey: key });
    const conflict = await rejection(client.createDocument({ body: { v: 1, title: 'Second' }, idempotencyKey: key }));
    assert.is(conflict.status, 409);
    assert.is(conflict.code, 'IDEMPOTENCY_CONFLICT');
    assert.is(conflict.attempts, 1);
    assert.is(f.seen.length, 5, 'one request per call: no 4xx is retried');
  } finally {
    await s.close();
  }
});

test('503 and 429 are retried after Retry-After with the same idempotency key; the write happens once', async () => {
  const s = await service();
  try {
    const f = faulty(s.fetch, async (n) => (n === 1 ? unavailable(20) : n === 2 ? unavailable(10, 429) : null));
    const client = createClient({ baseUrl, token: s.token, fetch: f.fetch, retry: fast });
    const started = Date.now();
    const created = await client.createDocument({ body: { v: 1, title: 'Retried' } });
    assert.ok(Date.now() - started >= 30, 'waited for retryAfterMs');
    assert.is(created.status, 201);
    assert.is(created.attempts, 3);
    assert.is(new Set(f.seen.map((r) => r.key)).size, 1, 'one key for the whole intent');
    const next = await client.createDocument({ body: { v: 1, title: 'Retried' } });
    assert.is(next.status, 201, 'a new call is a new intent with a new key');
    assert.is.not(next.idempotencyKey, created.idempotencyKey);
  } finally {
    await s.close();
  }
});

test('a Retry-After beyond maxDelayMs is not waited for; retries stop at maxAttempts', async () => {
  const s = await service();
  try {
    const long = faulty(s.fetch, async () => unavailable(300_000));
    const e1 = await rejection(createClient({ baseUrl, token: s.token, fetch: long.fetch, retry: fast }).getAuth());
    assert.is(e1.code, 'TEMPORARILY_UNAVAILABLE');
    assert.is(e1.retryAfterMs, 300_000);
    assert.is(long.seen.length, 1);
    const always = faulty(s.fetch, async () => unavailable(1));
    const e2 = await rejection(createClient({ baseUrl, token: s.token, fetch: always.fetch, retry: { ...fast, maxAttempts: 3 } }).getAuth());
    assert.is(e2.attempts, 3);
    assert.is(always.seen.length, 3);
  } finally {
    await s.close();
  }
});

test('a lost answer is retried once with the same key (the server replays); a second network failure is thrown', async () => {
  const s = await service();
  try {
    const f = faulty(s.fetch, async (n) => (n === 1 ? 'lose' : null));
    const client = createClient({ baseUrl, token: s.token, fetch: f.fetch, retry: fast });
    const created = await client.createDocument({ body: { v: 1, title: 'Lost once' } });
    assert.is(created.status, 200, 'the retry replays the write the server already made');
    assert.is(created.body!.receipt!.idempotency, 'replayed');
    assert.is(f.seen[0]!.key, f.seen[1]!.key);
    const page = await client.listDocuments();
    assert.is(page.body!.data.items.length, 1, 'one document, not two');

    const down = faulty(s.fetch, async () => 'throw');
    const e = await rejection(createClient({ baseUrl, token: s.token, fetch: down.fetch, retry: fast }).getAuth());
    assert.is(e.code, 'NETWORK_ERROR');
    assert.is(e.status, 0);
    assert.is(down.seen.length, 2);
    assert.instance(e.cause, TypeError);
  } finally {
    await s.close();
  }
});

test('500 INTERNAL_ERROR is retried once with the same key, then thrown', async () => {
  const s = await service();
  try {
    const f = faulty(s.fetch, async () => unavailable(0, 500));
    const e = await rejection(createClient({ baseUrl, token: s.token, fetch: f.fetch, retry: fast }).createDocument({ body: { v: 1, title: 'x' } }));
    assert.is(e.code, 'INTERNAL_ERROR');
    assert.is(f.seen.length, 2);
    assert.is(f.seen[0]!.key, f.seen[1]!.key);
  } finally {
    await s.close();
  }
});

test('read, plan, mutate: a 412 re-reads and re-plans with a new key; the loop is bounded', async () => {
  const s = await service();
  try {
    const client = createClient({ baseUrl, token: s.token, fetch: s.fetch, retry: fast });
    const other = createClient({ baseUrl, token: s.token, fetch: s.fetch });
    const ref = (await client.createDocument({ body: { v: 1, title: 'Replan' } })).body!.data.documentRef;
    const append = (markdown: string) => ({ v: 1 as const, intent: markdown, mutation: { kind: 'create' as const, parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph' as const, markdown }] } });
    const seenRevisions: string[] = [];
    const outcome = await client.mutateWithReplan(ref, async (snapshot, attempt) => {
      seenRevisions.push(snapshot.revision);
      // Another writer moves the document between the first read and its mutation.
      if (attempt === 1) await other.mutateDocument({ path: { documentRef: ref }, headers: { ifRevision: snapshot.revision }, body: append('from the other writer') });
      const blocks = (snapshot.data as { blocks: unknown[] }).blocks;
      return append(`mine, planned over ${blocks.length} blocks`);
    });
    assert.ok(outcome.applied);
    assert.is(outcome.attempts, 2);
    assert.is.not(seenRevisions[0], seenRevisions[1]);
    const md = await client.getDocument({ path: { documentRef: ref }, query: { format: 'markdown' } });
    assert.match(md.text, /from the other writer\n\nmine, planned over 1 blocks/);

    let plans = 0;
    const stale = await rejection(
      client.mutateWithReplan(
        ref,
        async (snapshot) => {
          plans++;
          await other.mutateDocument({ path: { documentRef: ref }, headers: { ifRevision: snapshot.revision }, body: append(`race ${plans}`) });
          return append('never lands');
        },
        { maxAttempts: 2 },
      ),
    );
    assert.is(stale.status, 412);
    assert.is(plans, 2);
    const done = await client.mutateWithReplan(ref, () => null);
    assert.is(done.applied, false);
  } finally {
    await s.close();
  }
});

test('raw-bytes operations: an upload is sent as application/octet-stream', async () => {
  const s = await service();
  try {
    const client = createClient({ baseUrl, token: s.token, fetch: s.fetch });
    const html = new TextEncoder().encode('<html><body><p>saved</p></body></html>');
    const prepared = await client.libraryCommand({ body: { type: 'prepare-upload', fileName: 'saved.html', contentType: 'text/html', byteLength: html.byteLength, idempotencyKey: 'client-upload-key-0001' } });
    const uploadId = JSON.stringify(prepared.body!.data).match(/"uploadId":"([^"]+)"/)![1]!;
    const put = await client.putLibraryUpload({ path: { uploadId }, bytes: html });
    assert.is(put.status, 200);
    assert.match(JSON.stringify(put.body!.data), new RegExp(String(html.byteLength)));
  } finally {
    await s.close();
  }
});

test('the same client works over node:http', async () => {
  const s = await service();
  const server = await listen(s.handler, { port: 0 });
  try {
    const client = createClient({ baseUrl: server.url, token: s.token, validateResponses: true });
    const principal = await client.getAuth();
    assert.ok(principal.body!.data.scopes.includes('document:read'));
    const created = await client.createDocument({ body: { v: 1, title: 'Over a socket' } });
    assert.is(created.status, 201);
    const e = await rejection(client.getResearchJob({ path: { jobId: `kjob_${'a'.repeat(48)}` } }));
    assert.is(e.code, 'NOT_FOUND');
  } finally {
    await server.close();
    await s.close();
  }
});

test.run();
