/**
 * The tools that keep state for the agent: block mutations (revision, idempotency key, the
 * contract's revision guards as error results, re-plan on 412 only when asked), job cancellation (reads the job's revision when it is not given) and following a
 * job's events (remembers the cursor per job).
 * @module
 */
import { operationPath } from '../../src/contract/links.ts';
import { contract } from '../../src/contract/operations.ts';
import type { ToolSpec } from './catalog.ts';
import { answerResult, guardResult, type ToolResult } from './results.ts';
import { intentKey, send, type McpAnswer, type CallContext } from './session.ts';
import { intentOf, remember, type BuiltRequest } from './request.ts';

/** Sends of one mutation intent: the first, and at most two after a 412. */
const MAX_MUTATION_ATTEMPTS = 3;
const TERMINAL_KINDS = new Set(['job.succeeded', 'job.failed', 'job.cancelled']);

/** Block ids a mutation names (which must still exist for it to be sent again unchanged). */
export function referencedBlockIds(mutation: unknown): string[] {
  if (mutation === null || typeof mutation !== 'object') return [];
  const m = mutation as Record<string, unknown>;
  const ids: unknown[] = [m.blockId, m.parentBlockId, m.beforeBlockId, m.newParentBlockId, m.oldParentBlockId];
  if (Array.isArray(m.blockIds)) ids.push(...m.blockIds);
  return [...new Set(ids.filter((id): id is string => typeof id === 'string'))];
}

async function readHead(ctx: CallContext, url: string): Promise<McpAnswer> {
  return send(ctx, 'GET', url, {});
}

/** The intent record of a write: reused on an identical call, so a retry carries the same key and revision. */
function intentRecord(ctx: CallContext, name: string, args: Record<string, unknown>) {
  const id = intentKey(ctx.session, `${name}:intent`, intentOf(args));
  return { id, prior: ctx.session.intents.get(id) };
}

/** What the caller should do after a revision guard stopped a mutation. */
const REREAD = (current: string | null) =>
  `Read the document again (getDocument with format=blocks), check that your mutation still makes sense, and call mutateDocument again with ifRevision=${JSON.stringify(current)}; or pass replan=true to have the tool send this same mutation against the current revision when every block it names still exists.`;

/** The document's current revision (null when it cannot be read), and the read itself. */
async function currentRevisionOf(ctx: CallContext, url: string): Promise<{ revision: string | null; read: McpAnswer }> {
  const read = await readHead(ctx, url);
  return { revision: read.status === 200 ? (read.headers['service-revision'] ?? null) : null, read };
}

/**
 * mutateDocument (see the tool description): the contract's guards stay in force. Without a
 * revision (given, or remembered from this session's own read or write) nothing is sent and the
 * result is PRECONDITION_REQUIRED; a stale one is PRECONDITION_FAILED; both carry the current
 * revision. Only `replan: true` lets the tool re-read and send the mutation again after a 412.
 */
export async function runMutate(tool: ToolSpec, built: BuiltRequest, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult> {
  const ref = built.path.documentRef!;
  const readUrl = `${operationPath(contract.getDocument, { documentRef: ref })}?format=blocks`;
  const intent = intentRecord(ctx, tool.name, args);
  const explicitKey = typeof args.idempotencyKey === 'string' ? args.idempotencyKey : undefined;
  const replan = args.replan === true;
  let revision = built.headers['service-if-revision'] ?? intent.prior?.revision ?? ctx.session.revisions.get(ref);
  if (revision === undefined) {
    const { revision: current, read } = await currentRevisionOf(ctx, readUrl);
    if (current === null) return answerResult(read, { note: 'reading the document for its current revision failed' });
    return guardResult('PRECONDITION_REQUIRED', current, REREAD(current));
  }
  const replans: { revision: string }[] = [];
  for (let attempt = 1; ; attempt++) {
    const key =
      attempt === 1 && explicitKey !== undefined
        ? explicitKey
        : attempt === 1 && intent.prior?.revision === revision
          ? intent.prior.key
          : intentKey(ctx.session, tool.name, intentOf(args), revision);
    ctx.session.intents.set(intent.id, { key, revision });
    const headers = { ...built.headers, 'idempotency-key': key, 'service-if-revision': revision };
    const answer = await send(ctx, 'POST', built.url, headers, built.body);
    remember(ctx, built, answer);
    const extra = { attempts: attempt, sentRevision: revision, idempotencyKey: key, ...(replans.length ? { replannedAfter412: replans } : {}) };
    if (answer.status !== 412) return answerResult(answer, extra);

    const { revision: current, read } = await currentRevisionOf(ctx, readUrl);
    if (!replan || attempt >= MAX_MUTATION_ATTEMPTS) return guardResult('PRECONDITION_FAILED', current, REREAD(current), extra, answer);
    if (current === null) return answerResult(read, { ...extra, note: 'the mutation met a newer revision (412) and re-reading the document failed' });
    const blocks = ((read.json as { data?: { blocks?: { id: string }[] } }).data?.blocks ?? []).map((b) => b.id);
    const present = new Set(blocks);
    const missing = referencedBlockIds((built.body as { mutation?: unknown } | undefined)?.mutation).filter((id) => !present.has(id));
    if (missing.length > 0) {
      return guardResult(
        'PRECONDITION_FAILED',
        current,
        'Blocks this mutation names no longer exist, so it was not sent again: read the document again (getDocument format=blocks) and plan a new mutation.',
        { ...extra, missingBlockIds: missing },
        answer,
      );
    }
    replans.push({ revision: current });
    revision = current;
  }
}

/** cancelResearchJob: the job's revision is read when neither given nor remembered; a 412 re-reads once. */
export async function runCancel(tool: ToolSpec, built: BuiltRequest, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult> {
  const jobId = built.path.jobId!;
  const readUrl = `/api/v1/research-jobs/${encodeURIComponent(jobId)}`;
  const intent = intentRecord(ctx, tool.name, args);
  let revision: string | undefined = built.headers['service-if-revision'] ?? intent.prior?.revision ?? ctx.session.revisions.get(jobId);
  for (let attempt = 1; ; attempt++) {
    if (revision === undefined) {
      const read = await readHead(ctx, readUrl);
      if (read.status !== 200) return answerResult(read, { note: 'reading the job for its revision failed' });
      revision = read.headers['service-revision']!;
    }
    const key = typeof args.idempotencyKey === 'string' && attempt === 1 ? args.idempotencyKey : intent.prior?.revision === revision ? intent.prior.key : intentKey(ctx.session, tool.name, intentOf(args), revision);
    ctx.session.intents.set(intent.id, { key, revision });
    const answer = await send(ctx, 'POST', built.url, { ...built.headers, 'idempotency-key': key, 'service-if-revision': revision }, built.body);
    remember(ctx, built, answer);
    if (answer.status !== 412 || attempt >= 2) return answerResult(answer, { attempts: attempt, sentRevision: revision });
    revision = undefined;
  }
}

/** listResearchJobEvents as "follow": continues after the last event this session returned for the job. */
export async function runEvents(built: BuiltRequest, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult> {
  const jobId = built.path.jobId!;
  let url = built.url;
  const cursor = ctx.session.eventCursors.get(jobId);
  if (args.after === undefined && cursor !== undefined) url += `${url.includes('?') ? '&' : '?'}after=${encodeURIComponent(cursor)}`;
  const answer = await send(ctx, 'GET', url, built.headers);
  const items = (answer.json as { data?: { items?: { eventId: string; kind: string }[] } } | undefined)?.data?.items;
  if (answer.status !== 200 || !Array.isArray(items)) return answerResult(answer);
  const last = items.at(-1);
  if (last) ctx.session.eventCursors.set(jobId, last.eventId);
  return answerResult(answer, { terminal: items.some((e) => TERMINAL_KINDS.has(e.kind)), cursor: ctx.session.eventCursors.get(jobId) ?? null });
}
