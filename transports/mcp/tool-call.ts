/**
 * Running a tool: its arguments become one API request through the handler. Writes carry an
 * idempotency key derived from the intent, so a retried call is applied once; reads and writes
 * remember the revision they saw.
 * @module
 */
import type { ToolSpec } from './catalog.ts';
import { answerResult, refusal, type ToolResult } from './results.ts';
import { buildRequest, intentOf, remember } from './request.ts';
import { canonicalJson, intentKey, send, type CallContext } from './session.ts';
import { runCancel, runEvents, runMutate } from './stateful-tools.ts';

/** Run one tool call. */
export async function runTool(tool: ToolSpec, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult> {
  const built = buildRequest(tool, args);
  if (typeof built === 'string') return refusal(built);
  if (tool.name === 'mutateDocument') return runMutate(tool, built, args, ctx);
  if (tool.name === 'cancelResearchJob') return runCancel(tool, built, args, ctx);
  if (tool.name === 'listResearchJobEvents') return runEvents(built, args, ctx);
  if (tool.args.has('idempotencyKey') && built.headers['idempotency-key'] === undefined) {
    built.headers['idempotency-key'] = intentKey(ctx.session, tool.name, intentOf(args));
  }
  if (built.body !== null && typeof built.body === 'object' && !Array.isArray(built.body) && tool.bodyTakesKey(built.body)) {
    const body = built.body as Record<string, unknown>;
    if (body.idempotencyKey === undefined) built.body = { ...body, idempotencyKey: intentKey(ctx.session, `${tool.name}:${canonicalJson(body)}`, null) };
  }
  const answer = await send(ctx, built.method, built.url, built.headers, built.body, built.bytes);
  remember(ctx, built, answer);
  return answerResult(answer);
}
