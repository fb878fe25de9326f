/**
 * What one MCP session keeps between tool calls, and how a call reaches the API handler: every
 * call is a {@link PlainRequest} through the same handler as HTTP, with the session's bearer token,
 * so scopes and the request budget apply exactly as they do over HTTP.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Handler, PlainRequest, PlainResponse } from '../../src/api/types.ts';
import { canonicalJson } from '../../src/canonical-json.ts';

/** Per-session memory: revisions seen, event cursors, and the salt of derived idempotency keys. */
export interface SessionState {
  /** documentRef or jobId → the last Service-Revision this session read or wrote. */
  revisions: Map<string, string>;
  /** jobId → the last event id returned by the events tool. */
  eventCursors: Map<string, string>;
  /** Intent (hash of a write's arguments) → the key and revision it was first sent with. */
  intents: Map<string, { key: string; revision: string }>;
  salt: string;
}

/** A fresh session state. */
export function newSession(): SessionState {
  return { revisions: new Map(), eventCursors: new Map(), intents: new Map(), salt: randomBytes(16).toString('hex') };
}

/**
 * The idempotency key of an intent: derived from the session, the operation, the arguments and the
 * revision it is sent against, so an identical retry carries the same key (the server applies it
 * once) and a changed call, or the same call against a new revision, carries a new one.
 */
export function intentKey(session: SessionState, operationId: string, args: unknown, revision = ''): string {
  const digest = createHash('sha256').update(`${session.salt}\n${operationId}\n${revision}\n${canonicalJson(args)}`).digest('base64url');
  return `mcp-${digest.slice(0, 40)}`;
}

/** Everything a tool call needs. */
export interface CallContext {
  handler: Handler;
  token: string | undefined;
  session: SessionState;
  signal?: AbortSignal | undefined;
}

/** An answer of the handler with its body read. */
export interface McpAnswer {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON, when the answer is JSON. */
  json: unknown;
  text: string;
}

const decoder = new TextDecoder();

/** Send one request through the handler (a JSON body, or raw bytes) and read the whole answer (a stream is read to its end). */
export async function send(
  ctx: CallContext,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
  bytes?: Uint8Array,
): Promise<McpAnswer> {
  const h: Record<string, string> = { accept: 'application/json', ...headers };
  if (ctx.token !== undefined) h.authorization = `Bearer ${ctx.token}`;
  const request: PlainRequest = { method, url, headers: h, body: null, remoteAddress: 'mcp' };
  if (bytes !== undefined) {
    request.body = bytes;
    h['content-type'] = 'application/octet-stream';
  } else if (body !== undefined) {
    request.body = new TextEncoder().encode(JSON.stringify(body));
    h['content-type'] = 'application/json';
  }
  if (ctx.signal) request.signal = ctx.signal;
  const response: PlainResponse = await ctx.handler(request);
  let text = response.body === undefined ? '' : typeof response.body === 'string' ? response.body : decoder.decode(response.body);
  if (response.stream) for await (const chunk of response.stream) text += typeof chunk === 'string' ? chunk : decoder.decode(chunk);
  let json: unknown = undefined;
  if (/json/i.test(response.headers['content-type'] ?? '') && text !== '') {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status: response.status, headers: response.headers, json, text };
}
