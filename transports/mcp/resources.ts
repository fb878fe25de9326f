/**
 * MCP resources: every public GET operation is a resource template `kw://api/v1/...{?query}`; the
 * concrete resources listed are the operations without path parameters and the caller's documents.
 * Reads go through the same handler as tool calls.
 * @module
 */
import { operationPath } from '../../src/contract/links.ts';
import { contract } from '../../src/contract/operations.ts';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { RESOURCE_PREFIX, type ResourceTemplateSpec } from './catalog.ts';
import { send, type CallContext } from './session.ts';

/** MCP's "resource not found" error code. */
const RESOURCE_NOT_FOUND = -32002;

/** A resource as `resources/list` shows it. */
export interface ListedResource {
  [key: string]: unknown;
  uri: string;
  name: string;
  title?: string;
  mimeType?: string;
}

/** The listed resources: the fixed ones, then the caller's documents (first page). */
export async function listResources(templates: readonly ResourceTemplateSpec[], ctx: CallContext): Promise<ListedResource[]> {
  const out: ListedResource[] = templates
    .filter((t) => !t.op.path.includes('{'))
    .map((t) => ({ uri: `${RESOURCE_PREFIX}${t.op.path}`, name: t.name, title: t.title, mimeType: 'application/json' }));
  if (ctx.token === undefined) return out;
  const page = await send(ctx, 'GET', '/api/v1/documents?limit=50', {});
  const items = (page.json as { data?: { items?: { documentRef: string; title: string }[] } } | undefined)?.data?.items ?? [];
  for (const doc of items) {
    out.push({ uri: `${RESOURCE_PREFIX}${operationPath(contract.getDocument, { documentRef: doc.documentRef })}`, name: doc.documentRef, title: doc.title, mimeType: 'application/json' });
    out.push({ uri: `${RESOURCE_PREFIX}${operationPath(contract.getDocument, { documentRef: doc.documentRef })}?format=markdown`, name: `${doc.documentRef} (markdown)`, title: doc.title, mimeType: 'text/markdown' });
  }
  return out;
}

/** Read a `kw://` resource through the handler. */
export async function readResource(templates: readonly ResourceTemplateSpec[], uri: string, ctx: CallContext) {
  if (!uri.startsWith(`${RESOURCE_PREFIX}/`)) throw new McpError(ErrorCode.InvalidParams, `Resource URIs start with ${RESOURCE_PREFIX}/ (e.g. kw://api/v1/documents/{documentRef}); got ${uri.slice(0, 200)}`);
  const url = uri.slice(RESOURCE_PREFIX.length);
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (!templates.some((t) => t.pattern.test(path))) throw new McpError(RESOURCE_NOT_FOUND, `No resource template matches ${uri.slice(0, 200)}`, { uri });
  const answer = await send(ctx, 'GET', url, {});
  if (answer.status === 404) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.slice(0, 200)}`, { uri, answer: answer.json });
  if (answer.status >= 400) {
    const error = (answer.json as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new McpError(ErrorCode.InvalidRequest, `${answer.status} ${error?.code ?? ''}: ${error?.message ?? answer.text.slice(0, 200)}`, { uri, status: answer.status, answer: answer.json });
  }
  const mimeType = (answer.headers['content-type'] ?? 'application/octet-stream').split(';')[0]!.trim();
  return { contents: [{ uri, mimeType, text: answer.text }] };
}
