/**
 * The contract of the operations about the server itself and of the pages: the OpenAPI document,
 * the person's document and review pages (`browserHref` targets) and the public locator pages /k/.
 * @module
 */
import * as v from 'valibot';
import { Patterns } from '../ids.ts';
import { operation } from './define.ts';
import { LINKED_PATHS } from './links.ts';
import { IfNoneMatchHeader, pathId } from './params.ts';
import { OpenApiDocumentSchema } from './response-schemas.ts';

/** GET /openapi.json: generated from the operation registry, built on first use. */
export const getOpenApi = operation({
  operationId: 'getOpenApi',
  method: 'GET',
  path: '/openapi.json',
  audience: 'public',
  tag: 'meta',
  summary: 'This OpenAPI document',
  description: 'The OpenAPI 3.1 document of this API, generated from the operation registry.',
  auth: 'none',
  charge: 'never',
  input: {},
  responses: { 200: { description: 'The OpenAPI 3.1 document.', json: OpenApiDocumentSchema, headers: ['Cache-Control'] } },
});

/**
 * GET /documents/{documentRef}: the page `browserHref` points at. It is a page for the signed-in
 * person, never for whoever holds the link: until sign-in exists it answers 401 with a short HTML
 * note, unless the embedding program opened it explicitly (`documentPages: 'open'`, a local dev flag).
 */
export const getDocumentPage = operation({
  operationId: 'getDocumentPage',
  method: 'GET',
  path: LINKED_PATHS.documentPage,
  audience: 'local',
  tag: 'meta',
  summary: "The person's page of a document",
  description: '401 with an HTML note until sign-in exists; with documentPages "open" a read-only HTML view.',
  auth: 'none',
  charge: 'never',
  input: { path: { documentRef: pathId(Patterns.documentRef, 'A documentRef.') } },
  responses: {
    200: { description: 'The read-only page (documentPages "open" only).', text: { 'text/html': 'HTML.' } },
    401: { description: 'Sign-in required: an HTML note on how to read the document through the API.', text: { 'text/html': 'HTML.' } },
    404: { description: 'NOT_FOUND (documentPages "open" only).' },
  },
});

/** GET /k/{kind}/{artifactId}/{revision}[.md]: the public page of a released projection. */
export const getPublicPage = operation({
  operationId: 'getPublicPage',
  method: 'GET',
  path: LINKED_PATHS.publicPage,
  audience: 'local',
  tag: 'public',
  summary: 'The public page of a released projection (HTML or Markdown)',
  description: 'HTML by default; Markdown when the path ends in .md or Accept is text/markdown. Immutable; 404 for anything unreleased.',
  auth: 'none',
  charge: 'never',
  input: {
    path: {
      // Checked by the page itself: anything malformed answers the HTML (or Markdown) not-found page.
      kind: { schema: v.string(), description: 'entity, inquiry or edition.', required: true },
      artifactId: { schema: v.string(), description: 'The artifact id (kent_, kinq_ or kedn_ and 24 of [a-z0-9]).', required: true },
      revision: { schema: v.string(), description: 'The graph revision (entity, inquiry) or edition digest, optionally followed by .md.', required: true },
    },
    headers: { ifNoneMatch: IfNoneMatchHeader, accept: { name: 'Accept', schema: v.string(), description: 'text/markdown for the Markdown page.' } },
  },
  responses: {
    200: { description: 'The page.', text: { 'text/html': 'The HTML page.', 'text/markdown': 'The Markdown page.' }, headers: ['ETag', 'Cache-Control'] },
    304: { description: 'Not modified.', headers: ['ETag', 'Cache-Control'] },
    404: { description: 'Nothing released at this locator.', text: { 'text/html': 'A short HTML note.', 'text/markdown': 'A short Markdown note.' } },
  },
});

/**
 * GET /reviews/{reviewRef}: the review page `browserHref` points at. It is for the signed-in person;
 * this server has no sign-in, so it answers 401 with a short HTML note (like the document pages).
 */
export const getReviewPage = operation({
  operationId: 'getReviewPage',
  method: 'GET',
  path: LINKED_PATHS.reviewPage,
  audience: 'local',
  tag: 'meta',
  summary: "The person's review page",
  description: '401 with an HTML note: reviews are decided by the signed-in person; until sign-in exists, through the operator API.',
  auth: 'none',
  charge: 'never',
  input: { path: { reviewRef: pathId(Patterns.reviewRef, 'A reviewRef.') } },
  responses: { 401: { description: 'Sign-in required.', text: { 'text/html': 'HTML.' } }, 404: { description: 'NOT_FOUND: not a reviewRef.' } },
});

/** GET /: a small HTML page of links (OpenAPI, reference, MCP), until a browser app replaces it. */
export const getHomePage = operation({
  operationId: 'getHomePage',
  method: 'GET',
  path: '/',
  audience: 'local',
  tag: 'meta',
  summary: 'Home page',
  description: 'A small HTML page linking the OpenAPI document, the list of operations and the MCP endpoint.',
  auth: 'none',
  charge: 'never',
  input: {},
  responses: { 200: { description: 'The home page.', text: { 'text/html': 'HTML.' } } },
});
