/**
 * The document operations: list, create, read (three representations, conditional) and mutate.
 * Validation, boundaries, idempotency and preconditions are the documents service's; this file maps
 * them to HTTP.
 * @module
 */
import { ServiceError, invalid } from '../errors.ts';
import { documentDataBody, documentDataJson, receiptJson } from '../documents/serialize.ts';
import type { Operation, RequestContext } from './context.ts';
import { baseHeaders, ok, type JsonPieces } from './envelope.ts';
import { etagMatches, exceedsBytes, queryParam, weakEtag } from './http-util.ts';
import { MAX_RESPONSE_BODY, type PlainResponse } from './types.ts';

const FORMATS = new Set(['rich-json', 'blocks', 'markdown']);
const DATA_HEAD = '{"v":1,"document":';

function actorOf(ctx: RequestContext) {
  return ctx.credential!.actor;
}

/** GET /api/v1/documents: a page `{items, nextCursor}`. */
export const listDocuments: Operation = {
  auth: 'bearer',
  allScopes: ['document:read'],
  charge: 'before',
  async run(ctx) {
    const page = await ctx.engine.documents.list(actorOf(ctx), {
      limit: queryParam(ctx.query, 'limit'),
      cursor: queryParam(ctx.query, 'cursor'),
    });
    return ok(ctx, 200, JSON.stringify(page));
  },
};

/** POST /api/v1/documents: 201 created, 200 on an exact replay. */
export const createDocument: Operation = {
  auth: 'bearer',
  allScopes: ['document:create'],
  charge: 'before',
  body: 'json',
  async run(ctx) {
    const out = await ctx.engine.documents.create(actorOf(ctx), {
      idempotencyKey: ctx.request.headers['idempotency-key'],
      body: ctx.body,
    });
    const view = out.document;
    return ok(ctx, out.idempotency.idempotency === 'replayed' ? 200 : 201, documentDataJson(view), {
      receipt: out.idempotency,
      headers: {
        'service-revision': view.revision,
        location: `/api/v1/documents/${view.documentRef}`,
      },
    });
  },
};

/**
 * GET /api/v1/documents/{documentRef}?format=rich-json|blocks|markdown.
 * @remarks With If-None-Match the cheap head is read first, so a 304 costs the server almost nothing;
 * it is still charged like every authenticated request (the issue names the only exceptions:
 * activation-blocked operations and the proposal 409).
 */
export const readDocument: Operation = {
  auth: 'bearer',
  allScopes: ['document:read'],
  charge: 'before',
  async run(ctx): Promise<PlainResponse> {
    const actor = actorOf(ctx);
    const ref = ctx.params[0]!;
    const formatParam = queryParam(ctx.query, 'format');
    const format = formatParam ?? 'rich-json';
    if (!FORMATS.has(format)) {
      throw invalid('format must be rich-json, blocks or markdown.', [{ field: 'query.format', message: 'must be rich-json, blocks or markdown' }]);
    }
    const ifNoneMatch = ctx.request.headers['if-none-match'];
    if (ifNoneMatch !== undefined) {
      const head = await ctx.engine.documents.head(actor, ref);
      const etag = weakEtag(head.revision, format);
      if (etagMatches(ifNoneMatch, etag)) {
        const headers = baseHeaders(ctx, null);
        headers['service-revision'] = head.revision;
        headers.etag = etag;
        return { status: 304, headers };
      }
    }
    const read = await ctx.engine.documents.read(actor, ref, formatParam);
    const revisionHeaders = { 'service-revision': read.revision, etag: weakEtag(read.revision, read.format) };
    if (read.format === 'rich-json') return ok(ctx, 200, documentDataBody(read.document), { headers: revisionHeaders });
    if (read.format === 'blocks') {
      const data = `{"v":1,"documentRef":"${read.documentRef}","version":${read.version},"blocks":${JSON.stringify(read.blocks)}}`;
      return ok(ctx, 200, data, { headers: revisionHeaders });
    }
    const headers = baseHeaders(ctx, 'text/markdown; charset=utf-8');
    Object.assign(headers, revisionHeaders);
    headers['x-service-markdown-loss-count'] = String(read.lossCount);
    return { status: 200, headers, body: read.markdown };
  },
};

/** POST /api/v1/documents/{documentRef}/mutations: 200 with `{v, document, receipt}`. */
export const mutateDocument: Operation = {
  auth: 'bearer',
  allScopes: ['document:write'],
  charge: 'before',
  body: 'json',
  async run(ctx) {
    const h = ctx.request.headers;
    const out = await ctx.engine.documents.mutate(actorOf(ctx), ctx.params[0]!, {
      idempotencyKey: h['idempotency-key'],
      ifRevision: h['service-if-revision'],
      body: ctx.body,
    });
    const view = out.document;
    const document = documentDataBody(view);
    const receipt = `,"receipt":${receiptJson(out.receipt)}}`; // ASCII: ids, hashes, numbers
    let data: JsonPieces;
    let tooLarge: boolean;
    if (typeof document === 'string') {
      data = `{"v":1,"document":${document}${receipt}`;
      tooLarge = exceedsBytes(data, MAX_RESPONSE_BODY - 1024);
    } else {
      data = [DATA_HEAD, document, receipt];
      tooLarge = DATA_HEAD.length + document.byteLength + receipt.length > MAX_RESPONSE_BODY - 1024;
    }
    if (tooLarge) {
      // The write is committed; say so, so that a client does not retry it as if nothing happened.
      const r = out.receipt;
      throw new ServiceError(
        'CONFLICT',
        `The mutation was applied (operationRef ${r.operationRef}, version ${r.baseVersion} → ${r.resultingVersion}), but the resulting document exceeds the 2 MB response limit, so it cannot be returned and is unreadable through the API from now on; nothing was truncated. Do not resend this mutation.`,
        { requiredAction: 'refresh-resource', retryable: false },
      );
    }
    return ok(ctx, 200, data, {
      receipt: out.idempotency,
      headers: { 'service-revision': view.revision },
    });
  },
};
