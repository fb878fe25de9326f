/**
 * A tool call's arguments as one API request (path, query, headers by wire name, JSON body), and
 * what the session remembers of the answer.
 * @module
 */
import type { ToolSpec } from './catalog.ts';
import type { McpAnswer, CallContext } from './session.ts';

/** The request of a tool call, before it is sent. */
export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  /** The path parameters by name (documentRef, jobId …). */
  path: Record<string, string>;
  /** A raw body (operations that take bytes), decoded from the `bytesBase64` argument. */
  bytes?: Uint8Array;
}

/** Check the arguments against the tool's argument names; build the request. */
export function buildRequest(tool: ToolSpec, args: Record<string, unknown>): BuiltRequest | string {
  const path: Record<string, string> = {};
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined || name === 'body' || name === 'bytesBase64') continue;
    const where = tool.args.get(name);
    if (!where) return `unknown argument ${name}; the arguments are ${Object.keys(tool.inputSchema.properties as object).join(', ') || 'none'}`;
    if (where.in === 'tool') {
      if (typeof value !== 'boolean') return `${name} must be true or false`;
      continue;
    }
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return `${name} must be a string or a number`;
    if (where.in === 'path') path[name] = String(value);
    else if (where.in === 'query') query.set(name, String(value));
    else headers[where.wire] = String(value);
  }
  const required = tool.inputSchema.required as string[];
  for (const name of required) if (args[name] === undefined) return `${name} is required`;
  let missing: string | null = null;
  const url = tool.op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = path[name];
    if (value === undefined) missing = name;
    return encodeURIComponent(value ?? '');
  });
  if (missing !== null) return `${missing} is required`;
  const search = query.size ? `?${query}` : '';
  const built: BuiltRequest = { method: tool.op.method, url: `${url}${search}`, headers, path };
  if (tool.op.input.body) built.body = args.body;
  if (tool.op.input.bytes) {
    const encoded = args.bytesBase64;
    if (typeof encoded !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return 'bytesBase64 must be a base64 string';
    built.bytes = new Uint8Array(Buffer.from(encoded, 'base64'));
  }
  return built;
}

/** The intent of a write: its arguments without the ones the tool manages (key, revision, replan). */
export function intentOf(args: Record<string, unknown>): Record<string, unknown> {
  const { idempotencyKey: _k, ifRevision: _r, replan: _p, ...rest } = args;
  return rest;
}

/** Remember the revision an answer carries, under the document or job it is about. */
export function remember(ctx: CallContext, request: BuiltRequest, answer: McpAnswer): void {
  const revision = answer.headers['service-revision'];
  if (revision === undefined || answer.status >= 400) return;
  const data = (answer.json as { data?: { documentRef?: unknown; jobId?: unknown } } | undefined)?.data;
  const id = request.path.documentRef ?? request.path.jobId ?? (typeof data?.documentRef === 'string' ? data.documentRef : typeof data?.jobId === 'string' ? data.jobId : undefined);
  if (id !== undefined) ctx.session.revisions.set(id, revision);
}

