import { Validator } from '@seriousme/openapi-schema-validator';
// ajv (draft 2020-12) is what @seriousme/openapi-schema-validator itself validates with; it is reused
// here, through that dependency, to check real response bodies against the published schemas.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createFetch } from '../../transports/inproc/index.ts';
import { SCOPES } from '../auth/scopes.ts';
import { Limits } from '../documents/schemas.ts';
import { createEngine } from '../engine.ts';
import { createApiHandler } from './handler.ts';
import { buildOpenApi } from './openapi.ts';
import { specBody } from '../jobs/jobs-kit.ts';

type Json = Record<string, any>;
const doc = buildOpenApi() as Json;

// ---------------------------------------------------------------------------------------------
// The document itself

test('the OpenAPI document is a valid OpenAPI 3.1 document', async () => {
  const result = await new Validator().validate(structuredClone(doc));
  assert.ok(result.valid, JSON.stringify(result.errors, null, 2));
  assert.match(doc.openapi, /^3\.1\./);
  assert.is(doc.info.title, 'knowledge-workspace');
  assert.is(doc.info.version, '1.0.0');
});

test('buildOpenApi builds once and hands out the same frozen object', () => {
  assert.is(buildOpenApi(), doc);
  assert.ok(Object.isFrozen(doc) && Object.isFrozen(doc.paths) && Object.isFrozen(doc.components.schemas.Block));
});

/** The contract's operation table (plus the library endpoint) with every status it lists. */
const CONTRACT: [method: string, path: string, statuses: number[]][] = [
  ['get', '/api/v1/auth', [200, 401, 403, 429, 503]],
  ['get', '/api/v1/documents', [200, 400, 401, 403, 429, 503]],
  ['post', '/api/v1/documents', [200, 201, 400, 401, 403, 409, 429, 503]],
  ['get', '/api/v1/documents/{documentRef}', [200, 304, 400, 401, 403, 404, 409, 429, 503]],
  ['post', '/api/v1/documents/{documentRef}/mutations', [200, 400, 401, 403, 404, 409, 412, 428, 429, 503]],
  ['get', '/api/v1/research-jobs', [200, 400, 401, 403, 429, 503]],
  ['post', '/api/v1/research-jobs', [202, 400, 401, 403, 404, 409, 410, 429, 503]],
  ['get', '/api/v1/research-jobs/{jobId}', [200, 304, 401, 403, 404, 429, 503]],
  ['get', '/api/v1/research-jobs/{jobId}/events', [200, 400, 401, 403, 404, 429, 503]],
  ['post', '/api/v1/research-jobs/{jobId}/cancellations', [200, 401, 403, 404, 409, 412, 428, 429, 503]],
  ['get', '/api/v1/research-jobs/{jobId}/report', [200, 304, 400, 401, 403, 404, 409, 429, 503]],
  ['post', '/api/v1/proposals', [400, 401, 403, 409, 429, 503]],
  ['get', '/api/v1/public/artifacts/{kind}/{artifactId}/{revision}', [200, 404]],
  ['get', '/api/v1/reviews/{reviewRef}', [401, 403, 429, 503]],
  ['post', '/api/v1/search', [400, 401, 403, 429, 503]],
  ['post', '/api/v1/library', [400, 401, 403, 429]],
];

test('every operation of the contract is published with every status the contract lists', () => {
  for (const [method, path, statuses] of CONTRACT) {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method.toUpperCase()} ${path} is published`);
    for (const status of statuses) assert.ok(op.responses[String(status)], `${method.toUpperCase()} ${path} lists ${status}`);
    for (const [status, response] of Object.entries<Json>(op.responses)) {
      const r = resolve(response);
      if (Number(status) >= 400) assert.equal(r.content?.['application/json']?.schema, { $ref: '#/components/schemas/ErrorEnvelope' }, `${path} ${status} uses the error envelope`);
    }
  }
  assert.not.ok(Object.keys(doc.paths).some((p) => p.startsWith('/operator')), 'the operator API is omitted');
});

test('request bodies are generated from the valibot schemas, with the recursive Block as a component', () => {
  const schemas = doc.components.schemas;
  assert.equal(doc.paths['/api/v1/documents'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/DocumentCreateRequest' });
  assert.equal(doc.paths['/api/v1/documents/{documentRef}/mutations'].post.requestBody.content['application/json'].schema, {
    $ref: '#/components/schemas/DocumentMutationRequest',
  });
  assert.is(schemas.DocumentCreateRequest.properties.title.maxLength, Limits.titleMax);
  assert.is(schemas.DocumentCreateRequest.additionalProperties, false);
  assert.equal(schemas.Block.properties.children.items, { $ref: '#/components/schemas/Block' });
  assert.is(schemas.Block.properties.markdown.maxLength, Limits.markdownMax);
  assert.is(schemas.Block.properties.rows.maxItems, Limits.tableRowsMax);
  assert.equal(schemas.Mutation.oneOf.map((m: Json) => m.properties.kind.const), ['create', 'edit', 'move', 'delete']);
  assert.equal(schemas.RichBlock.properties.children.items, { $ref: '#/components/schemas/RichBlock' });
});

test('headers, parameters and media types of the contract are described', () => {
  const p = doc.paths;
  const params = (op: Json) => op.parameters.map((x: Json) => resolve(x, 'parameters').name);
  assert.ok(params(p['/api/v1/documents/{documentRef}/mutations'].post).includes('Idempotency-Key'));
  assert.ok(params(p['/api/v1/documents/{documentRef}/mutations'].post).includes('Service-If-Revision'));
  assert.ok(params(p['/api/v1/documents/{documentRef}'].get).includes('If-None-Match'));
  assert.ok(params(p['/api/v1/documents'].get).includes('limit') && params(p['/api/v1/documents'].get).includes('cursor'));
  assert.ok(params(p['/api/v1/research-jobs/{jobId}/events'].get).includes('Last-Event-ID'));
  assert.ok(params(p['/api/v1/research-jobs/{jobId}/events'].get).includes('after'));
  assert.ok(params(p['/api/v1/auth'].get).includes('X-Request-Id'));
  const read = p['/api/v1/documents/{documentRef}'].get.responses['200'];
  assert.ok(read.content['text/markdown'] && read.content['application/json']);
  assert.ok(read.headers['Service-Revision'] && read.headers.ETag && read.headers['X-Service-Markdown-Loss-Count']);
  assert.ok(p['/api/v1/research-jobs/{jobId}/events'].get.responses['200'].content['text/event-stream']);
  assert.ok(resolve(p['/api/v1/auth'].get.responses['429']).headers['Retry-After']);
  assert.ok(resolve(p['/api/v1/auth'].get.responses['405']).headers.Allow);
  assert.ok(p['/api/v1/auth'].get.responses['200'].headers['X-Service-Requests-Remaining']);
  assert.equal(doc.components.securitySchemes.bearerAuth, { ...doc.components.securitySchemes.bearerAuth, type: 'http', scheme: 'bearer' });
  assert.equal(p['/api/v1/public/artifacts/{kind}/{artifactId}/{revision}'].get.security, []);
});

// ---------------------------------------------------------------------------------------------
// Real responses conform to the published schemas

const ajv = new Ajv2020({ strict: false, allErrors: true });
// OpenAPI's integer format (every integer of the document is a safe integer).
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
ajv.addSchema({ $id: 'kw:openapi', components: doc.components });

function resolve(node: Json, kind = 'responses'): Json {
  if (typeof node.$ref !== 'string') return node;
  const [, section, name] = /^#\/components\/([^/]+)\/(.+)$/.exec(node.$ref)!;
  assert.is(section, kind);
  return doc.components[section!][name!];
}

const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function validatorFor(schema: Json) {
  const key = JSON.stringify(schema);
  let fn = validators.get(key);
  if (!fn) {
    fn = ajv.compile(JSON.parse(key.replaceAll('"#/components/', '"kw:openapi#/components/')));
    validators.set(key, fn);
  }
  return fn;
}

let checked = 0;
/** Check a real response against what the document publishes for `method path` (or a shared response). */
async function conforms(method: string, path: string | null, response: Response, shared?: string): Promise<Json | string | null> {
  const declared = shared ? doc.components.responses[shared] : doc.paths[path!]?.[method]?.responses[String(response.status)];
  assert.ok(declared, `${method.toUpperCase()} ${path} publishes status ${response.status}`);
  const spec = resolve(declared);
  for (const [name, header] of Object.entries<Json>(spec.headers ?? {})) {
    if (resolve(header, 'headers').required) assert.ok(response.headers.has(name), `${path} ${response.status} carries ${name}`);
  }
  assert.match(response.headers.get('x-request-id') ?? '', /^[A-Za-z0-9][A-Za-z0-9_-]{15,127}$/);
  checked++;
  const text = await response.text();
  if (!spec.content) {
    assert.is(text, '', `${path} ${response.status} has no body`);
    return null;
  }
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const media = spec.content[type];
  assert.ok(media, `${path} ${response.status} publishes ${type}`);
  if (type !== 'application/json') return text;
  const body = JSON.parse(text);
  const validate = validatorFor(media.schema);
  assert.ok(validate(body), `${method.toUpperCase()} ${path} ${response.status}: ${JSON.stringify(validate.errors, null, 1)}\n${text.slice(0, 600)}`);
  return body;
}

const OPERATOR_KEY = 'operator-key-for-openapi-tests';

async function setup() {
  const engine = createEngine({ storage: memoryStorage(), baseUrl: 'http://kw.local' });
  const handler = createApiHandler({ engine, operatorKey: OPERATOR_KEY, log: () => undefined });
  const fetch = createFetch(handler);
  const { token } = await engine.credentials.create({ accountId: 'acme', label: 'Conformance', scopes: SCOPES });
  let n = 0;
  const key = () => `conformance-key-${String(++n).padStart(6, '0')}`;
  const call = (method: string, url: string, options: { token?: string | null; headers?: Record<string, string>; body?: unknown } = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const bearer = options.token === undefined ? token : options.token;
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    return fetch(`http://kw.local${url}`, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  };
  return { engine, token, key, call };
}

test('document operations answer as the OpenAPI document says', async () => {
  const { engine, key, call } = await setup();
  try {
    const D = '/api/v1/documents';
    const R = '/api/v1/documents/{documentRef}';
    const M = '/api/v1/documents/{documentRef}/mutations';

    const auth = (await conforms('get', '/api/v1/auth', await call('GET', '/api/v1/auth', { headers: { 'x-request-id': 'client-request-0001' } }))) as Json;
    assert.is(auth.meta.clientRequestId, 'client-request-0001');
    await conforms('get', '/api/v1/auth', await call('GET', '/api/v1/auth', { token: null }));
    await conforms('get', '/api/v1/auth', await call('GET', '/api/v1/auth', { headers: { 'x-request-id': 'short' } }));

    const createKey = key();
    const created = await call('POST', D, { headers: { 'idempotency-key': createKey }, body: { v: 1, title: 'Conformance' } });
    assert.is(created.status, 201);
    const revision0 = created.headers.get('service-revision')!;
    const doc1 = (await conforms('post', D, created)) as Json;
    const ref = doc1.data.documentRef as string;
    const replay = await call('POST', D, { headers: { 'idempotency-key': createKey }, body: { v: 1, title: 'Conformance' } });
    assert.is(replay.status, 200);
    await conforms('post', D, replay);
    const reused = await call('POST', D, { headers: { 'idempotency-key': createKey }, body: { v: 1, title: 'Other' } });
    assert.is(reused.status, 409);
    await conforms('post', D, reused);
    await conforms('post', D, await call('POST', D, { body: { v: 1, title: 'No key' } }));
    await conforms('post', D, await call('POST', D, { headers: { 'idempotency-key': key() }, body: { v: 1, title: '', extra: true } }));

    const blocks = [
      { type: 'heading', level: 2, markdown: 'Title' },
      { type: 'paragraph', markdown: 'See [the spec](https://spec.openapis.org/oas/v3.1.0).', children: [{ type: 'bulletListItem', markdown: 'nested' }] },
      { type: 'checkListItem', checked: true, markdown: 'done' },
      { type: 'codeBlock', language: 'ts', code: 'let x = 1;' },
      { type: 'table', rows: [['a', 'b'], ['1', '2']] },
    ];
    const mutation = { v: 1, intent: 'Write blocks', mutation: { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks } };
    const mutated = await call('POST', M.replace('{documentRef}', ref), {
      headers: { 'idempotency-key': key(), 'service-if-revision': revision0 },
      body: mutation,
    });
    assert.is(mutated.status, 200);
    const revision1 = mutated.headers.get('service-revision')!;
    const result = (await conforms('post', M, mutated)) as Json;
    assert.is(result.data.receipt.resultingVersion, 2);
    const path = M.replace('{documentRef}', ref);
    const stale = await call('POST', path, { headers: { 'idempotency-key': key(), 'service-if-revision': revision0 }, body: mutation });
    assert.is(stale.status, 412);
    await conforms('post', M, stale);
    const noRevision = await call('POST', path, { headers: { 'idempotency-key': key() }, body: mutation });
    assert.is(noRevision.status, 428);
    await conforms('post', M, noRevision);
    const conflict = await call('POST', path, {
      headers: { 'idempotency-key': key(), 'service-if-revision': revision1 },
      body: { v: 1, intent: 'Edit a block that is not there', mutation: { kind: 'edit', blockId: 'no-such-block', block: { type: 'paragraph', markdown: 'x' } } },
    });
    assert.ok([400, 404, 409].includes(conflict.status), String(conflict.status));
    await conforms('post', M, conflict);
    await conforms('post', M, await call('POST', path, { headers: { 'idempotency-key': key(), 'service-if-revision': revision1 }, body: { v: 1, intent: '' } }));
    const missingDoc = `sdoc_${'0'.repeat(48)}`;
    const gone = await call('POST', M.replace('{documentRef}', missingDoc), { headers: { 'idempotency-key': key(), 'service-if-revision': revision1 }, body: mutation });
    assert.is(gone.status, 404);
    await conforms('post', M, gone);

    const docPath = R.replace('{documentRef}', ref);
    const rich = await call('GET', docPath);
    const etag = rich.headers.get('etag')!;
    const richBody = (await conforms('get', R, rich)) as Json;
    assert.is(richBody.data.version, 2);
    const flat = (await conforms('get', R, await call('GET', `${docPath}?format=blocks`))) as Json;
    assert.is(flat.data.blocks.length, 6);
    const md = await call('GET', `${docPath}?format=markdown`);
    assert.match(md.headers.get('x-service-markdown-loss-count') ?? '', /^\d+$/);
    assert.match((await conforms('get', R, md)) as string, /## Title/);
    const notModified = await call('GET', docPath, { headers: { 'if-none-match': etag } });
    assert.is(notModified.status, 304);
    await conforms('get', R, notModified);
    await conforms('get', R, await call('GET', `${docPath}?format=pdf`));
    await conforms('get', R, await call('GET', R.replace('{documentRef}', missingDoc)));

    const list = (await conforms('get', D, await call('GET', `${D}?limit=1`))) as Json;
    assert.is(list.data.items.length, 1);
    await conforms('get', D, await call('GET', `${D}?cursor=not-a-cursor`));
    await conforms('get', D, await call('GET', `${D}?limit=0`));

    await conforms('delete', null, await call('DELETE', '/api/v1/auth'), 'MethodNotAllowed');
    const unknown = await call('GET', '/api/v1/no-such-thing');
    assert.is(unknown.status, 404);
    assert.ok(validatorFor({ $ref: '#/components/schemas/ErrorEnvelope' })(await unknown.json()));
  } finally {
    await engine.close();
  }
});

test('boundaries, scopes and budgets answer as the OpenAPI document says', async () => {
  const { engine, key, call } = await setup();
  try {
    const created = (await (await call('POST', '/api/v1/documents', { headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Bound' } })).json()) as Json;
    const ref = created.data.documentRef as string;
    const bound = await engine.credentials.create({ accountId: 'acme', label: 'Bound', scopes: ['document:read', 'document:create'], documentRef: ref });
    const forbidden = await call('POST', '/api/v1/documents', { token: bound.token, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Nope' } });
    assert.is(forbidden.status, 403);
    await conforms('post', '/api/v1/documents', forbidden);
    const boundAuth = (await conforms('get', '/api/v1/auth', await call('GET', '/api/v1/auth', { token: bound.token }))) as Json;
    assert.is(boundAuth.data.documentRef, ref);
    const noScope = await call('POST', `/api/v1/documents/${ref}/mutations`, { token: bound.token, headers: { 'idempotency-key': key(), 'service-if-revision': 'x' }, body: {} });
    assert.is(noScope.status, 403);
    await conforms('post', '/api/v1/documents/{documentRef}/mutations', noScope);

    const tiny = await engine.credentials.create({ accountId: 'acme', label: 'Tiny', scopes: ['document:read'], requestBudget: 1 });
    assert.is((await call('GET', '/api/v1/auth', { token: tiny.token })).status, 200);
    const limited = await call('GET', '/api/v1/auth', { token: tiny.token });
    assert.is(limited.status, 429);
    assert.ok(limited.headers.get('retry-after'));
    await conforms('get', '/api/v1/auth', limited);
  } finally {
    await engine.close();
  }
});

test('research, proposal, public, review, search and library operations answer as published', async () => {
  const { engine, key, call } = await setup();
  checked = 0;
  try {
    const job = `kjob_${'a'.repeat(48)}`;
    const spec = specBody({ question: 'What is an OpenAPI document?', spaceRef: { kind: 'new-document', title: 'Research' } });
    const started = await call('POST', '/api/v1/research-jobs', { headers: { 'idempotency-key': key() }, body: spec });
    assert.is(started.status, 410);
    await conforms('post', '/api/v1/research-jobs', started);
    await conforms('post', '/api/v1/research-jobs', await call('POST', '/api/v1/research-jobs', { headers: { 'idempotency-key': key() }, body: { v: 1 } }));
    await conforms('get', '/api/v1/research-jobs', await call('GET', '/api/v1/research-jobs'));
    await conforms('get', '/api/v1/research-jobs/{jobId}', await call('GET', `/api/v1/research-jobs/${job}`));
    await conforms('get', '/api/v1/research-jobs/{jobId}/events', await call('GET', `/api/v1/research-jobs/${job}/events`));
    await conforms('get', '/api/v1/research-jobs/{jobId}/report', await call('GET', `/api/v1/research-jobs/${job}/report?format=markdown`));
    await conforms(
      'post',
      '/api/v1/research-jobs/{jobId}/cancellations',
      await call('POST', `/api/v1/research-jobs/${job}/cancellations`, { headers: { 'idempotency-key': key(), 'service-if-revision': 'r' }, body: { v: 1 } }),
    );

    const proposal = { v: 2, entities: [], facts: [], evidence: [], inquiries: [] };
    const blocked = await call('POST', '/api/v1/proposals', { headers: { 'idempotency-key': key() }, body: proposal });
    assert.is(blocked.status, 409);
    assert.is(((await conforms('post', '/api/v1/proposals', blocked)) as Json).error.code, 'AGENT_RUN_REQUIRED');
    await conforms('post', '/api/v1/proposals', await call('POST', '/api/v1/proposals', { headers: { 'idempotency-key': key() }, body: { v: 1 } }));

    const A = '/api/v1/public/artifacts/{kind}/{artifactId}/{revision}';
    const missing = await call('GET', `/api/v1/public/artifacts/entity/kent_${'a'.repeat(24)}/${'0'.repeat(64)}`, { token: null });
    assert.is(missing.status, 404);
    await conforms('get', A, missing);
    await conforms('get', A, await call('GET', `/api/v1/public/artifacts/entity/kinq_${'a'.repeat(24)}/xyz`, { token: null }));

    const review = await call('GET', `/api/v1/reviews/krvw_${'b'.repeat(48)}`);
    assert.is(review.status, 503);
    await conforms('get', '/api/v1/reviews/{reviewRef}', review);
    await conforms('post', '/api/v1/search', await call('POST', '/api/v1/search', { body: { scope: { kind: 'public' } } }));
    await conforms(
      'post',
      '/api/v1/library',
      await call('POST', '/api/v1/library', { body: { type: 'save-link', url: 'https://example.com/', idempotencyKey: 'library-key-000001' } }),
    );

    const served = await call('GET', '/openapi.json', { token: null });
    assert.is(served.status, 200);
    assert.equal(await served.json(), JSON.parse(JSON.stringify(doc)));
    assert.ok(checked >= 14, `checked ${checked} responses`);
  } finally {
    await engine.close();
  }
});

test.run();
