/**
 * The HTML of the `browserHref` target: the sign-in note every request gets until sign-in exists, and
 * the read-only page an explicitly opened local dev server shows (`documentPages: 'open'`).
 * @module
 */
import type { FlatBlock } from '../documents/types.ts';
import { isServiceError } from '../errors.ts';
import { escapeHtml } from '../escape-html.ts';
import type { Engine } from '../engine.ts';


function blockHtml(b: FlatBlock): string {
  const md = escapeHtml(b.markdown ?? '');
  switch (b.type) {
    case 'heading': {
      const level = (b.level ?? 1) + 1; // the title is the h1
      return `<h${level}>${md}</h${level}>`;
    }
    case 'bulletListItem':
      return `<p class="li">&bull; ${md}</p>`;
    case 'numberedListItem':
      return `<p class="li">${b.index + 1}. ${md}</p>`;
    case 'checkListItem':
      return `<p class="li">${b.checked ? '&#9745;' : '&#9744;'} ${md}</p>`;
    case 'quote':
      return `<blockquote>${md}</blockquote>`;
    case 'codeBlock':
      return `<pre><code>${escapeHtml(b.code ?? '')}</code></pre>`;
    case 'table':
      return `<table>${(b.rows ?? []).map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('')}</table>`;
    default:
      return `<p>${md}</p>`;
  }
}

/**
 * The page of a document, or null when there is none. Blocks are shown with their own Markdown as
 * text (escaped); a document outside the Markdown grammar is shown as its canonical JSON.
 */
export async function renderDocumentPage(engine: Engine, documentRef: string): Promise<string | null> {
  if (!/^sdoc_[a-f0-9]{48}$/.test(documentRef)) return null;
  const head = await engine.deps.storage.getDocumentHead(documentRef);
  if (!head) return null;
  const actor = { accountId: head.accountId, credentialRef: null, documentRef: null };
  let body: string;
  try {
    const read = await engine.documents.read(actor, documentRef, 'blocks');
    if (read.format !== 'blocks') throw new Error('unexpected representation');
    body = read.blocks
      .map((b) => `<div style="margin-left:${b.depth * 1.5}em" id="${escapeHtml(b.id)}">${blockHtml(b)}</div>`)
      .join('\n');
  } catch (e) {
    if (!isServiceError(e) || e.code !== 'CONFLICT') throw e;
    const read = await engine.documents.read(actor, documentRef, 'rich-json');
    if (read.format !== 'rich-json') throw new Error('unexpected representation');
    body = `<p>This document holds blocks outside the Markdown grammar; its canonical JSON:</p><pre>${escapeHtml(read.document.documentJson)}</pre>`;
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(head.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48em;margin:2em auto;padding:0 1em}pre{background:#f4f4f4;padding:.5em;overflow:auto}blockquote{border-left:3px solid #ccc;margin:0;padding-left:1em}.li{margin:.2em 0}td{border:1px solid #ccc;padding:.2em .5em}table{border-collapse:collapse}.meta{color:#666;font-size:.85em}</style>
</head><body>
<h1>${escapeHtml(head.title)}</h1>
<p class="meta">Read-only view &middot; version ${head.version} &middot; ${escapeHtml(documentRef)} (local development page)</p>
${body}
</body></html>
`;
}

/** The 401 note: the page is for the signed-in person; how to read the document meanwhile. */
export function signInRequiredPage(documentRef: string): string {
  const ref = escapeHtml(documentRef.slice(0, 64));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in required</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:2em auto;padding:0 1em}code{background:#f4f4f4;padding:0 .2em}</style>
</head><body>
<h1>Sign-in required</h1>
<p>This page is for the person who owns the document, and this server has no sign-in yet.</p>
<p>Read the document through the API with a bearer token that may see it:</p>
<pre><code>curl -H "Authorization: Bearer $TOKEN" /api/v1/documents/${ref}?format=markdown</code></pre>
<p>A local development server started with <code>--dev-open-document-pages</code> shows this page without sign-in.</p>
</body></html>
`;
}
