import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serve } from './serve.ts';

test('kw serve answers MCP at /mcp, and kw mcp serves the same data folder over stdio with the demo token', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-mcp-'));
  try {
    const server = await serve({ port: 0, data: dir, seed: 'demo' });
    const token = server.demo!.token;
    try {
      const client = new Client({ name: 'kw-serve-mcp', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      const auth = (await client.callTool({ name: 'getAuth', arguments: {} })) as unknown as { structuredContent: { status: number } };
      assert.is(auth.structuredContent.status, 200);
      await client.close();
    } finally {
      await server.close();
    }

    const child = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', new URL('./cli.ts', import.meta.url).pathname, 'mcp', '--data', dir, '--token', token],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'kw-mcp-stdio', version: '1.0.0' });
    await client.connect(child);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      for (const name of ['getDocument', 'mutateDocument', 'listResearchJobs', 'getResearchJobReport', 'libraryCommand']) assert.ok(tools.includes(name), name);
      const jobs = (await client.callTool({ name: 'listResearchJobs', arguments: {} })) as unknown as { structuredContent: { status: number; body: { data: { items: unknown[] } } } };
      assert.is(jobs.structuredContent.status, 200);
      assert.is(jobs.structuredContent.body.data.items.length, 4, 'the demo jobs are there');
    } finally {
      await client.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('kw mcp without --data or --token is a one-line usage error', async () => {
  const { main } = await import('./cli.ts');
  const lines: string[] = [];
  const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
  assert.is(await main(['mcp', '--token', 'x'], io as never), 2);
  assert.match(lines.join('\n'), /--data is required/);
  assert.is(lines.length, 1);
});

test('kw mcp over stdio under hostile input: malformed JSON-RPC, unknown tools and methods, huge arguments get errors; an oversized message ends the session, bounded', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-mcp-hostile-'));
  try {
    const server = await serve({ port: 0, data: dir, seed: 'demo' });
    const token = server.demo!.token;
    await server.close();
    const child = spawn(process.execPath, ['--import', 'tsx', new URL('./cli.ts', import.meta.url).pathname, 'mcp', '--data', dir, '--token', token], { stdio: ['pipe', 'pipe', 'pipe'] });
    const answers = new Map<number, any>();
    let pending = '';
    let stdoutNoise = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      pending += chunk;
      for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        try {
          const message = JSON.parse(line) as { id?: number };
          if (typeof message.id === 'number') answers.set(message.id, message);
        } catch {
          stdoutNoise += line;
        }
      }
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdin.on('error', () => undefined); // EPIPE once the server has ended the session
    const send = (value: unknown) => child.stdin.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
    const answer = async (id: number) => {
      for (let i = 0; i < 3000 && !answers.has(id); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok(answers.has(id), `an answer to ${id}`);
      return answers.get(id);
    };
    try {
      send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } } });
      assert.ok((await answer(1)).result.serverInfo);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send('{not json at all');
      send('{"jsonrpc":"2.0","id":');
      send({ hello: 'world' });
      send({ jsonrpc: '2.0', id: 2, method: 'no/such/method' });
      assert.is((await answer(2)).error.code, -32601);
      send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'noSuchTool', arguments: {} } });
      assert.ok((await answer(3)).error || (await answer(3)).result.isError, 'an unknown tool is an error');
      send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'getDocument', arguments: { documentRef: 'd'.repeat(4 * 1024 * 1024) } } });
      const huge = await answer(4);
      assert.ok(huge.result?.isError || huge.error, 'a 4 MiB argument is an error result');
      send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'getDocument', arguments: 'not an object' } });
      assert.ok((await answer(5)).error, 'arguments that are not an object are refused');
      send({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'mutateDocument', arguments: { documentRef: 'x', body: { v: 1, mutation: { kind: 'delete', blockIds: Array.from({ length: 100_000 }, (_, i) => `b${i}`) } } } } });
      assert.ok((await answer(6)).result.isError, 'a mutation with 100,000 block ids is an error result');
      send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'getAuth', arguments: {} } });
      assert.is((await answer(7)).result.structuredContent.status, 200, 'still serving after all of that');
      assert.is(stdoutNoise, '', 'stdout carried only JSON-RPC');

      // One message larger than the read buffer (10 MiB): the session ends instead of buffering without bound.
      child.stdin.write('"'.padEnd(11 * 1024 * 1024, 'x'));
      assert.is(await exited, 0, 'kw mcp ended cleanly');
    } finally {
      child.kill();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('kw serve --mcp-allowed-hosts replaces the Host names /mcp answers (DNS rebinding)', async () => {
  const { serveOptionsFrom } = await import('./serve-command.ts');
  const options = serveOptionsFrom(['--storage', 'memory', '--port', '0', '--mcp-allowed-hosts', 'kw.lan, kw.lan:8787', '--quiet'], { out: () => undefined, err: () => undefined });
  assert.equal(options.mcpAllowedHosts, ['kw.lan', 'kw.lan:8787']);
  const server = await serve({ ...options, json: undefined } as never);
  try {
    const post = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${server.url}/mcp`, { method: 'POST', headers: { host, 'content-type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end('{}');
      });
    assert.is(await post(new URL(server.url).host), 403, 'the default names no longer apply');
    assert.is(await post('kw.lan'), 401, 'an allowed host reaches authentication');
  } finally {
    await server.close();
  }
});

test.run();
