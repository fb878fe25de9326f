/**
 * The MCP server over stdio: what `kw mcp --data DIR --token TOKEN` runs. stdout carries only
 * JSON-RPC; anything else the program prints must go to stderr.
 * @module
 */
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Handler } from '../../src/api/types.ts';
import { createMcpServer } from './server.ts';

/** Options of {@link runMcpStdio}. */
export interface McpStdioOptions {
  handler: Handler;
  /** The bearer token every call uses (its scopes and budget apply). */
  token: string;
  /** Default process.stdin / process.stdout. */
  stdin?: Readable;
  stdout?: Writable;
}

/** A running stdio server. */
export interface McpStdio {
  /** Resolves when the client closes the connection (stdin ends) or {@link close} is called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serve MCP over stdio until stdin ends.
 * @example
 * // kw mcp: build the engine over lowdb, then
 * const mcp = await runMcpStdio({ handler: createApiHandler({ engine }), token });
 * await mcp.closed;
 * await engine.close();
 */
export async function runMcpStdio(options: McpStdioOptions): Promise<McpStdio> {
  const server = createMcpServer({ handler: options.handler, token: options.token });
  const stdin = options.stdin ?? process.stdin;
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  server.onclose = () => resolveClosed();
  stdin.once('end', () => void server.close());
  await server.connect(transport);
  return { closed, close: () => server.close() };
}
