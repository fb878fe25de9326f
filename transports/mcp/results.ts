/**
 * Tool results: the API's answer as the agent reads it: status, the headers that matter (revision,
 * ETag, Retry-After, budget, loss count) and the body, as text and as structured content.
 * @module
 */
import type { McpAnswer } from './session.ts';

/** A `tools/call` result. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError: boolean;
}

const KEPT_HEADERS = ['service-revision', 'etag', 'location', 'retry-after', 'x-service-markdown-loss-count', 'x-service-requests-remaining', 'x-request-id'];

/** The answer as a tool result; `extra` adds fields (e.g. what the tool did on a 412). */
export function answerResult(answer: McpAnswer, extra: Record<string, unknown> = {}): ToolResult {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) if (answer.headers[name] !== undefined) headers[name] = answer.headers[name];
  const isError = answer.status >= 400;
  if (answer.json !== undefined) {
    const structured = { status: answer.status, headers, body: answer.json, ...extra };
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, isError };
  }
  const structured = { status: answer.status, headers, text: answer.text, ...extra };
  const content: ToolResult['content'] = [{ type: 'text', text: JSON.stringify({ status: answer.status, headers, ...extra }) }];
  if (answer.text !== '') content.push({ type: 'text', text: answer.text });
  return { content, structuredContent: structured, isError };
}

/** A result for a call the tool refused before reaching the API (bad arguments). */
export function refusal(message: string, details: Record<string, unknown> = {}): ToolResult {
  const structured = { status: 400, error: { code: 'INVALID_REQUEST', message, retryable: false }, ...details };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, isError: true };
}

/**
 * A result for a write the contract's revision guard stopped: PRECONDITION_REQUIRED (no revision
 * given or remembered; nothing was sent) or PRECONDITION_FAILED (the API answered 412), with the
 * current revision and what to do. `answer` is the API's own answer when there was one.
 */
export function guardResult(code: 'PRECONDITION_REQUIRED' | 'PRECONDITION_FAILED', currentRevision: string | null, whatToDo: string, details: Record<string, unknown> = {}, answer?: McpAnswer): ToolResult {
  const status = code === 'PRECONDITION_REQUIRED' ? 428 : 412;
  const message =
    code === 'PRECONDITION_REQUIRED'
      ? 'This mutation names no revision: no ifRevision was given and this session has not read or written the document. Nothing was changed.'
      : 'The document changed since the revision this mutation was planned against. Nothing was changed.';
  const base = answer ? answerResult(answer).structuredContent : { status };
  const structured = { ...base, status, error: { code, message, retryable: false }, currentRevision, whatToDo, ...details };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, isError: true };
}
