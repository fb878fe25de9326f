/**
 * The public pages of released projections, as HTML and as Markdown.
 * @remarks HTML comes from Eta templates with auto-escaping on: every `<%= %>` is HTML-escaped, and
 * the one raw output (`<%~ it.body %>` in the layout) is the already-escaped inner template, so
 * projection text can never become markup. Only
 * http(s) URIs become links, with `rel="nofollow noopener"`. Markdown escapes the characters that
 * would turn text into links, emphasis or HTML; an edition's Markdown is its exact synthesis text.
 * @module
 */
import { Eta } from 'eta/core';

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
export function escapeMarkdown(text: string): string {
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
