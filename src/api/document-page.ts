/**
 * GET /documents/{documentRef}: the `browserHref` target, a plain read-only HTML page of a document.
 * @remarks LOCAL DEV ONLY. The browser app (with a signed-in person) is out of this project's scope;
 * the dev server renders the page without any authentication so a person can follow browserHref on
 * their own machine. The listener binds 127.0.0.1 by default; embedders that expose the server must
 * pass `documentPages: false` to `createApiHandler`.
 * @module
 */
import type { FlatBlock } from '../documents/types.ts';
import { isServiceError } from '../errors.ts';
import type { Engine } from '../engine.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML-escape text. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

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
