/**
 * The engine as a Model Context Protocol server: tools and resources generated from the operation
 * registry, every call through the API handler with the caller's bearer token.
 * - stdio: `runMcpStdio({ handler, token })` (what `kw mcp --data DIR --token TOKEN` runs);
 * - streamable HTTP: `mountMcp(listening.server, { handler })` at `/mcp`, or
 *   `createMcpHttpHandler({ handler }).handle(req, res)` in your own node:http server;
 * - any other SDK transport: `createMcpServer({ handler, token }).connect(transport)`.
 * @module
 */
export { createMcpServer, type McpServerOptions } from './server.ts';
export { runMcpStdio, type McpStdio, type McpStdioOptions } from './stdio.ts';
export { createMcpHttpHandler, mountMcp, MCP_HTTP_DEFAULTS, MCP_RETRY_MS, type McpHttpHandler, type McpHttpOptions } from './http.ts';
export { memoryEventStore, MCP_EVENT_STORE_DEFAULTS } from './event-store.ts';
export { buildTools, buildResourceTemplates, RESOURCE_PREFIX } from './catalog.ts';
