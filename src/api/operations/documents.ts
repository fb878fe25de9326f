/**
 * The document operations: list, create, read (three representations, conditional) and mutate.
 * Validation, boundaries, idempotency and preconditions are the documents service's; this file maps
 * them to HTTP.
 * @module
 */
import { operationPath } from '../../contract/links.ts';
import { contract } from '../../contract/operations.ts';
import { ServiceError } from '../../errors.ts';
import { requireFormat } from '../../documents/limits.ts';
import { documentDataBody, documentDataJson, receiptJson } from '../document-json.ts';
import { bind } from '../bind.ts';
import type { RequestContext } from '../context.ts';
import { ok, type JsonPieces } from '../envelope.ts';
import { exceedsBytes, weakEtag } from '../http-util.ts';
import { notModified, representationResponse } from '../representation.ts';
import { MAX_RESPONSE_BODY } from '../types.ts';

const DATA_HEAD = '{"v":1,"document":';

const actorOf = (ctx: RequestContext) => ctx.credential!.actor;

/** GET /api/v1/documents: a page `{items, nextCursor}`. */
const listDocuments = bind(contract.listDocuments, async (ctx, input) => {
  const page = await ctx.engine.documents.list(actorOf(ctx), { limit: input.query.limit, cursor: input.query.cursor });
  return ok(ctx, 200, JSON.stringify(page));
});

/** POST /api/v1/documents: 201 created, 200 on an exact replay. */
const createDocument = bind(contract.createDocument, async (ctx, input) => {
  const out = await ctx.engine.documents.create(actorOf(ctx), { idempotencyKey: input.headers.idempotencyKey, body: input.body });
  const view = out.document;
  return ok(ctx, out.idempotency.idempotency === 'replayed' ? 200 : 201, documentDataJson(view), {
    receipt: out.idempotency,
    headers: { 'service-revision': view.revision, location: operationPath(contract.getDocument, { documentRef: view.documentRef }) },
  });
});

/**
 * GET /api/v1/documents/{documentRef}?format=rich-json|blocks|markdown.
 * @remarks With If-None-Match the cheap head is read first, so a 304 costs the server almost nothing;
 * it is still charged like every authenticated request.
 */
const readDocument = bind(contract.getDocument, async (ctx, input) => {
  const actor = actorOf(ctx);
  const ref = input.path.documentRef;
  const formatParam = input.query.format;
  const ifNoneMatch = input.headers.ifNoneMatch;
  if (ifNoneMatch !== undefined) {
    // The cheap head first, so that a 304 costs the server almost nothing.
    const head = await ctx.engine.documents.head(actor, ref);
    const unchanged = notModified(ctx, ifNoneMatch, head.revision, weakEtag(head.revision, requireFormat(formatParam)));
    if (unchanged) return unchanged;
  }
  return representationResponse(ctx, await ctx.engine.documents.read(actor, ref, formatParam));
});

/** POST /api/v1/documents/{documentRef}/mutations: 200 with `{v, document, receipt}`. */
const mutateDocument = bind(contract.mutateDocument, async (ctx, input) => {
  const out = await ctx.engine.documents.mutate(actorOf(ctx), input.path.documentRef, {
    idempotencyKey: input.headers.idempotencyKey,
    ifRevision: input.headers.ifRevision,
    body: input.body,
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
    data = [DATA_HEAD, ...document, receipt];
    let bytes = DATA_HEAD.length + receipt.length;
    for (const piece of document) bytes += piece.byteLength;
    tooLarge = bytes > MAX_RESPONSE_BODY - 1024;
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
  return ok(ctx, 200, data, { receipt: out.idempotency, headers: { 'service-revision': view.revision } });
});

/** The bindings of the document operations in published order. */
export const documentBindings = [listDocuments, createDocument, readDocument, mutateDocument];
