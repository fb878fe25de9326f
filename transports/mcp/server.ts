/**
 * The engine as an MCP server (the official SDK's low-level `Server`, since tool schemas come from
 * the registry as JSON Schema). One server is one session: it keeps the revisions, intents and
 * event cursors of its tool calls.
 * @module
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Handler } from '../../src/api/types.ts';
import { buildResourceTemplates, buildTools, type ResourceTemplateSpec, type ToolSpec } from './catalog.ts';
import { listResources, readResource } from './resources.ts';
import { newSession, type CallContext } from './session.ts';
import { runTool } from './tool-call.ts';

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** The API handler every call goes through. */
  handler: Handler;
  /** The bearer token of calls that carry none of their own (stdio); over HTTP each request's token is used. */
  token?: string | undefined;
  /** Server name and version announced at initialization. */
  name?: string;
  version?: string;
}

let catalog: { tools: ToolSpec[]; templates: ResourceTemplateSpec[] } | null = null;
function getCatalog() {
  catalog ??= { tools: buildTools(), templates: buildResourceTemplates() };
  return catalog;
}

const INSTRUCTIONS =
  'A knowledge workspace: documents made of stable nested blocks, research jobs, reports, a link library. Read a document with getDocument (format=blocks gives block ids), change it with mutateDocument (the tool keeps the revision of your last read or write and idempotency keys; a stale or missing revision is an error result with the current revision: read again and resend, or pass replan=true). Every call uses your bearer token: its scopes and request budget apply.';

/** Build an MCP server over the API handler. Connect it to a transport with `server.connect(transport)`. */
export function createMcpServer(options: McpServerOptions): Server {
  const { tools, templates } = getCatalog();
  const byName = new Map(tools.map((t) => [t.name, t]));
  const session = newSession();
  const server = new Server(
    { name: options.name ?? 'knowledge-workspace', version: options.version ?? '0.1.0' },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );
  const context = (extra: { authInfo?: { token: string } | undefined; signal: AbortSignal }): CallContext => ({
    handler: options.handler,
    token: extra.authInfo?.token ?? options.token,
    session,
    signal: extra.signal,
  });

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { title: t.title, readOnlyHint: t.readOnly, idempotentHint: true, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}; see tools/list.`);
    return runTool(tool, request.params.arguments ?? {}, context(extra));
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: templates.map((t) => ({ uriTemplate: t.uriTemplate, name: t.name, title: t.title, description: t.description })),
  }));
  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => ({ resources: await listResources(templates, context(extra)) }));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => readResource(templates, request.params.uri, context(extra)));
  return server;
}
