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
import { utf8Length } from '../text.ts';

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

/** `","styles":{…}}` closing a text item after its text, per combination of the four styles (bold 1, italic 2, strike 4, code 8). */
const TEXT_TAIL: readonly string[] = Array.from({ length: 16 }, (_, bits) => {
  const keys = ['bold', 'italic', 'strike', 'code'].filter((_, i) => bits & (1 << i));
  return `","styles":{${keys.map((k) => `"${k}":true`).join(',')}}}`;
});

const styleBits = (s: StyledText['styles']): number => (s.bold ? 1 : 0) | (s.italic ? 2 : 0) | (s.strike ? 4 : 0) | (s.code ? 8 : 0);

const TEXT_HEAD = '{"type":"text","text":"';
const NEXT_TEXT_HEAD = `,${TEXT_HEAD}`;
/** A text item's tail and the next text item's head, in one piece: one string fewer per run. */
const TEXT_TAIL_HEAD: readonly string[] = TEXT_TAIL.map((tail) => tail + NEXT_TEXT_HEAD);

/** Characters JSON escapes: `"`, `\`, controls, and surrogates (escaped when unpaired). */
const JSON_ESCAPES = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Matches at once: testing it flattens the string it is given (a regular expression reads flat text only). */
const FLATTEN = /^/;

/**
 * JSON text being written, with its UTF-8 length counted piece by piece so that the text is never
 * scanned to measure it.
 * @remarks The text is built by `+=` (a rope of a few pieces per run) and flattened once done: left a
 * rope, a long paragraph's JSON (~1 MB and some 60,000 cons strings for 20,000 runs) is copied by
 * every young-generation collection it survives; flattened, the rope dies young and the flat copy
 * (in large-object space) is never moved. Joining an array of pieces instead is slower.
 */
class SizedWriter {
  text = '';
  bytes = 0;

  /** The text written, flat. */
  done(): SizedJson {
    FLATTEN.test(this.text);
    return { text: this.text, bytes: this.bytes };
  }

  /** Append ASCII text as it is. */
  ascii(s: string): void {
    this.text += s;
    this.bytes += s.length;
  }

  /** Append `JSON.stringify(s)`. */
  string(s: string): void {
    this.text += '"';
    this.inner(s);
    this.text += '"';
    this.bytes += 2;
  }

  /** Append `JSON.stringify(s)` without its quotes: `s` as it is when nothing in it needs escaping. */
  private inner(s: string): void {
    const n = s.length;
    if (n > 64) {
      if (JSON_ESCAPES.test(s)) this.escaped(s);
      else {
        this.text += s;
        this.bytes += utf8Length(s);
      }
      return;
    }
    let bytes = n;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (c < 0x20 || c === 0x22 || c === 0x5c) return this.escaped(s);
      } else if (c < 0x800) bytes += 1;
      else if (c >= 0xd800 && c <= 0xdfff) return this.escaped(s);
      else bytes += 2;
    }
    this.text += s;
    this.bytes += bytes;
  }

  private escaped(s: string): void {
    const json = JSON.stringify(s);
    this.text += json.slice(1, -1);
    this.bytes += utf8Length(json) - 2;
  }

  /** Append inline content {@link parseInline} made. */
  inline(content: readonly InlineContent[]): void {
    this.ascii('[');
    // Style bits of the text item whose tail is not written yet (-1: none).
    let open = -1;
    for (let i = 0; i < content.length; i++) {
      const item = content[i]!;
      if (item.type === 'text') {
        this.ascii(open >= 0 ? TEXT_TAIL_HEAD[open]! : i === 0 ? TEXT_HEAD : NEXT_TEXT_HEAD);
        this.inner(item.text);
        open = styleBits(item.styles);
        continue;
      }
      if (open >= 0) this.ascii(TEXT_TAIL[open]!);
      open = -1;
      this.ascii(i === 0 ? '{"type":"link","href":' : ',{"type":"link","href":');
      this.string(item.href);
      this.ascii(',"content":');
      this.inline(item.content);
      this.ascii('}');
    }
    if (open >= 0) this.ascii(TEXT_TAIL[open]!);
    this.ascii(']');
  }

  /** Append any JSON text. */
  json(s: string): void {
    this.text += s;
    this.bytes += utf8Length(s);
  }
}

/** `JSON.stringify(content)` for content {@link parseInline} made, written directly (about twice as fast). */
export function inlineJson(content: readonly InlineContent[]): string {
  const w = new SizedWriter();
  w.inline(content);
  return w.done().text;
}

const CELL_PROPS_JSON = JSON.stringify(CELL_PROPS);

function writeContent(w: SizedWriter, rec: BlockRecord): void {
  if (rec.t === 'codeBlock') {
    if (!rec.code) return w.ascii('[]');
    w.ascii('[{"type":"text","text":');
    w.string(rec.code);
    return w.ascii(',"styles":{}}]');
  }
  if (rec.t !== 'table') return w.inline(inlineContent(rec.md ?? ''));
  const rows = rec.rows ?? [];
  w.ascii(`{"type":"tableContent","columnWidths":[${(rows[0] ?? []).map(() => 'null').join(',')}],"headerRows":1,"rows":[`);
  for (let r = 0; r < rows.length; r++) {
    w.ascii(r > 0 ? ',{"cells":[' : '{"cells":[');
    const row = rows[r]!;
    for (let c = 0; c < row.length; c++) {
      w.ascii(c > 0 ? ',{"type":"tableCell","content":' : '{"type":"tableCell","content":');
      w.inline(inlineContent(row[c]!));
      w.ascii(`,"props":${CELL_PROPS_JSON}}`);
    }
    w.ascii(']}');
  }
  w.ascii(']}');
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

/** A JSON text and its UTF-8 length. */
export interface SizedJson {
  text: string;
  bytes: number;
}

/**
 * The block's compact JSON up to and including `"children":[`, and its UTF-8 length; the caller
 * appends the children's JSON joined by "," and then `]}`.
 * @remarks Key order id, type, props, content, children, as BlockNote emits them. A `raw` record (a
 * block outside the Markdown grammar) is written back as it was imported. Cost: one parse of the
 * block's Markdown plus writing its content; the length is counted per piece as the text is built
 * (the text, thousands of pieces for a long paragraph, is left unflattened); nothing outside the
 * block is touched.
 */
export function renderOwnPrefixSized(id: string, rec: BlockRecord): SizedJson {
  const w = new SizedWriter();
  if (rec.raw !== undefined) {
    w.json(rawPrefix(id, rec.raw));
    return w.done();
  }
  const extra = extraOf(rec);
  w.ascii('{"id":');
  w.string(id);
  w.ascii(',"type":');
  w.string(rec.t);
  w.ascii(',"props":');
  w.json(extra?.props ? JSON.stringify({ ...blockProps(rec), ...extra.props }) : propsJson(rec));
  w.ascii(',"content":');
  if (extra?.content !== undefined) w.json(JSON.stringify(extra.content));
  else writeContent(w, rec);
  w.ascii(',"children":[');
  return w.done();
}

/** The block's compact JSON up to and including `"children":[` (see {@link renderOwnPrefixSized}). */
export function renderOwnPrefix(id: string, rec: BlockRecord): string {
  return renderOwnPrefixSized(id, rec).text;
}

/** The block's whole compact JSON, given its children's JSON. */
export function renderBlockJson(id: string, rec: BlockRecord, childrenJson: readonly string[]): string {
  return `${renderOwnPrefix(id, rec)}${childrenJson.join(',')}]}`;
}
