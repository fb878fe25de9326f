/**
 * The contract of the principal and document operations: list, create, read (three representations,
 * conditional) and mutate.
 * @module
 */
import * as v from 'valibot';
import { DOCUMENT_FORMATS, DocumentCreateRequestSchema, DocumentMutationRequestSchema, Limits } from '../documents/schemas.ts';
import { Patterns } from '../ids.ts';
import { operation } from './define.ts';
import { IdempotencyKeyHeader, IfNoneMatchHeader, IfRevisionHeader, pageQuery, pathId } from './params.ts';
import {
  BlocksEnvelopeSchema,
  DocumentEnvelopeSchema,
  DocumentMutationEnvelopeSchema,
  DocumentPageEnvelopeSchema,
  PrincipalEnvelopeSchema,
} from './response-schemas.ts';

const DocumentFormatSchema = v.pipe(v.picklist(DOCUMENT_FORMATS, `must be ${DOCUMENT_FORMATS.join(', ')}`), v.description('Default rich-json.'));
const documentRef = pathId(Patterns.documentRef, 'A documentRef: sdoc_ and 48 lowercase hex characters.');

/** The Principal, after charging this request (remainingBudget counts it). */
export const getAuth = operation({
  operationId: 'getAuth',
  method: 'GET',
  path: '/api/v1/auth',
  audience: 'public',
  tag: 'auth',
  summary: 'Read the principal of the bearer token',
  description: 'The principal, its remaining request budget and budgets. A document-bound credential also receives its documentRef and browserHref.',
  auth: 'bearer',
  charge: 'before',
  researchBudget: true,
  input: {},
  responses: {
    200: { description: 'The principal.', json: PrincipalEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: X-Request-Id is malformed.' },
  },
});

/** GET /api/v1/documents: a page `{items, nextCursor}`. */
export const listDocuments = operation({
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
});

/** POST /api/v1/documents: 201 created, 200 on an exact replay. */
export const createDocument = operation({
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
});

/**
 * GET /api/v1/documents/{documentRef}?format=rich-json|blocks|markdown.
 * @remarks With If-None-Match the cheap head is read first, so a 304 costs the server almost nothing;
 * it is still charged like every authenticated request.
 */
export const getDocument = operation({
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
});

/** POST /api/v1/documents/{documentRef}/mutations: 200 with `{v, document, receipt}`. */
export const mutateDocument = operation({
  operationId: 'mutateDocument',
  method: 'POST',
  path: '/api/v1/documents/{documentRef}/mutations',
  audience: 'public',
  tag: 'documents',
  summary: 'Apply one semantic block mutation',
  description:
    `create, edit, move or delete blocks, guarded by the revision precondition and an idempotency key. The whole mutation applies or none of it does. One create adds at most ${Limits.createBlocksMax} top-level blocks and at most ${Limits.affectedMax} blocks counting their children (more: 400 INVALID_REQUEST naming mutation.blocks; nothing is written).`,
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
    400: { description: `INVALID_REQUEST: invalid body (among others a create of more than ${Limits.affectedMax} blocks with their children, naming mutation.blocks), a malformed Idempotency-Key or Service-If-Revision; IDEMPOTENCY_REQUIRED: missing Idempotency-Key.` },
    404: { description: 'NOT_FOUND: unknown document or outside the boundary.' },
    409: {
      description:
        'IDEMPOTENCY_CONFLICT: the key is bound to a different intent; CONFLICT: the mutation conflicts with the exact document structure (a fieldError names the fence).',
    },
    412: { description: 'PRECONDITION_FAILED: stale Service-If-Revision; read, replan, resend with the new revision.' },
    428: { description: 'PRECONDITION_REQUIRED: Service-If-Revision is missing.' },
  },
});
