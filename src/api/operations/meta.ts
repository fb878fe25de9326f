/**
 * Operations about the server itself: the OpenAPI document and the person's document page
 * (browserHref target).
 * @module
 */
import { ServiceError } from '../../errors.ts';
import { Patterns } from '../../ids.ts';
import { renderDocumentPage, signInRequiredPage } from '../document-page.ts';
import { baseHeaders, JSON_TYPE } from '../envelope.ts';
import { defineOperation } from '../registry/operation.ts';
import { pathId } from '../registry/params.ts';
import type { PlainResponse } from '../types.ts';

/** GET /openapi.json: generated from the operation registry, built on first use. */
export const getOpenApi = defineOperation({
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
  responses: { 200: { description: 'The OpenAPI 3.1 document.', text: { 'application/json': 'An OpenAPI 3.1 document.' }, headers: ['Cache-Control'] } },
  run(ctx) {
    const headers = baseHeaders(ctx, JSON_TYPE);
    headers['cache-control'] = 'public, max-age=300';
    return { status: 200, headers, body: ctx.settings.openApiJson() };
  },
});

function htmlResponse(ctx: Parameters<typeof baseHeaders>[0], status: number, html: string): PlainResponse {
  const headers = baseHeaders(ctx, 'text/html; charset=utf-8');
  headers['content-security-policy'] = "default-src 'none'; style-src 'unsafe-inline'";
  headers['x-content-type-options'] = 'nosniff';
  headers['cache-control'] = 'no-store';
  return { status, headers, body: html };
}

/**
 * GET /documents/{documentRef}: the page `browserHref` points at. It is a page for the signed-in
 * person, never for whoever holds the link: until sign-in exists it answers 401 with a short HTML
 * note, unless the embedding program opened it explicitly (`documentPages: 'open'`, a local dev flag).
 */
export const documentPage = defineOperation({
  operationId: 'getDocumentPage',
  method: 'GET',
  path: '/documents/{documentRef}',
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
  async run(ctx, input) {
    if (ctx.settings.documentPages !== 'open') return htmlResponse(ctx, 401, signInRequiredPage(input.path.documentRef));
    const html = await renderDocumentPage(ctx.engine, input.path.documentRef);
    if (html === null) throw new ServiceError('NOT_FOUND', 'The document was not found.');
    return htmlResponse(ctx, 200, html);
  },
});

/** The meta operations. */
export const metaOperations = [getOpenApi, documentPage];
