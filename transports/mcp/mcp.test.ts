/**
 * The MCP server, driven by the SDK's own client: over an in-memory transport pair, over stdio
 * streams, and over streamable HTTP mounted at /mcp next to the API.
 */
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import { contractOperations } from '../../src/contract/operations.ts';
import { createEngine } from '../../src/engine.ts';
import { createFetch } from '../inproc/index.ts';
import { listen } from '../http/index.ts';
import { createMcpServer, mountMcp, runMcpStdio } from './index.ts';


async function service() {
  const operatorKey = randomBytes(32).toString('base64url');
  const engine = createEngine({ storage: memoryStorage() });
  const handler = createApiHandler({ engine, operatorKey, log: () => undefined });
  const fetch = createFetch(handler);
  const token = async (scopes: string[], requestBudget = 10_000) => {
    const res = await fetch('http://kw.local/operator/v1/credentials', {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'mcp', scopes, requestBudget }),
    });
    return ((await res.json()) as { data: { token: string } }).data.token;
  };
  const api = (method: string, path: string, tok: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`http://kw.local${path}`, {
      method,
      headers: { authorization: `Bearer ${tok}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  return { engine, handler, token, api };
}

const ALL = ['document:create', 'document:read', 'document:write', 'research:read', 'research:run', 'library:read', 'library:write'];

async function connected(handler: ReturnType<typeof createApiHandler>, token: string) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer({ handler, token });
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({ name, arguments: args })) as any;
    return { isError: r.isError as boolean, s: r.structuredContent as any, content: r.content as { type: string; text: string }[] };
  };
  return { client, call, close: () => client.close() };
}

const para = (markdown: string) => ({ type: 'paragraph', markdown });

/**
 * A document with blocks A and B made through the session, then changed by another writer behind
 * its back (`other` gets A's and B's ids): the session's remembered revision is stale.
 */
async function raced(s: Awaited<ReturnType<typeof service>>, c: Awaited<ReturnType<typeof connected>>, tok: string, other: (a: string, b: string) => unknown, key = 'other-writer-key-0001') {
  const ref = (await c.call('createDocument', { body: { v: 1, title: 'Race' } })).s.body.data.documentRef as string;
  const made = await c.call('mutateDocument', { documentRef: ref, body: { v: 1, intent: 'two', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [para('A'), para('B')] } } });
  const [a, b] = made.s.body.data.receipt.affectedBlockIds as [string, string];
  const changed = await otherWriter(s, tok, ref, other(a, b), key);
  return { ref, a, b, current: changed.headers.get('service-revision')! };
}

/** Another writer's mutation of `ref`, against its current revision. */
async function otherWriter(s: Awaited<ReturnType<typeof service>>, tok: string, ref: string, mutation: unknown, key: string) {
  const head = await s.api('GET', `/api/v1/documents/${ref}`, tok);
  const res = await s.api('POST', `/api/v1/documents/${ref}/mutations`, tok, { v: 1, intent: 'other', mutation }, { 'idempotency-key': key, 'service-if-revision': head.headers.get('service-revision')! });
  assert.is(res.status, 200);
  return res;
}

test('tools are generated from the public operations, with the published schemas', async () => {
  const s = await service();
  const c = await connected(s.handler, await s.token(ALL));
  try {
    const { tools } = await c.client.listTools();
    const expected = contractOperations.filter((op) => op.audience === 'public' && op.operationId !== 'getOpenApi').map((op) => op.operationId);
    assert.equal(tools.map((t) => t.name).sort(), [...expected, 'saveLink'].sort(), 'every public operation, and the agent-tool form of save-link');
    const mutate = tools.find((t) => t.name === 'mutateDocument')!;
    assert.equal((mutate.inputSchema.required as string[]).sort(), ['body', 'documentRef']);
    assert.ok((mutate.inputSchema as any).$defs.Mutation, 'body schemas travel with their definitions');
    assert.is(tools.find((t) => t.name === 'getDocument')!.annotations?.readOnlyHint, true);
    const { resourceTemplates } = await c.client.listResourceTemplates();
    assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'kw://api/v1/documents/{documentRef}{?format}'));
  } finally {
    await c.close();
    await s.engine.close();
  }
});

test('documents through tools: create, read each representation, mutate with kept revision and key, exact retry replays', async () => {
  const s = await service();
  const c = await connected(s.handler, await s.token(ALL));
  try {
    const created = await c.call('createDocument', { body: { v: 1, title: 'MCP notes' } });
    assert.is(created.s.status, 201);
    const ref = created.s.body.data.documentRef;
    const again = await c.call('createDocument', { body: { v: 1, title: 'MCP notes' } });
    assert.is(again.s.status, 200, 'an identical call is a retry of the same intent');
    assert.is(again.s.body.data.documentRef, ref);

    const args = { documentRef: ref, body: { v: 1, intent: 'first line', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [para('Hello')] } } };
    const m1 = await c.call('mutateDocument', args);
    assert.is(m1.s.status, 200, JSON.stringify(m1.s));
    assert.is(m1.s.sentRevision, created.s.headers['service-revision'], 'the revision of the last write was kept');
    const retry = await c.call('mutateDocument', args);
    assert.is(retry.s.status, 200);
    assert.is(retry.s.body.receipt.idempotency, 'replayed');
    assert.is(retry.s.idempotencyKey, m1.s.idempotencyKey);

    const blocks = await c.call('getDocument', { documentRef: ref, format: 'blocks' });
    assert.equal(blocks.s.body.data.blocks.map((b: any) => b.markdown), ['Hello']);
    const rich = await c.call('getDocument', { documentRef: ref });
    assert.is(rich.s.body.data.document.blocks.length, 1);
    const md = await c.call('getDocument', { documentRef: ref, format: 'markdown' });
    assert.is(md.content[1]!.text.trim(), 'Hello');
    assert.is(md.s.headers['x-service-markdown-loss-count'], '0');
    const bad = await c.call('getDocument', { documentRef: ref, format: 'pdf' });
    assert.ok(bad.isError);
    assert.is(bad.s.body.error.code, 'INVALID_REQUEST');
    const unknown = await c.call('getDocument', { documentRef: ref, colour: 'red' });
    assert.ok(unknown.isError);
    assert.match(unknown.s.error.message, /unknown argument colour/);
  } finally {
    await c.close();
    await s.engine.close();
  }
});

test('mutateDocument keeps the guards: a stale revision is PRECONDITION_FAILED with the current revision, and a stale delete removes nothing', async () => {
  const s = await service();
  const tok = await s.token(ALL);
  const c = await connected(s.handler, tok);
  try {
    const { ref, a, b, current } = await raced(s, c, tok, (_a, b) => ({ kind: 'edit', blockId: b, block: para('B, edited elsewhere') }));
    const stale = await c.call('mutateDocument', { documentRef: ref, body: { v: 1, intent: 'delete A', mutation: { kind: 'delete', blockIds: [a] } } });
    assert.ok(stale.isError);
    assert.is(stale.s.status, 412);
    assert.is(stale.s.error.code, 'PRECONDITION_FAILED');
    assert.is(stale.s.body.error.code, 'PRECONDITION_FAILED', "the API's own answer travels with it");
    assert.is(stale.s.currentRevision, current);
    assert.match(stale.s.whatToDo, /ifRevision=/);
    assert.is(stale.s.attempts, 1, 'nothing was sent again');
    const after = await s.api('GET', `/api/v1/documents/${ref}?format=blocks`, tok);
    assert.equal(((await after.json()) as any).data.blocks.map((x: any) => x.id), [a, b], 'the stale delete removed nothing');

    const resent = await c.call('mutateDocument', { documentRef: ref, ifRevision: stale.s.currentRevision, body: { v: 1, intent: 'delete A', mutation: { kind: 'delete', blockIds: [a] } } });
    assert.is(resent.s.status, 200, JSON.stringify(resent.s));
  } finally {
    await c.close();
    await s.engine.close();
  }
});

test('mutateDocument without a revision given or remembered is PRECONDITION_REQUIRED and sends nothing', async () => {
  const s = await service();
  const tok = await s.token(ALL);
  const c = await connected(s.handler, tok);
  try {
    const created = await s.api('POST', '/api/v1/documents', tok, { v: 1, title: 'Never read here' }, { 'idempotency-key': 'create-unread-doc-0001' });
    const ref = ((await created.json()) as any).data.documentRef as string;
    const blind = await c.call('mutateDocument', { documentRef: ref, body: { v: 1, intent: 'blind', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [para('X')] } } });
    assert.ok(blind.isError);
    assert.is(blind.s.status, 428);
    assert.is(blind.s.error.code, 'PRECONDITION_REQUIRED');
    assert.is(blind.s.currentRevision, created.headers.get('service-revision'));
    const doc = await s.api('GET', `/api/v1/documents/${ref}?format=blocks`, tok);
    assert.equal(((await doc.json()) as any).data.blocks, [], 'nothing was written');
    const again = await c.call('mutateDocument', { documentRef: ref, body: { v: 1, intent: 'blind', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [para('X')] } } });
    assert.is(again.s.error.code, 'PRECONDITION_REQUIRED', 'the current revision it was told is not taken as read');
    const bad = await c.call('mutateDocument', { documentRef: ref, replan: 'yes', body: { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: ['b'] } } });
    assert.ok(bad.isError);
    assert.match(bad.s.error.message, /replan must be true or false/);
  } finally {
    await c.close();
    await s.engine.close();
  }
});

test('replan=true: a 412 re-reads and sends again when the named blocks still exist; otherwise it reports what is missing', async () => {
  const s = await service();
  const tok = await s.token(ALL);
  const c = await connected(s.handler, tok);
  try {
    const { ref, a } = await raced(s, c, tok, (_a, b) => ({ kind: 'delete', blockIds: [b] }));
    const edit = await c.call('mutateDocument', { documentRef: ref, replan: true, body: { v: 1, intent: 'edit A', mutation: { kind: 'edit', blockId: a, block: para('A, edited') } } });
    assert.is(edit.s.status, 200, JSON.stringify(edit.s));
    assert.is(edit.s.attempts, 2);
    assert.is(edit.s.replannedAfter412.length, 1);

    await otherWriter(s, tok, ref, { kind: 'delete', blockIds: [a] }, 'other-writer-key-0002');
    const gone = await c.call('mutateDocument', { documentRef: ref, replan: true, body: { v: 1, intent: 'edit A again', mutation: { kind: 'edit', blockId: a, block: para('A?') } } });
    assert.ok(gone.isError);
    assert.is(gone.s.status, 412);
    assert.is(gone.s.error.code, 'PRECONDITION_FAILED');
    assert.equal(gone.s.missingBlockIds, [a]);
    assert.ok(gone.s.currentRevision);
  } finally {
    await c.close();
    await s.engine.close();
  }
});

test('calls carry the token: scopes are enforced and the budget is charged', async () => {
  const s = await service();
  const c = await connected(s.handler, await s.token(['document:read', 'document:create'], 5));
  try {
    const ref = (await c.call('createDocument', { body: { v: 1, title: 'Read only' } })).s.body.data.documentRef;
    const denied = await c.call('mutateDocument', { documentRef: ref, ifRevision: 'x', body: { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: ['b1'] } } });
    assert.ok(denied.isError);
    assert.is(denied.s.body.error.code, 'FORBIDDEN');
    const auth = await c.call('getAuth');
    assert.is(auth.s.body.data.remainingBudget, 3, 'create and this read were charged; the refused mutation was not');
    for (let i = 0; i < 3; i++) await c.call('getAuth');
    const spent = await c.call('getAuth');
    assert.is(spent.s.status, 429);
    assert.ok(spent.s.headers['retry-after']);
  } finally {
    await c.close();
    await s.engine.close();
  }
});

test('jobs, reports and library commands reach the API (its current answers)', async () => {
  const s = await service();
  const c = await connected(s.handler, await s.token(ALL));
  try {
    const jobId = `kjob_${'c'.repeat(48)}`;
    const follow = await c.call('listResearchJobEvents', { jobId });
    assert.is(follow.s.body.error.code, 'NOT_FOUND');
    const cancel = await c.call('cancelResearchJob', { jobId, body: { v: 1 } });
    assert.is(cancel.s.body.error.code, 'NOT_FOUND');
    assert.match(cancel.s.note, /reading the job/);
    const report = await c.call('getResearchJobReport', { jobId, format: 'markdown' });
    assert.is(report.s.status, 404);
    const list = await c.call('listResearchJobs', { limit: 5 });
    assert.equal(list.s.body.data, { items: [], nextCursor: null });
    // No fetcher is installed in these tests, so nothing leaves the machine (the capture fails).
    const save = await c.call('libraryCommand', { body: { type: 'save-link', url: 'https://example.org/' } });
    assert.is(save.s.status, 201, 'the key was filled in, so the command passed validation');
    const again = await c.call('libraryCommand', { body: { type: 'save-link', url: 'https://example.org/' } });
    assert.equal(JSON.stringify(again.s.body.data).match(/"(?:sourceId|itemId|id)":"[^"]+"/)?.[0], JSON.stringify(save.s.body.data).match(/"(?:sourceId|itemId|id)":"[^"]+"/)?.[0], 'an identical call is a retry: the same item');
    const badKey = await c.call('libraryCommand', { body: { type: 'save-link', url: 'https://example.org/', idempotencyKey: 'short' } });
    assert.is(badKey.s.status, 400);
    const prepared = await c.call('libraryCommand', { body: { type: 'prepare-upload', fileName: 'note.html', contentType: 'text/html', byteLength: 5 } });
    assert.is(prepared.s.status < 300, true, JSON.stringify(prepared.s));
    const uploadId = JSON.stringify(prepared.s.body.data).match(/"uploadId":"([^"]+)"/)![1]!;
    const put = await c.call('putLibraryUpload', { uploadId, bytesBase64: Buffer.from('hello').toString('base64') });
    assert.is(put.s.status, 200, JSON.stringify(put.s));
    const notBase64 = await c.call('putLibraryUpload', { uploadId, bytesBase64: '***' });
    assert.match(notBase64.s.error.message, /base64/);
  } finally {
    await c.close();
    await s.engine.close();
  }
});

test('the save-link tool takes { url, requestKey }: requestKey plays the part of idempotencyKey (same rules, the same save stored)', async () => {
  const s = await service();
  const c = await connected(s.handler, await s.token(ALL));
  try {
    const { tools } = await c.client.listTools();
    const tool = tools.find((t) => t.name === 'saveLink')!;
    assert.equal((tool.inputSchema.required as string[]).sort(), ['requestKey', 'url']);
    assert.equal(Object.keys(tool.inputSchema.properties as object).sort(), ['requestKey', 'url']);
    const requestKey = 'my save of example.org, try 1';
    const first = await c.call('saveLink', { url: 'https://example.org/tool', requestKey });
    assert.is(first.s.status, 201, JSON.stringify(first.s));
    assert.is(first.s.body.receipt.idempotency, 'created');
    const again = await c.call('saveLink', { url: 'https://example.org/tool', requestKey });
    assert.is(again.s.status, 201, "a replay answers the first application's status");
    assert.is(again.s.body.receipt.idempotency, 'replayed');
    assert.is(again.s.body.data.item.itemId, first.s.body.data.item.itemId, 'the same save');
    // The same key through the library command is the same save: requestKey is the idempotencyKey.
    const api = await s.api('POST', '/api/v1/library', await s.token(['library:read']), { type: 'list' });
    assert.is(((await api.json()) as any).data.items.length, 1);
    const viaCommand = await c.call('libraryCommand', { body: { type: 'save-link', url: 'https://example.org/tool', idempotencyKey: requestKey } });
    assert.is(viaCommand.s.body.data.item.itemId, first.s.body.data.item.itemId);
    const conflict = await c.call('saveLink', { url: 'https://example.org/other', requestKey });
    assert.is(conflict.s.body.error.code, 'IDEMPOTENCY_CONFLICT');
    const short = await c.call('saveLink', { url: 'https://example.org/tool', requestKey: 'short' });
    assert.is(short.s.status, 400);
    assert.equal(short.s.body.error.fieldErrors.map((f: { field: string }) => f.field), ['requestKey']);
    assert.is((await c.call('saveLink', { url: 'https://example.org/tool', requestKey: `${'k'.repeat(20)}\u0007` })).s.status, 400, 'no control characters');
    assert.is((await c.call('saveLink', { url: 'https://example.org/tool', requestKey: 'k'.repeat(256) })).s.status, 201, '256 characters are fine');
    assert.ok((await c.call('saveLink', { url: 'https://example.org/tool' })).isError, 'requestKey is required');
    assert.ok((await c.call('saveLink', { url: 'https://example.org/tool', requestKey, body: {} })).isError, 'no other arguments');
  } finally {
    await c.close();
    await s.engine.close();
  }
});

test('resources: listed documents and reads in each representation through the handler', async () => {
  const s = await service();
  const c = await connected(s.handler, await s.token(ALL));
  try {
    const ref = (await c.call('createDocument', { body: { v: 1, title: 'Resource doc' } })).s.body.data.documentRef;
    const { resources } = await c.client.listResources();
    assert.ok(resources.some((r) => r.uri === `kw://api/v1/documents/${ref}` && r.title === 'Resource doc'));
    assert.ok(resources.some((r) => r.uri === 'kw://api/v1/auth'));
    const md = await c.client.readResource({ uri: `kw://api/v1/documents/${ref}?format=markdown` });
    assert.is((md.contents[0] as any).mimeType, 'text/markdown');
    const json = await c.client.readResource({ uri: `kw://api/v1/documents/${ref}?format=blocks` });
    assert.is(JSON.parse((json.contents[0] as any).text).data.documentRef, ref);
    let code = 0;
    try {
      await c.client.readResource({ uri: `kw://api/v1/documents/sdoc_${'0'.repeat(48)}` });
    } catch (e) {
      code = (e as { code: number }).code;
    }
    assert.is(code, -32002);
  } finally {
    await c.close();
    await s.engine.close();
  }
});

/** A client transport over a pair of byte streams (what a child process's stdio would be). */
function streamTransport(input: PassThrough, output: PassThrough): Transport {
  const buffer = new ReadBuffer();
  const t: Transport = {
    async start() {
      input.on('data', (chunk: Buffer) => {
        buffer.append(chunk);
        for (let m = buffer.readMessage(); m !== null; m = buffer.readMessage()) t.onmessage?.(m);
      });
    },
    async send(message: JSONRPCMessage) {
      output.write(serializeMessage(message));
    },
    async close() {
      output.end();
      t.onclose?.();
    },
  };
  return t;
}

test('stdio: runMcpStdio serves over byte streams until they end', async () => {
  const s = await service();
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const mcp = await runMcpStdio({ handler: s.handler, token: await s.token(ALL), stdin: toServer, stdout: fromServer });
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  await client.connect(streamTransport(fromServer, toServer));
  const r = (await client.callTool({ name: 'getAuth', arguments: {} })) as any;
  assert.ok(r.structuredContent.body.data.scopes.includes('document:write'));
  await client.close();
  await mcp.closed;
  await s.engine.close();
});

test('stdio to a child process: the SDK client spawns a server and works with its tools', async () => {
  const child = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', new URL('../../fixtures/mcp-stdio-child.ts', import.meta.url).pathname],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'child-test', version: '1.0.0' });
  await client.connect(child);
  try {
    const created = (await client.callTool({ name: 'createDocument', arguments: { body: { v: 1, title: 'From a child' } } })) as any;
    assert.is(created.structuredContent.status, 201);
    const md = (await client.callTool({ name: 'getDocument', arguments: { documentRef: created.structuredContent.body.data.documentRef, format: 'markdown' } })) as any;
    assert.is(md.structuredContent.status, 200);
  } finally {
    await client.close();
  }
});

test('streamable HTTP at /mcp beside the API: bearer required, sessions bound to their token', async () => {
  const s = await service();
  const listening = await listen(s.handler, { port: 0 });
  const mcp = mountMcp(listening.server, { handler: s.handler });
  try {
    const tok = await s.token(ALL);
    const client = new Client({ name: 'http-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${listening.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tok}` } } });
    await client.connect(transport);
    const created = (await client.callTool({ name: 'createDocument', arguments: { body: { v: 1, title: 'Over HTTP' } } })) as any;
    assert.is(created.structuredContent.status, 201);
    assert.is(mcp.sessionCount(), 1);

    const anonymous = await fetch(`${listening.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.is(anonymous.status, 401);
    assert.is(anonymous.headers.get('www-authenticate'), 'Bearer');
    const stranger = await fetch(`${listening.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${await s.token(ALL)}`, 'mcp-session-id': transport.sessionId! },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    assert.is(stranger.status, 403);
    const api = await fetch(`${listening.url}/api/v1/auth`, { headers: { authorization: `Bearer ${tok}` } });
    assert.is(api.status, 200, 'the API is still served beside /mcp');
    await client.close();
  } finally {
    await mcp.close();
    await listening.close();
    await s.engine.close();
  }
});

test.run();
