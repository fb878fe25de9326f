/**
 * The document-level Markdown (GFM) projection of a block tree, with an exact account of what it loses.
 * @module
 */
import { blockProps, extraOf } from './blocknote.ts';
import { inlineToMarkdown, parseInline } from './inline-markdown.ts';
import { isGrammarBlock, type BlockRecord } from './model.ts';

/** One block of the tree, walked in document order (pre-order; depth 0 is the root level). */
export interface ProjectionEntry {
  id: string;
  rec: BlockRecord;
  depth: number;
  parentType: string | null;
  indexInParent: number;
}

/** One thing the Markdown cannot say about one block. */
export interface MarkdownLoss {
  blockId: string;
  reason: string;
}

/** The projection, or the ids of the blocks that keep the document from having one (a 409). */
export type MarkdownProjection = { markdown: string; losses: MarkdownLoss[] } | { outsideGrammar: string[] };

const LIST_TYPES = new Set(['bulletListItem', 'numberedListItem', 'checkListItem']);
const NAMES: Record<string, string> = {
  paragraph: 'a paragraph',
  heading: 'a heading',
  quote: 'a quote',
  codeBlock: 'a code block',
  table: 'a table',
};
/** Inline styles Markdown carries; any other style key is a loss. */
const CARRIED_STYLES = new Set(['bold', 'italic', 'strike', 'code']);
const STYLE_LOSS: Record<string, string> = {
  underline: 'underline',
  textColor: 'text color in the text',
  backgroundColor: 'background color in the text',
};
const PROP_LOSS: Record<string, string> = {
  textColor: 'text color',
  backgroundColor: 'background color',
  textAlignment: 'text alignment',
  isToggleable: 'toggleable heading',
};

interface Frame {
  id: string;
  type: string;
  nests: boolean;
  childIndent: string;
  flattened: boolean;
}

interface Chunk {
  text: string;
  list: 'ul' | 'ol' | null;
  indent: number;
  /** id of a list item with no text: a blank line after it would end it */
  emptyItem?: string;
}

/**
 * Project a block tree to GFM Markdown.
 * @remarks Headings `#`×level, bullets `- `, numbered items `N. ` (numbered by position among
 * consecutive numbered siblings), check items `- [ ] ` / `- [x] `, quotes `> `, fenced code (fence
 * longer than any run inside), tables as pipe tables with the first row as header. List items nest
 * their children by indentation; children of any other block follow it at its level, and that is
 * recorded as a loss. Losses are exact: one entry per lost kind of thing per block (extra props and
 * styles, a line break in a heading or a table cell, flattened children, …) and none for a tree of
 * plain grammar blocks nested only under list items. Empty paragraphs have no Markdown form and are
 * left out without a loss. Any block outside the grammar makes the answer `{ outsideGrammar }`.
 */
export function projectMarkdown(blocks: Iterable<ProjectionEntry>): MarkdownProjection {
  const outside: string[] = [];
  const chunks: Chunk[] = [];
  const losses: MarkdownLoss[] = [];
  const frames: Frame[] = [];
  const previous: ({ type: string; number: number } | undefined)[] = [];

  for (const { id, rec, depth, indexInParent } of blocks) {
    if (!isGrammarBlock(rec)) outside.push(id);
    if (outside.length) continue;
    frames.length = depth;
    previous.length = depth + 1;
    if (indexInParent === 0) previous[depth] = undefined;
    const parent = depth > 0 ? frames[depth - 1] : undefined;
    if (parent && !parent.nests && !parent.flattened) {
      parent.flattened = true;
      losses.push({ blockId: parent.id, reason: `children of ${NAMES[parent.type] ?? 'a block'} are flattened` });
    }
    const indent = parent?.childIndent ?? '';
    const lost = new Set<string>();
    const props = { ...blockProps(rec), ...extraOf(rec)?.props };
    const prev = previous[depth];
    let number = 0;
    if (rec.t === 'numberedListItem') {
      const start = typeof props.start === 'number' && Number.isInteger(props.start) && props.start >= 0 ? props.start : undefined;
      number = prev?.type === 'numberedListItem' ? prev.number + 1 : (start ?? 1);
      if (start !== undefined && start !== number) lost.add('numbered list restart');
    }
    const out = renderBlock(rec, props, number, lost);
    propLosses(rec, lost);
    contentLosses(rec, lost);
    for (const reason of lost) losses.push({ blockId: id, reason });

    const nests = LIST_TYPES.has(rec.t);
    if (out) {
      const lines = out.lines.map((line, i) => {
        if (out.code) return indent + line;
        return line === '' ? '' : indent + (i === 0 || out.everyLine ? out.marker : ' '.repeat(out.marker.length)) + line;
      });
      const empty = !out.code && lines[0] === '';
      if (empty) lines[0] = (indent + out.marker).trimEnd();
      const last = chunks[chunks.length - 1];
      if (last?.emptyItem && indent.length > last.indent && rec.t === 'paragraph') {
        losses.push({ blockId: last.emptyItem, reason: 'the first paragraph under an empty list item reads as its text' });
      }
      const chunk: Chunk = { text: lines.join('\n'), list: nests ? (rec.t === 'numberedListItem' ? 'ol' : 'ul') : null, indent: indent.length };
      // "- [ ]" has text as far as Markdown is concerned; "-" and "1." do not.
      if (empty && nests && rec.t !== 'checkListItem') chunk.emptyItem = id;
      chunks.push(chunk);
    }
    frames[depth] = { id, type: rec.t, nests, childIndent: nests ? indent + ' '.repeat(out?.width ?? 2) : indent, flattened: false };
    previous[depth] = { type: rec.t, number };
  }
  if (outside.length) return { outsideGrammar: outside };

  let markdown = '';
  chunks.forEach((c, i) => {
    if (i > 0) {
      const a = chunks[i - 1]!;
      // An empty item cannot interrupt a paragraph, so it needs a blank line after an item with text.
      const interrupts = c.emptyItem !== undefined && a.list !== null && a.emptyItem === undefined;
      const tight = (a.emptyItem !== undefined && c.indent > a.indent) || (a.list && c.list && !interrupts && (c.indent > a.indent || a.list === c.list));
      markdown += tight ? '\n' : '\n\n';
    }
    markdown += c.text;
  });
  return { markdown: markdown ? `${markdown}\n` : '', losses };
}

interface Rendered {
  /** lines of the block without indentation and marker */
  lines: string[];
  /** list marker put before the first line (continuation lines are indented by its width) */
  marker: string;
  /** indentation width of the block's children (list items) */
  width: number;
  /** lines are taken verbatim (fenced code) */
  code: boolean;
  /** the marker starts every line (quotes) */
  everyLine?: boolean;
}

function renderBlock(rec: BlockRecord, props: Record<string, unknown>, number: number, lost: Set<string>): Rendered | undefined {
  const text = (rec.md ?? '').trim();
  const plain = (lines: string[], marker = '', width = marker.length): Rendered => ({ lines, marker, width, code: false });
  switch (rec.t) {
    case 'paragraph':
      return text === '' ? undefined : plain(text.split('\n'));
    case 'heading': {
      const level = typeof props.level === 'number' && Number.isInteger(props.level) && props.level >= 1 && props.level <= 6 ? props.level : (rec.lv ?? 1);
      if (level !== props.level) lost.add(`heading level ${String(props.level)}`);
      let line = oneLine(text, lost, 'line break in a heading');
      // A closing run of # would be read as the ATX closing sequence.
      line = line.replace(/(^|[ \t])(#+)([ \t]*)$/, '$1\\$2$3');
      return plain([line ? `${'#'.repeat(level)} ${line}` : '#'.repeat(level)]);
    }
    case 'bulletListItem':
      return plain(taskSafe(text).split('\n'), '- ');
    case 'checkListItem':
      return plain(text.split('\n'), props.checked === true ? '- [x] ' : '- [ ] ', 2);
    case 'numberedListItem':
      return plain(taskSafe(text).split('\n'), `${number}. `);
    case 'quote':
      return { ...plain(text.split('\n'), '> '), everyLine: true };
    case 'codeBlock':
      return codeFence(rec.code ?? '', typeof props.language === 'string' && props.language !== 'text' ? props.language : (rec.lang ?? ''));
    case 'table':
      return pipeTable(rec.rows ?? [], lost);
    default:
      return undefined;
  }
}

/** `[ ] ` at the start of a bullet or numbered item would make it a task item. */
const taskSafe = (text: string): string => (/^\[[ xX]\](\s|$)/.test(text) ? `\\${text}` : text);

/** Inline Markdown on one line: line breaks become spaces (and a loss). */
function oneLine(md: string, lost: Set<string>, reason: string): string {
  if (!md.includes('\n')) return md;
  lost.add(reason);
  const parsed = parseInline(md);
  if (!parsed.ok) return md.replace(/\s*\n\s*/g, ' ');
  const flat = parsed.content.map((item) =>
    item.type === 'link'
      ? { ...item, content: item.content.map((t) => ({ ...t, text: t.text.replace(/\n/g, ' ') })) }
      : { ...item, text: item.text.replace(/\n/g, ' ') },
  );
  return inlineToMarkdown(flat);
}

/**
 * A code block's own Markdown: its fenced block. The fence is three or more backticks, longer than any
 * backtick run in the code (tildes when the language itself holds a backtick).
 */
export function codeBlockMarkdown(code: string, language: string): string {
  return codeFence(code, language).lines.join('\n');
}

/** A table's own Markdown: its GFM pipe table (first row as header, pipes escaped, rows padded). */
export function tableMarkdown(rows: readonly (readonly string[])[]): string {
  return pipeTable(rows, new Set())?.lines.join('\n') ?? '';
}

function codeFence(code: string, language: string): Rendered {
  const ch = language.includes('`') ? '~' : '`';
  let longest = 0;
  for (const run of code.match(ch === '`' ? /`+/g : /~+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = ch.repeat(Math.max(3, longest + 1));
  const body = code === '' ? [] : code.split('\n');
  return { lines: [fence + language, ...body, fence], marker: '', width: 0, code: true };
}

function pipeTable(rows: readonly (readonly string[])[], lost: Set<string>): Rendered | undefined {
  if (rows.length === 0) {
    lost.add('empty table');
    return undefined;
  }
  const columns = Math.max(...rows.map((r) => r.length), 1);
  const line = (cells: readonly string[]): string =>
    `| ${Array.from({ length: columns }, (_, i) => oneLine((cells[i] ?? '').trim(), lost, 'line break in a table cell').replace(/\|/g, '\\|')).join(' | ')} |`;
  const lines = [line(rows[0]!), `| ${Array(columns).fill('---').join(' | ')} |`, ...rows.slice(1).map(line)];
  return { lines, marker: '', width: 0, code: false };
}

function propLosses(rec: BlockRecord, lost: Set<string>): void {
  const extra = extraOf(rec)?.props;
  if (!extra) return;
  const base = blockProps(rec);
  for (const [key, value] of Object.entries(extra)) {
    if (key in base && JSON.stringify(base[key]) === JSON.stringify(value)) continue;
    // Carried by the Markdown itself (or reported where it is used).
    if (key === 'level' || key === 'checked' || key === 'language' || (key === 'start' && rec.t === 'numberedListItem')) continue;
    if (key === 'isToggleable' && value === false) continue;
    lost.add(PROP_LOSS[key] ?? `${key} property`);
  }
}

function styleLosses(items: unknown, lost: Set<string>): void {
  if (!Array.isArray(items)) return;
  for (const item of items) {
    if (typeof item !== 'object' || item === null) continue;
    const { type, styles, content } = item as { type?: unknown; styles?: unknown; content?: unknown };
    if (type === 'link') styleLosses(content, lost);
    else if (type !== 'text') lost.add(`${String(type)} inline content`);
    if (typeof styles === 'object' && styles !== null) {
      for (const [key, value] of Object.entries(styles)) {
        if (!CARRIED_STYLES.has(key) && value !== undefined && value !== false) lost.add(STYLE_LOSS[key] ?? `${key} style`);
      }
    }
  }
}

function contentLosses(rec: BlockRecord, lost: Set<string>): void {
  const content = extraOf(rec)?.content;
  if (content === undefined) return;
  if (rec.t === 'codeBlock') {
    lost.add('code content Markdown cannot carry (styles or inline items in code)');
    return;
  }
  if (rec.t !== 'table') {
    styleLosses(content, lost);
    return;
  }
  const table = content as { columnWidths?: unknown; headerRows?: unknown; headerCols?: unknown; rows?: unknown };
  if (Array.isArray(table.columnWidths) && table.columnWidths.some((w) => w !== null && w !== undefined)) lost.add('table column widths');
  if (table.headerRows !== 1) lost.add(table.headerRows ? 'more than one table header row' : 'a table without a header row (Markdown makes the first row one)');
  if (table.headerCols) lost.add('table header column');
  for (const row of Array.isArray(table.rows) ? table.rows : []) {
    const cells = (row as { cells?: unknown }).cells;
    for (const cell of Array.isArray(cells) ? cells : []) {
      if (typeof cell !== 'object' || cell === null || Array.isArray(cell)) {
        styleLosses(cell, lost);
        continue;
      }
      const { content: inline, props } = cell as { content?: unknown; props?: Record<string, unknown> };
      styleLosses(inline, lost);
      if (!props) continue;
      if ((props.colspan ?? 1) !== 1 || (props.rowspan ?? 1) !== 1) lost.add('merged table cells');
      if ((props.backgroundColor ?? 'default') !== 'default' || (props.textColor ?? 'default') !== 'default') lost.add('table cell colors');
      if ((props.textAlignment ?? 'left') !== 'left') lost.add('table cell alignment');
    }
  }
}
