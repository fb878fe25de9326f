/**
 * Running a tool: its arguments become one API request through the handler. Writes carry an
 * idempotency key derived from the intent, so a retried call is applied once; reads and writes
 * remember the revision they saw.
 * @module
 */
import { SAVE_LINK_TOOL, type ToolSpec } from './catalog.ts';
import { answerResult, refusal, type ToolResult } from './results.ts';
import { buildRequest, intentOf, remember } from './request.ts';
import { canonicalJson } from '../../src/canonical-json.ts';
import { intentKey, send, type CallContext } from './session.ts';
import { runCancel, runEvents, runMutate } from './stateful-tools.ts';

/** Run one tool call. */
export async function runTool(tool: ToolSpec, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult> {
  if (tool.name === SAVE_LINK_TOOL) return runSaveLink(tool, args, ctx);
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

/**
 * The save-link tool: `{ url, requestKey }` as the library's save-link command, `requestKey` as its
 * `idempotencyKey`; a refusal naming `idempotencyKey` names `requestKey` instead.
 */
async function runSaveLink(tool: ToolSpec, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult> {
  const unknown = Object.keys(args).filter((name) => name !== 'url' && name !== 'requestKey');
  if (unknown.length) return refusal(`unknown argument ${unknown[0]}; the arguments are url, requestKey`);
  for (const name of ['url', 'requestKey']) if (args[name] === undefined) return refusal(`${name} is required`);
  const body = { type: 'save-link', url: args.url, idempotencyKey: args.requestKey };
  const answer = await send(ctx, tool.op.method, tool.op.path, {}, body);
  const error = (answer.json as { error?: { fieldErrors?: { field: string; message: string }[]; message?: string } } | undefined)?.error;
  if (error?.fieldErrors) {
    error.fieldErrors = error.fieldErrors.map((f) => (f.field === 'idempotencyKey' ? { ...f, field: 'requestKey' } : f));
    if (error.message) error.message = error.message.replace(/\bidempotencyKey\b/g, 'requestKey');
  }
  return answerResult(answer);
}
