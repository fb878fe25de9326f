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

test.run();
