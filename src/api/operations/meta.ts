/**
 * Operations about the server itself: the OpenAPI document and the person's document page
 * (browserHref target).
 * @module
 */
import { ServiceError } from '../../errors.ts';
import { renderDocumentPage, renderHome, signInRequiredPage } from '../pages.ts';
import { accountActor } from '../../actor.ts';
import type { Engine } from '../../engine.ts';
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
  const page = await documentPageInput(ctx.engine, input.path.documentRef);
  if (page === null) throw new ServiceError('NOT_FOUND', 'The document was not found.');
  return htmlResponse(ctx, 200, renderDocumentPage(page));
});

/** What the document page shows, read as its owner (its rich-json), or null when there is no such document. */
async function documentPageInput(engine: Engine, documentRef: string) {
  if (!/^sdoc_[a-f0-9]{48}$/.test(documentRef)) return null;
  const head = await engine.deps.storage.getDocumentHead(documentRef);
  if (!head) return null;
  const read = await engine.documents.read(accountActor(head.accountId), documentRef, 'rich-json');
  if (read.format !== 'rich-json') throw new Error('unexpected representation');
  return { documentRef, title: head.title, version: head.version, documentJson: read.document.documentJson };
}

/** GET /: a small HTML page of links (OpenAPI, reference, MCP), until a browser app replaces it. */
const homePage = bind(contract.getHomePage, (ctx) => {
  const response = htmlResponse(ctx, 200, renderHome(ctx.settings.openApiJson()));
  response.headers['cache-control'] = 'public, max-age=300';
  return response;
});

/** The bindings of the meta operations. */
export const metaBindings = [getOpenApi, documentPage, homePage];
