/**
 * The document operations: list, create, read (three representations, conditional) and mutate.
 * Validation, boundaries, idempotency and preconditions are the documents service's; this file maps
 * them to HTTP.
 * @module
 */
import * as v from 'valibot';
import { ServiceError } from '../../errors.ts';
import { Patterns } from '../../ids.ts';
import { DocumentCreateRequestSchema, DocumentMutationRequestSchema } from '../../documents/schemas.ts';
import { DOCUMENT_FORMATS, requireFormat } from '../../documents/limits.ts';
import { documentDataBody, documentDataJson, receiptJson } from '../document-json.ts';
import type { RequestContext } from '../context.ts';
import { ok, type JsonPieces } from '../envelope.ts';
import { exceedsBytes, weakEtag } from '../http-util.ts';
import { notModified, representationResponse } from '../representation.ts';
import { defineOperation } from '../registry/operation.ts';
import { IdempotencyKeyHeader, IfNoneMatchHeader, IfRevisionHeader, pageQuery, pathId } from '../registry/params.ts';
import {
  BlocksEnvelopeSchema,
  DocumentEnvelopeSchema,
  DocumentMutationEnvelopeSchema,
  DocumentPageEnvelopeSchema,
} from '../response-schemas.ts';
import { MAX_RESPONSE_BODY } from '../types.ts';

const DATA_HEAD = '{"v":1,"document":';

const actorOf = (ctx: RequestContext) => ctx.credential!.actor;
const DocumentFormatSchema = v.pipe(v.picklist(DOCUMENT_FORMATS), v.description('Default rich-json.'));
const documentRef = pathId(Patterns.documentRef, 'A documentRef: sdoc_ and 48 lowercase hex characters.');

/** GET /api/v1/documents: a page `{items, nextCursor}`. */
export const listDocuments = defineOperation({
  operationId: 'listDocuments',
  method: 'GET',
  path: '/api/v1/documents',
  audience: 'public',
  tag: 'documents',
  summary: 'List documents',
  description:
    'Newest updatedAt first. An account-wide credential sees every API-reachable document of its account; a document-bound credential sees only its bound document. Summaries carry no bodies.',
  auth: 'bearer',
  allScopes: ['document:read'],
  charge: 'before',
  input: { query: pageQuery },
  responses: {
    200: { description: 'A page of document summaries.', json: DocumentPageEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: bad limit or cursor (a cursor of another list or credential).' },
  },
  async run(ctx, input) {
    const page = await ctx.engine.documents.list(actorOf(ctx), { limit: input.query.limit, cursor: input.query.cursor });
    return ok(ctx, 200, JSON.stringify(page));
  },
});

/** POST /api/v1/documents: 201 created, 200 on an exact replay. */
export const createDocument = defineOperation({
  operationId: 'createDocument',
  method: 'POST',
  path: '/api/v1/documents',
  audience: 'public',
  tag: 'documents',
  summary: 'Create a document',
  description: 'Account-wide credentials only (a document-bound credential gets 403). Starts no research and publishes nothing.',
  auth: 'bearer',
  allScopes: ['document:create'],
  charge: 'before',
  input: {
    headers: { idempotencyKey: IdempotencyKeyHeader },
    body: { schema: DocumentCreateRequestSchema, component: 'DocumentCreateRequest' },
  },
  responses: {
    200: { description: 'Exact replay of an earlier creation (receipt.idempotency replayed).', json: DocumentEnvelopeSchema, headers: ['Service-Revision'] },
    201: { description: 'Created (receipt.idempotency created).', json: DocumentEnvelopeSchema, headers: ['Service-Revision', 'Location'] },
    400: { description: 'INVALID_REQUEST: bad body; IDEMPOTENCY_REQUIRED: missing Idempotency-Key.' },
    409: { description: 'IDEMPOTENCY_CONFLICT: the key is bound to a different body.' },
  },
  async run(ctx, input) {
    const out = await ctx.engine.documents.create(actorOf(ctx), { idempotencyKey: input.headers.idempotencyKey, body: input.body });
    const view = out.document;
    return ok(ctx, out.idempotency.idempotency === 'replayed' ? 200 : 201, documentDataJson(view), {
      receipt: out.idempotency,
      headers: { 'service-revision': view.revision, location: `/api/v1/documents/${view.documentRef}` },
    });
  },
});

/**
 * GET /api/v1/documents/{documentRef}?format=rich-json|blocks|markdown.
 * @remarks With If-None-Match the cheap head is read first, so a 304 costs the server almost nothing;
 * it is still charged like every authenticated request.
 */
export const readDocument = defineOperation({
  operationId: 'getDocument',
  method: 'GET',
  path: '/api/v1/documents/{documentRef}',
  audience: 'public',
  tag: 'documents',
  summary: 'Read a document in one of three representations',
  description:
    'All representations carry the same Service-Revision. When the document holds blocks outside the Markdown grammar, blocks and markdown answer 409 CONFLICT and rich-json must be used.',
  auth: 'bearer',
  allScopes: ['document:read'],
  charge: 'before',
  input: {
    path: { documentRef },
    query: {
      format: {
        schema: DocumentFormatSchema,
        description:
          'rich-json (default): the exact canonical editor JSON; blocks: a flat list of authored blocks; markdown: text/markdown with the loss count. Bad format: 400.',
      },
    },
    headers: { ifNoneMatch: IfNoneMatchHeader },
  },
  responses: {
    200: {
      description: 'The document: rich-json (Document) or blocks as JSON, markdown as text/markdown with X-Service-Markdown-Loss-Count.',
      json: v.union([DocumentEnvelopeSchema, BlocksEnvelopeSchema]),
      text: { 'text/markdown': 'format=markdown; X-Service-Markdown-Loss-Count is set.' },
      headers: ['Service-Revision', 'ETag', 'X-Service-Markdown-Loss-Count'],
    },
    304: { description: 'Not modified since the If-None-Match ETag: empty body, current Service-Revision and ETag.', headers: ['Service-Revision', 'ETag'] },
    400: { description: 'INVALID_REQUEST: bad format.' },
    404: { description: 'NOT_FOUND: unknown document or outside the boundary (indistinguishable).' },
    409: { description: 'CONFLICT: the document holds blocks outside the Markdown grammar; use format=rich-json.' },
  },
  async run(ctx, input) {
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
  },
});

/** POST /api/v1/documents/{documentRef}/mutations: 200 with `{v, document, receipt}`. */
export const mutateDocument = defineOperation({
  operationId: 'mutateDocument',
  method: 'POST',
  path: '/api/v1/documents/{documentRef}/mutations',
  audience: 'public',
  tag: 'documents',
  summary: 'Apply one semantic block mutation',
  description:
    'create, edit, move or delete blocks, guarded by the revision precondition and an idempotency key. The whole mutation applies or none of it does.',
  auth: 'bearer',
  allScopes: ['document:write'],
  charge: 'before',
  input: {
    path: { documentRef },
    headers: { idempotencyKey: IdempotencyKeyHeader, ifRevision: IfRevisionHeader },
    body: { schema: DocumentMutationRequestSchema, component: 'DocumentMutationRequest' },
  },
  responses: {
    200: { description: 'Applied (or replayed): the new document and the mutation receipt.', json: DocumentMutationEnvelopeSchema, headers: ['Service-Revision'] },
    400: { description: 'INVALID_REQUEST: invalid body; IDEMPOTENCY_REQUIRED: missing Idempotency-Key.' },
    404: { description: 'NOT_FOUND: unknown document or outside the boundary.' },
    409: {
      description:
        'IDEMPOTENCY_CONFLICT: the key is bound to a different intent; CONFLICT: the mutation conflicts with the exact document structure (a fieldError names the fence).',
    },
    412: { description: 'PRECONDITION_FAILED: stale Service-If-Revision; read, replan, resend with the new revision.' },
    428: { description: 'PRECONDITION_REQUIRED: Service-If-Revision is missing.' },
  },
  async run(ctx, input) {
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
  },
});

/** The document operations in published order. */
export const documentOperations = [listDocuments, createDocument, readDocument, mutateDocument];
