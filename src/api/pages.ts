/**
 * Every page the API answers, rendered in one module: the public page of a released projection (HTML
 * and Markdown), the person's document page (read-only, for an explicitly opened local dev server)
 * and its sign-in note, the review page's sign-in note, the not-released note and the home page. The
 * operations (./operations/meta.ts, ./operations/public-pages.ts) read what a page shows and set the
 * headers; this module turns it into text, escaping every value. A document's body is
 * ./rich-html.ts's, the one rendering of a document as HTML (the browser app shows the same).
 * @remarks Public pages come from Eta templates with auto-escaping on: every `<%= %>` is HTML-escaped,
 * and the one raw output (`<%~ it.body %>` in the layout) is the already-escaped inner template, so
 * projection text can never become markup. Only http(s) URIs become links, with
 * `rel="nofollow noopener"`. Markdown escapes the characters that would turn text into links,
 * emphasis or HTML; an edition's Markdown is its exact synthesis text.
 * @module
 */
import { Eta } from 'eta/core';
import { escapeHtml } from '../escape-html.ts';
import { operationPath } from '../contract/links.ts';
import { contract } from '../contract/operations.ts';
import { richJsonHtml } from './rich-html.ts';

/** What a page shows: the projection value and where it lives. */
export interface PageInput {
  kind: 'entity' | 'inquiry' | 'edition';
  value: Record<string, unknown>;
  canonicalUrl: string;
  revision: string;
}

const eta = new Eta({ autoEscape: true, autoTrim: false, useWith: false });

const LAYOUT = `<!doctype html>
<html lang="<%= it.lang %>"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title><%= it.title %></title>
<link rel="canonical" href="<%= it.canonicalUrl %>"><link rel="alternate" type="text/markdown" href="<%= it.canonicalUrl %>.md">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48em;margin:2em auto;padding:0 1em;color:#1a1a1a}dt{font-weight:600}dd{margin:0 0 .5em 1em}code{background:#f2f2f2;padding:0 .2em;word-break:break-all}pre{white-space:pre-wrap;background:#f7f7f7;padding:1em}.meta{color:#555;font-size:.9em}</style>
</head><body><main>
<p class="meta">Released <%= it.kindLabel %> &middot; revision <code><%= it.revision %></code></p>
<h1><%= it.title %></h1>
<%~ it.body %>
<p class="meta">This page is an immutable public projection at an exact revision. <a href="<%= it.canonicalUrl %>.md">Markdown</a></p>
</main></body></html>
`;

const ENTITY = `<% if (it.v.description) { %><p><%= it.v.description %></p><% } %>
<dl><dt>Concepts</dt><dd><%= it.v.concepts.join(', ') %></dd><dt>Language</dt><dd><%= it.v.language %></dd>
<% if (it.v.identifiers.length) { %><dt>Identifiers</dt><% it.v.identifiers.forEach(function (id) { %><dd><% if (it.linkable(id)) { %><a href="<%= id %>" rel="nofollow noopener"><%= id %></a><% } else { %><code><%= id %></code><% } %></dd><% }) %><% } %></dl>
<h2>Statements</h2>
<% if (!it.v.statements.length) { %><p>No statements at this revision.</p><% } %>
<ul><% it.v.statements.forEach(function (s) { %><li><strong><%= s.predicate %></strong> (<%= s.stance %>): <%= it.objectText(s.object) %>
<% if (s.evidence.length) { %><ul><% s.evidence.forEach(function (e) { %><li>Evidence, <%= e.bearing %><% if (e.selector) { %>: &ldquo;<%= e.selector %>&rdquo;<% } %><% if (e.source.kind === 'uri' && it.linkable(e.source.uri)) { %> &mdash; <a href="<%= e.source.uri %>" rel="nofollow noopener"><%= e.source.uri %></a><% } else if (e.source.kind === 'uri') { %> &mdash; <code><%= e.source.uri %></code><% } else { %> &mdash; <%= e.source.name || e.source.entityId %><% } %></li><% }) %></ul><% } %></li><% }) %></ul>`;

const INQUIRY = `<dl><dt>Answer form</dt><dd><%= it.v.answerForm %></dd><dt>Language</dt><dd><%= it.v.language %></dd>
<% if (it.v.parents.length) { %><dt>Part of</dt><% it.v.parents.forEach(function (p) { %><dd><%= p.question || p.inquiryId %></dd><% }) %><% } %></dl>`;

const EDITION = `<p class="meta">Digest (SHA-256 of the exact synthesis bytes): <code><%= it.v.digest %></code> &middot; graph revision <code><%= it.v.graphRevision %></code></p>
<pre><%= it.v.text %></pre>`;

eta.loadTemplate('@layout', LAYOUT);
eta.loadTemplate('@entity', ENTITY);
eta.loadTemplate('@inquiry', INQUIRY);
eta.loadTemplate('@edition', EDITION);

const linkable = (uri: unknown) => typeof uri === 'string' && /^https?:\/\//i.test(uri);

function objectText(o: Record<string, unknown>): string {
  switch (o.kind) {
    case 'entity':
      return String(o.name ?? o.entityId);
    case 'text':
      return `${String(o.text)} [${String(o.language)}]`;
    case 'uri':
      return String(o.uri);
    case 'duration':
      return String(o.iso8601);
    default:
      return String(o.value);
  }
}

function titleOf(input: PageInput): string {
  const v = input.value;
  return String(input.kind === 'entity' ? v.name : input.kind === 'inquiry' ? v.question : v.title);
}

function langOf(input: PageInput): string {
  const lang = input.value.language;
  return typeof lang === 'string' && lang !== 'und' ? lang : 'en';
}

/** The HTML page of a released projection. */
export function renderPublicHtml(input: PageInput): string {
  const body = eta.render(`@${input.kind}`, { v: input.value, linkable, objectText });
  const kindLabel = input.kind === 'entity' ? 'entity' : input.kind === 'inquiry' ? 'inquiry' : 'edition';
  return eta.render('@layout', { title: titleOf(input), lang: langOf(input), canonicalUrl: input.canonicalUrl, revision: input.revision, kindLabel, body });
}

/** Escape text for Markdown: no links, emphasis, headings or HTML can come from it. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|~&]/g, (c) => `\\${c}`).replace(/\r?\n/g, ' ');
}

/** The Markdown page of a released projection (an edition: its exact synthesis text). */
export function renderPublicMarkdown(input: PageInput): string {
  const v = input.value;
  if (input.kind === 'edition') return String(v.text);
  const lines = [`# ${escapeMarkdown(titleOf(input))}`, ''];
  if (input.kind === 'entity') {
    if (v.description) lines.push(escapeMarkdown(String(v.description)), '');
    lines.push(`- Concepts: ${escapeMarkdown((v.concepts as string[]).join(', '))}`);
    for (const id of v.identifiers as string[]) lines.push(`- Identifier: <${id.replace(/[<>\s]/g, encodeURIComponent)}>`);
    lines.push('', '## Statements', '');
    for (const s of v.statements as Record<string, unknown>[]) {
      lines.push(`- **${escapeMarkdown(String(s.predicate))}** (${escapeMarkdown(String(s.stance))}): ${escapeMarkdown(objectText(s.object as Record<string, unknown>))}`);
      for (const e of s.evidence as Record<string, unknown>[]) {
        const src = e.source as Record<string, unknown>;
        const where = src.kind === 'uri' ? escapeMarkdown(String(src.uri)) : escapeMarkdown(String(src.name ?? src.entityId));
        lines.push(`  - Evidence, ${escapeMarkdown(String(e.bearing))}${e.selector ? `: ${escapeMarkdown(String(e.selector))}` : ''}, ${where}`);
      }
    }
  } else {
    lines.push(`- Answer form: ${escapeMarkdown(String(v.answerForm))}`);
    for (const p of v.parents as Record<string, unknown>[]) lines.push(`- Part of: ${escapeMarkdown(String(p.question ?? p.inquiryId))}`);
  }
  lines.push('', `Revision ${input.revision}. Canonical page: <${input.canonicalUrl}>`, '');
  return lines.join('\n');
}

// ---- the person's document page ----

/** What the document page shows: the document's title, version and ref, and its rich-json (`documentJson`). */
export interface DocumentPageInput {
  documentRef: string;
  title: string;
  version: number;
  documentJson: string;
}

/** The read-only page of a document: its rich-json as HTML ({@link richJsonHtml}, what the browser app shows too). */
export function renderDocumentPage(input: DocumentPageInput): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(input.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48em;margin:2em auto;padding:0 1em}pre{background:#f4f4f4;padding:.5em;overflow:auto}blockquote{border-left:3px solid #ccc;margin:0;padding-left:1em}.children{margin-left:1.5em}td,th{border:1px solid #ccc;padding:.2em .5em}table{border-collapse:collapse}.meta{color:#666;font-size:.85em}.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}</style>
</head><body>
<h1>${escapeHtml(input.title)}</h1>
<p class="meta">Read-only view &middot; version ${input.version} &middot; ${escapeHtml(input.documentRef)} (local development page)</p>
${richJsonHtml(input.documentJson)}
</body></html>
`;
}

/** The 401 note: the page is for the signed-in person; how to read the document meanwhile. */
export function signInRequiredPage(documentRef: string): string {
  const api = escapeHtml(operationPath(contract.getDocument, { documentRef: documentRef.slice(0, 64) }));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in required</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:2em auto;padding:0 1em}code{background:#f4f4f4;padding:0 .2em}</style>
</head><body>
<h1>Sign-in required</h1>
<p>This page is for the person who owns the document, and this server has no sign-in yet.</p>
<p>Read the document through the API with a bearer token that may see it:</p>
<pre><code>curl -H "Authorization: Bearer $TOKEN" ${api}?format=markdown</code></pre>
<p>A local development server started with <code>--dev-open-document-pages</code> shows this page without sign-in.</p>
</body></html>
`;
}

/** The review page's 401 note: reviews are decided by the signed-in person; the API reads their metadata. */
export function reviewSignInPage(reviewRef: string): string {
  const api = escapeHtml(operationPath(contract.getReview, { reviewRef }));
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in required</title></head><body><main><h1>Sign-in required</h1><p>This review is decided by the person who owns the space, and this server has no sign-in yet.</p><p>Its metadata is readable through the API with a token holding review:read: <code>GET ${api}</code>.</p></main></body></html>\n`;
}

/** The note of a public locator with nothing released at it, as HTML or Markdown. */
export function notReleasedPage(markdown: boolean): string {
  const text = 'Nothing is released at this locator. A public locator resolves only to a released projection at its exact revision.';
  return markdown
    ? `# Not found\n\n${text}\n`
    : `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Not found</title></head><body><main><h1>Not found</h1><p>${text}</p></main></body></html>\n`;
}

// ---- the home page ----

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
export function renderHome(openApiJson: string): string {
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
