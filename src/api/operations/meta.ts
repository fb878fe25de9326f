/**
 * Operations about the server itself: the OpenAPI document and the person's document page
 * (browserHref target).
 * @module
 */
import { ServiceError } from '../../errors.ts';
import { escapeHtml } from '../../escape-html.ts';
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

/** The home page's reference: each published operation's method, path and summary, from the OpenAPI document. */
function operationList(openApiJson: string): string {
  const doc = JSON.parse(openApiJson) as { paths?: Record<string, Record<string, { summary?: string }>> };
  const rows: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op !== 'object' || op === null || !('summary' in op)) continue;
      rows.push(`<li><code>${escapeHtml(method.toUpperCase())} ${escapeHtml(path)}</code> ${escapeHtml(op.summary ?? '')}</li>`);
    }
  }
  return rows.join('\n');
}

let homeHtml: { source: string; html: string } | null = null;

/** The home page: links to the OpenAPI document, the API reference and the MCP endpoint. */
function renderHome(openApiJson: string): string {
  if (homeHtml?.source === openApiJson) return homeHtml.html;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Knowledge workspace API</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}code{font-size:.9em}li{margin:.2rem 0}</style></head>
<body><h1>Knowledge workspace API</h1>
<p>This server answers agents: its API lives under <code>/api/v1</code> and takes <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<ul>
<li><a href="openapi.json">OpenAPI document</a> (<code>/openapi.json</code>): every operation, its inputs and answers</li>
<li><a href="#operations">API reference</a>: the operations, below</li>
<li>MCP endpoint: <code>/mcp</code> (streamable HTTP, for MCP clients; not a browser page)</li>
</ul>
<p>Try: <code>curl -H "Authorization: Bearer $TOKEN" /api/v1/auth</code> (relative to this server).</p>
<h2 id="operations">Operations</h2>
<ul>
${operationList(openApiJson)}
</ul></body></html>
`;
  homeHtml = { source: openApiJson, html };
  return html;
}

/** GET /: a small HTML page of links (OpenAPI, reference, MCP), until a browser app replaces it. */
const homePage = bind(contract.getHomePage, (ctx) => {
  const response = htmlResponse(ctx, 200, renderHome(ctx.settings.openApiJson()));
  response.headers['cache-control'] = 'public, max-age=300';
  return response;
});

/** The bindings of the meta operations. */
export const metaBindings = [getOpenApi, documentPage, homePage];
