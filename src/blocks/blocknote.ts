/**
 * The rich-json shape of one block: BlockNote's block JSON, rendered as compact JSON text.
 *
 * Verified against @blocknote/core 0.55.0 (the npm tarball's `src/`, plus the TypeCellOS/BlockNote
 * repository's test snapshots):
 * - `api/nodeConversions/nodeToBlock.ts` builds `{ id, type, props, content, children }` in that key
 *   order; props come from `Object.entries` of the block-content node's attributes, which follow the
 *   block's `propSchema` order (0.55 keeps no colour attributes on `blockContainer`, only `id`); a
 *   prop whose default is `undefined` is left out while unset (numberedListItem `start`).
 * - `blocks/defaultProps.ts`: backgroundColor "default", textColor "default", textAlignment "left".
 *   paragraph, bulletListItem, numberedListItem (+ optional `start`) and checkListItem (+ `checked`,
 *   default false) spread them; heading adds `level` (default 1) and `isToggleable` (default false,
 *   present because `allowToggleHeadings` defaults to true); quote has only backgroundColor and
 *   textColor; codeBlock has only `language` (default "text") and "plain" content: one unstyled text
 *   item, or `[]` when empty; table has only textColor.
 * - Inline content: `{ type: "text", text, styles }` and `{ type: "link", href, content }`; styles
 *   hold `true` per boolean mark in schema order bold, italic, underline, strike, code; a hard break
 *   is "\n" inside the text.
 * - Table content (`contentNodeToTableContent`): `{ type: "tableContent", columnWidths, headerRows,
 *   headerCols, rows: [{ cells }] }`; an unset width is `undefined` (JSON null), unset header counts
 *   are `undefined` (left out of JSON); each cell is `{ type: "tableCell", content, props: { colspan,
 *   rowspan, backgroundColor, textColor, textAlignment } }`. A Markdown table has one header row, so
 *   `headerRows` is 1 (what BlockNote's own Markdown import gives).
 * @module
 */
import { parseInline, type InlineContent, type StyledText } from './inline-markdown.ts';
import type { BlockRecord } from './model.ts';

/**
 * What `BlockRecord.extra` holds: editor props and content that Markdown cannot carry.
 * @remarks `props` overrides and extends the props derived from the record; `content`, when present,
 * replaces the content derived from the Markdown (it is the editor's JSON, kept verbatim).
 */
export type BlockExtra = {
  props?: Record<string, unknown>;
  content?: unknown;
};

/** The record's extra, or undefined when it has none. */
export function extraOf(rec: BlockRecord): BlockExtra | undefined {
  return rec.extra as BlockExtra | undefined;
}

const COLORS_ALIGN = '"backgroundColor":"default","textColor":"default","textAlignment":"left"';
const TEXT_PROPS = `{${COLORS_ALIGN}}`;
const QUOTE_PROPS = '{"backgroundColor":"default","textColor":"default"}';
const TABLE_PROPS = '{"textColor":"default"}';
const CELL_PROPS = { colspan: 1, rowspan: 1, backgroundColor: 'default', textColor: 'default', textAlignment: 'left' };

/** BlockNote's default props, in BlockNote's key order. */
const DEFAULT_COLORS_ALIGN = { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' };

/** The props BlockNote gives a block of this record (before `extra.props`), as an object. */
export function blockProps(rec: BlockRecord): Record<string, unknown> {
  switch (rec.t) {
    case 'heading':
      return { ...DEFAULT_COLORS_ALIGN, level: rec.lv ?? 1, isToggleable: false };
    case 'checkListItem':
      return { ...DEFAULT_COLORS_ALIGN, checked: rec.ck ?? false };
    case 'quote':
      return { backgroundColor: 'default', textColor: 'default' };
    case 'codeBlock':
      return { language: rec.lang ?? 'text' };
    case 'table':
      return { textColor: 'default' };
    default:
      return { ...DEFAULT_COLORS_ALIGN };
  }
}

function propsJson(rec: BlockRecord): string {
  switch (rec.t) {
    case 'heading':
      return `{${COLORS_ALIGN},"level":${rec.lv ?? 1},"isToggleable":false}`;
    case 'checkListItem':
      return `{${COLORS_ALIGN},"checked":${rec.ck === true}}`;
    case 'quote':
      return QUOTE_PROPS;
    case 'codeBlock':
      return `{"language":${JSON.stringify(rec.lang ?? 'text')}}`;
    case 'table':
      return TABLE_PROPS;
    default:
      return TEXT_PROPS;
  }
}

/** Inline content of stored Markdown; text that does not parse (never stored) is shown as it is. */
export function inlineContent(markdown: string): InlineContent[] {
  const parsed = parseInline(markdown);
  if (parsed.ok) return parsed.content;
  return markdown === '' ? [] : [{ type: 'text', text: markdown, styles: {} }];
}

function stylesJson(s: StyledText['styles']): string {
  let o = '';
  if (s.bold) o += ',"bold":true';
  if (s.italic) o += ',"italic":true';
  if (s.strike) o += ',"strike":true';
  if (s.code) o += ',"code":true';
  return o === '' ? '{}' : `{${o.slice(1)}}`;
}

const textJson = (t: StyledText): string => `{"type":"text","text":${JSON.stringify(t.text)},"styles":${stylesJson(t.styles)}}`;

/** `JSON.stringify(content)` for content {@link parseInline} made, written directly (about twice as fast). */
export function inlineJson(content: readonly InlineContent[]): string {
  let out = '[';
  for (let i = 0; i < content.length; i++) {
    const item = content[i]!;
    if (i > 0) out += ',';
    if (item.type === 'text') out += textJson(item);
    else out += `{"type":"link","href":${JSON.stringify(item.href)},"content":[${item.content.map(textJson).join(',')}]}`;
  }
  return `${out}]`;
}

const CELL_PROPS_JSON = JSON.stringify(CELL_PROPS);

function contentJson(rec: BlockRecord): string {
  if (rec.t === 'codeBlock') return rec.code ? `[{"type":"text","text":${JSON.stringify(rec.code)},"styles":{}}]` : '[]';
  if (rec.t !== 'table') return inlineJson(inlineContent(rec.md ?? ''));
  const rows = rec.rows ?? [];
  const widths = (rows[0] ?? []).map(() => 'null').join(',');
  const body = rows
    .map((row) => `{"cells":[${row.map((cell) => `{"type":"tableCell","content":${inlineJson(inlineContent(cell))},"props":${CELL_PROPS_JSON}}`).join(',')}]}`)
    .join(',');
  return `{"type":"tableContent","columnWidths":[${widths}],"headerRows":1,"rows":[${body}]}`;
}

/** BlockNote table content of rows of inline-Markdown cells. */
export function tableContent(rows: readonly (readonly string[])[]): Record<string, unknown> {
  return {
    type: 'tableContent',
    columnWidths: (rows[0] ?? []).map(() => null),
    headerRows: 1,
    rows: rows.map((row) => ({
      cells: row.map((cell) => ({ type: 'tableCell', content: inlineContent(cell), props: { ...CELL_PROPS } })),
    })),
  };
}

/** The content BlockNote gives a block of this record (before `extra.content`). */
export function blockContent(rec: BlockRecord): unknown {
  if (rec.t === 'codeBlock') return rec.code ? [{ type: 'text', text: rec.code, styles: {} }] : [];
  if (rec.t === 'table') return tableContent(rec.rows ?? []);
  return inlineContent(rec.md ?? '');
}

function rawPrefix(id: string, raw: Record<string, unknown>): string {
  let s = `{"id":${JSON.stringify(id)}`;
  const add = (key: string): void => {
    const value = raw[key];
    if (value !== undefined) s += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  };
  add('type');
  add('props');
  add('content');
  for (const key of Object.keys(raw)) {
    if (key !== 'type' && key !== 'props' && key !== 'content' && key !== 'id' && key !== 'children') add(key);
  }
  return `${s},"children":[`;
}

/**
 * The block's compact JSON up to and including `"children":[`; the caller appends the children's
 * JSON joined by "," and then `]}`.
 * @remarks Key order id, type, props, content, children, as BlockNote emits them. A `raw` record (a
 * block outside the Markdown grammar) is written back as it was imported. Cost: one parse of the
 * block's Markdown plus a `JSON.stringify` of its content; nothing outside the block is touched.
 */
export function renderOwnPrefix(id: string, rec: BlockRecord): string {
  if (rec.raw !== undefined) return rawPrefix(id, rec.raw);
  const extra = extraOf(rec);
  const props = extra?.props ? JSON.stringify({ ...blockProps(rec), ...extra.props }) : propsJson(rec);
  const content = extra?.content !== undefined ? JSON.stringify(extra.content) : contentJson(rec);
  return `{"id":${JSON.stringify(id)},"type":${JSON.stringify(rec.t)},"props":${props},"content":${content},"children":[`;
}

/** The block's whole compact JSON, given its children's JSON. */
export function renderBlockJson(id: string, rec: BlockRecord, childrenJson: readonly string[]): string {
  return `${renderOwnPrefix(id, rec)}${childrenJson.join(',')}]}`;
}
