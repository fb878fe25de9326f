/**
 * A document's rich-json (the BlockNote-shaped `document` of the API) as HTML: our own rendering of the
 * same JSON an agent reads, so the page and the API never disagree. Every text is escaped; only
 * http(s) and mailto links become anchors.
 * @module
 */
import { escapeHtml } from '../escape-html.ts';

interface InlineText {
  type: 'text';
  text: string;
  styles?: Record<string, unknown>;
}
interface InlineLink {
  type: 'link';
  href: string;
  content: InlineText[];
}
type Inline = InlineText | InlineLink;

interface RichBlock {
  id: string;
  type: string;
  props?: Record<string, unknown>;
  content?: Inline[] | { type: 'tableContent'; rows: { cells: unknown[] }[] };
  children?: RichBlock[];
}

const SAFE_HREF = /^(?:https?:|mailto:)/i;

function textHtml(t: InlineText): string {
  let html = escapeHtml(t.text);
  const s = t.styles ?? {};
  if (s.code) html = `<code>${html}</code>`;
  if (s.bold) html = `<strong>${html}</strong>`;
  if (s.italic) html = `<em>${html}</em>`;
  if (s.underline) html = `<u>${html}</u>`;
  if (s.strike) html = `<s>${html}</s>`;
  return html;
}

function inlineHtml(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return (content as Inline[])
    .map((item) => {
      if (item.type === 'link') {
        const inner = item.content.map(textHtml).join('');
        return SAFE_HREF.test(item.href) ? `<a href="${escapeHtml(item.href)}" rel="nofollow noopener">${inner}</a>` : inner;
      }
      return item.type === 'text' ? textHtml(item) : '';
    })
    .join('');
}

function cellHtml(cell: unknown): string {
  // A cell is an inline array, or `{ type: 'tableCell', content: [...] }` in newer editor versions.
  if (Array.isArray(cell)) return inlineHtml(cell);
  if (cell && typeof cell === 'object' && 'content' in cell) return inlineHtml((cell as { content: unknown }).content);
  return '';
}

function blockHtml(b: RichBlock): string {
  const props = b.props ?? {};
  const id = escapeHtml(b.id);
  const children = b.children?.length ? `<div class="children">${blocksHtml(b.children)}</div>` : '';
  const content = b.content;
  switch (b.type) {
    case 'heading': {
      const level = Math.min(6, Math.max(1, Number(props.level) || 1) + 1); // the page title is the h1
      return `<h${level} id="b-${id}">${inlineHtml(content)}</h${level}>${children}`;
    }
    case 'bulletListItem':
    case 'numberedListItem':
      return `<li id="b-${id}">${inlineHtml(content)}${children}</li>`; // inside the list blocksHtml opens
    case 'checkListItem': {
      const checked = props.checked === true;
      return `<p id="b-${id}" class="check"><span aria-hidden="true">${checked ? '&#9745;' : '&#9744;'}</span> <span class="visually-hidden">${checked ? 'done:' : 'to do:'}</span> ${inlineHtml(content)}</p>${children}`;
    }
    case 'quote':
      return `<blockquote id="b-${id}">${inlineHtml(content)}</blockquote>${children}`;
    case 'codeBlock': {
      const language = typeof props.language === 'string' && props.language ? ` data-language="${escapeHtml(props.language)}"` : '';
      const code = Array.isArray(content) ? (content as Inline[]).map((c) => (c.type === 'text' ? c.text : '')).join('') : '';
      return `<pre id="b-${id}"${language}><code>${escapeHtml(code)}</code></pre>${children}`;
    }
    case 'table': {
      const rows = content && !Array.isArray(content) && content.type === 'tableContent' ? content.rows : [];
      const body = rows.map((r, i) => `<tr>${r.cells.map((c) => (i === 0 ? `<th scope="col">${cellHtml(c)}</th>` : `<td>${cellHtml(c)}</td>`)).join('')}</tr>`).join('');
      return `<div class="table" id="b-${id}"><table>${body}</table></div>${children}`;
    }
    case 'paragraph':
      return `<p id="b-${id}">${inlineHtml(content)}</p>${children}`;
    default:
      return `<p id="b-${id}" class="meta">(a ${escapeHtml(b.type)} block, shown in the editor only)</p>${children}`;
  }
}

const LIST_TAG: Readonly<Record<string, 'ul' | 'ol'>> = { bulletListItem: 'ul', numberedListItem: 'ol' };

/** Blocks in order; a run of list items of one kind is one list, so a numbered list counts 1, 2, 3. */
function blocksHtml(blocks: readonly RichBlock[]): string {
  const out: string[] = [];
  for (let i = 0; i < blocks.length; ) {
    const tag = LIST_TAG[blocks[i]!.type];
    if (tag === undefined) {
      out.push(blockHtml(blocks[i++]!));
      continue;
    }
    const items: string[] = [];
    while (i < blocks.length && LIST_TAG[blocks[i]!.type] === tag) items.push(blockHtml(blocks[i++]!));
    out.push(`<${tag}>${items.join('')}</${tag}>`);
  }
  return out.join('\n');
}

/** The HTML of a rich-json document (`{ type: 'blocks', blocks }`), given as its JSON text. */
export function richJsonHtml(documentJson: string): string {
  const doc = JSON.parse(documentJson) as { blocks?: RichBlock[] };
  const blocks = doc.blocks ?? [];
  return blocks.length ? blocksHtml(blocks) : '<p class="meta">This document has no blocks yet.</p>';
}

/** The http(s) links a rich-json document cites, in document order, each once: its citations. */
export function citationsOf(documentJson: string): { href: string; text: string }[] {
  const out: { href: string; text: string }[] = [];
  const seen = new Set<string>();
  const visitInline = (content: unknown) => {
    if (!Array.isArray(content)) return;
    for (const item of content as Inline[]) {
      if (item.type === 'link' && /^https?:/i.test(item.href) && !seen.has(item.href)) {
        seen.add(item.href);
        out.push({ href: item.href, text: item.content.map((c) => c.text).join('') });
      }
    }
  };
  const visit = (blocks: readonly RichBlock[]) => {
    for (const b of blocks) {
      const c = b.content;
      if (Array.isArray(c)) visitInline(c);
      else if (c && c.type === 'tableContent') for (const r of c.rows) for (const cell of r.cells) visitInline(Array.isArray(cell) ? cell : (cell as { content?: unknown })?.content);
      if (b.children) visit(b.children);
    }
  };
  visit((JSON.parse(documentJson) as { blocks?: RichBlock[] }).blocks ?? []);
  return out;
}
