/**
 * Operations about the server itself: the OpenAPI document and the person's document page
 * (browserHref target).
 * @module
 */
import { ServiceError } from '../../errors.ts';
import { renderDocumentPage, signInRequiredPage } from '../document-page.ts';
import { baseHeaders, JSON_TYPE } from '../envelope.ts';
import { bind } from '../bind.ts';
import { contract } from '../../contract/operations.ts';
import type { PlainResponse } from '../types.ts';

/** GET /openapi.json: generated from the operation registry, built on first use. */
const getOpenApi = bind(contract.getOpenApi, (ctx) => {
  const headers = baseHeaders(ctx, JSON_TYPE);
  headers['cache-control'] = 'public, max-age=300';
  return { status: 200, headers, body: ctx.settings.openApiJson() };
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
const documentPage = bind(contract.getDocumentPage, async (ctx, input) => {
  if (ctx.settings.documentPages !== 'open') return htmlResponse(ctx, 401, signInRequiredPage(input.path.documentRef));
  const html = await renderDocumentPage(ctx.engine, input.path.documentRef);
  if (html === null) throw new ServiceError('NOT_FOUND', 'The document was not found.');
  return htmlResponse(ctx, 200, html);
});

/** The bindings of the meta operations. */
export const metaBindings = [getOpenApi, documentPage];
