/**
 * A BlockNote editor's collaboration fragment (`doc.getXmlFragment("document-store")`) written from
 * and read back into BlockNote block JSON, in pure Yjs — the shape y-prosemirror gives BlockNote
 * 0.55's default schema:
 *
 * ```
 * fragment ─ blockGroup ─ blockContainer {id} ─ <type> {…props}  (inline content: XmlText, hardBreak)
 *                                            └─ blockGroup ─ blockContainer …   (children, if any)
 * ```
 * - A block's props are the attributes of its content element (named after the block type).
 * - Inline text is a `Y.XmlText` whose formatting attributes are ProseMirror marks: `bold`, `italic`,
 *   `underline`, `strike`, `code` as `{}`, `textColor`/`backgroundColor` as `{ stringValue }`,
 *   `link` as `{ href }`; a "\n" of inline text is a `hardBreak` element (a code block keeps it in
 *   its text).
 * - A table is `table {textColor}` ─ `tableRow` ─ `tableHeader | tableCell {colspan, rowspan,
 *   colwidth?, backgroundColor, textColor, textAlignment}` ─ `tableParagraph` ─ inline content; the
 *   first `headerRows` rows hold `tableHeader` cells.
 * - A block whose content is none (image, file, divider …) is an empty element.
 * @module
 */
import * as Y from 'yjs';

export { EDITOR_FRAGMENT } from './editor-protocol.ts';

/** A JSON object. */
export type Json = Record<string, unknown>;

/** A BlockNote block as JSON (a rich-json document's `blocks` entry). */
export interface EditorBlock {
  id: string;
  type: string;
  props: Json;
  content?: unknown;
  children: EditorBlock[];
}

/** True for a plain JSON object (not an array). */
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Boolean marks in BlockNote's order, then the two colour marks. */
const BOOLEAN_STYLES = ['bold', 'italic', 'underline', 'strike', 'code'] as const;
const VALUE_STYLES = ['textColor', 'backgroundColor'] as const;

/** Formatting runs of inline text: Yjs delta inserts, marks as attributes. */
export type Delta = { insert: string | object; attributes?: Json }[];

// ---------------------------------------------------------------------------------------------
// Blocks → Yjs

function marksOf(styles: unknown, href?: string): Json | undefined {
  const marks: Json = {};
  if (isObject(styles)) {
    for (const [k, v] of Object.entries(styles)) {
      if (v === true) marks[k] = {};
      else if (typeof v === 'string') marks[k] = { stringValue: v };
    }
  }
  if (href !== undefined) marks['link'] = { href };
  return Object.keys(marks).length ? marks : undefined;
}

/** Inline content as formatting runs (marks as Yjs attributes), a "\n" kept in its run's text. */
export function inlineRuns(content: unknown): Delta {
  const runs: Delta = [];
  const push = (text: string, attributes: Json | undefined) => {
    if (text !== '') runs.push(attributes ? { insert: text, attributes } : { insert: text });
  };
  for (const item of Array.isArray(content) ? content : []) {
    if (!isObject(item)) continue;
    if (item['type'] === 'link' && typeof item['href'] === 'string') {
      for (const t of Array.isArray(item['content']) ? item['content'] : []) {
        if (isObject(t) && typeof t['text'] === 'string') push(t['text'], marksOf(t['styles'], item['href']));
      }
    } else if (typeof item['text'] === 'string') push(item['text'], marksOf(item['styles']));
  }
  return runs;
}

/** Inline content as the Yjs children of a text-holding element: XmlTexts and hardBreak elements. */
function inlineNodes(content: unknown, hardBreaks: boolean): (Y.XmlText | Y.XmlElement)[] {
  return runNodes(inlineRuns(content), hardBreaks);
}

/** Formatting runs as the Yjs children of a text-holding element; with `hardBreaks`, each "\n" a hardBreak element. */
export function runNodes(runs: Delta, hardBreaks: boolean): (Y.XmlText | Y.XmlElement)[] {
  const nodes: (Y.XmlText | Y.XmlElement)[] = [];
  let delta: Delta = [];
  const flush = () => {
    if (!delta.length) return;
    const text = new Y.XmlText();
    text.applyDelta(delta);
    nodes.push(text);
    delta = [];
  };
  for (const { insert, attributes } of runs) {
    const parts = hardBreaks ? (insert as string).split('\n') : [insert as string];
    parts.forEach((part, i) => {
      if (i > 0) {
        flush();
        nodes.push(new Y.XmlElement('hardBreak'));
      }
      if (part !== '') delta.push(attributes ? { insert: part, attributes } : { insert: part });
    });
  }
  flush();
  return nodes;
}

/** A Yjs element named `name` with `attrs` (null and undefined left out) and `children`. */
export function element(name: string, attrs: Json, children: (Y.XmlText | Y.XmlElement)[]): Y.XmlElement {
  const el = new Y.XmlElement(name);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null) el.setAttribute(k, v as string);
  }
  if (children.length) el.insert(0, children);
  return el;
}

/** A table's rows (each a list of cell JSON), column widths and header rows and columns. */
export interface TableShape {
  rows: Json[][];
  widths: unknown[];
  headerRows: number;
  headerCols: number;
}

/** The shape of a `tableContent` JSON value. */
export function tableShape(content: Json): TableShape {
  const rows = (Array.isArray(content['rows']) ? content['rows'] : []).map((row: unknown) =>
    (isObject(row) && Array.isArray(row['cells']) ? row['cells'] : []).map((cell: unknown) => (isObject(cell) ? cell : { content: cell })),
  );
  return {
    rows,
    widths: Array.isArray(content['columnWidths']) ? content['columnWidths'] : [],
    headerRows: typeof content['headerRows'] === 'number' ? content['headerRows'] : 0,
    headerCols: typeof content['headerCols'] === 'number' ? content['headerCols'] : 0,
  };
}

/** The element name and attributes of the cell at row `r`, column `c` of a table. */
export function cellSpec(shape: TableShape, r: number, c: number): { name: string; attrs: Json } {
  const cell = shape.rows[r]![c]!;
  const width = shape.widths[c];
  const attrs: Json = { colspan: 1, rowspan: 1, ...(isObject(cell['props']) ? cell['props'] : {}) };
  if (typeof width === 'number') attrs['colwidth'] = [width];
  return { name: r < shape.headerRows || c < shape.headerCols ? 'tableHeader' : 'tableCell', attrs };
}

/** A table cell element: `tableHeader | tableCell {attrs}` ─ `tableParagraph` ─ the given inline children. */
export function cellElement(name: string, attrs: Json, inline: (Y.XmlText | Y.XmlElement)[]): Y.XmlElement {
  return element(name, attrs, [element('tableParagraph', {}, inline)]);
}

/** The `tableRow` element of row `r`. */
export function rowElement(shape: TableShape, r: number): Y.XmlElement {
  const cells = shape.rows[r]!.map((cell, c) => {
    const { name, attrs } = cellSpec(shape, r, c);
    return cellElement(name, attrs, inlineNodes(cell['content'], true));
  });
  return element('tableRow', {}, cells);
}

function tableElement(props: Json, content: Json): Y.XmlElement {
  const shape = tableShape(content);
  return element('table', props, shape.rows.map((_, r) => rowElement(shape, r)));
}

/** The content element of a block (named after its type, props as attributes). */
export function contentElement(block: EditorBlock): Y.XmlElement {
  const props = isObject(block.props) ? block.props : {};
  const content = block.content;
  if (isObject(content) && content['type'] === 'tableContent') return tableElement(props, content);
  if (content === undefined) return element(block.type, props, []);
  return element(block.type, props, inlineNodes(content, block.type !== 'codeBlock'));
}

/** A `blockContainer` of a block and its children. */
export function containerElement(block: EditorBlock): Y.XmlElement {
  const kids: Y.XmlElement[] = [contentElement(block)];
  if (block.children.length) kids.push(groupElement(block.children));
  return element('blockContainer', { id: block.id }, kids);
}

/** A `blockGroup` of blocks. */
export function groupElement(blocks: readonly EditorBlock[]): Y.XmlElement {
  const group = new Y.XmlElement('blockGroup');
  if (blocks.length) group.insert(0, blocks.map(containerElement));
  return group;
}

/** Replace whatever the fragment holds with `blocks` (call inside a transaction for one update). */
export function writeFragment(fragment: Y.XmlFragment, blocks: readonly EditorBlock[]): void {
  if (fragment.length) fragment.delete(0, fragment.length);
  fragment.insert(0, [groupElement(blocks)]);
}

// ---------------------------------------------------------------------------------------------
// Yjs → blocks

function stylesOf(attrs: Json | undefined): { styles: Json; href: string | undefined } {
  const styles: Json = {};
  let href: string | undefined;
  if (!attrs) return { styles, href };
  for (const k of BOOLEAN_STYLES) if (attrs[k] !== undefined && attrs[k] !== null) styles[k] = true;
  for (const k of VALUE_STYLES) {
    const v = attrs[k];
    if (isObject(v) && typeof v['stringValue'] === 'string') styles[k] = v['stringValue'];
  }
  const link = attrs['link'];
  if (isObject(link) && typeof link['href'] === 'string') href = link['href'];
  return { styles, href };
}

/** The inline content of a text-holding element, as BlockNote JSON. */
function readInline(el: Y.XmlElement, plain: boolean): unknown[] {
  const out: Json[] = [];
  const pushText = (text: string, styles: Json, href: string | undefined) => {
    if (text === '') return;
    const last = out[out.length - 1];
    const item = { type: 'text', text, styles };
    if (href === undefined) {
      if (last && last['type'] === 'text' && JSON.stringify(last['styles']) === JSON.stringify(styles)) last['text'] += text;
      else out.push(item);
      return;
    }
    if (last && last['type'] === 'link' && last['href'] === href) {
      const inner = last['content'] as Json[];
      const tail = inner[inner.length - 1]!;
      if (JSON.stringify(tail['styles']) === JSON.stringify(styles)) tail['text'] += text;
      else inner.push(item);
    } else out.push({ type: 'link', href, content: [item] });
  };
  let prevHref: string | undefined;
  let prevStyles: Json = {};
  for (const child of el.toArray()) {
    if (child instanceof Y.XmlText) {
      for (const op of child.toDelta() as Delta) {
        if (typeof op.insert !== 'string') continue;
        const { styles, href } = plain ? { styles: {}, href: undefined } : stylesOf(op.attributes);
        pushText(op.insert, styles, href);
        prevHref = href;
        prevStyles = styles;
      }
    } else if (child instanceof Y.XmlElement && child.nodeName === 'hardBreak') {
      pushText('\n', prevStyles, prevHref);
    }
  }
  return out;
}

function attrsOf(el: Y.XmlElement): Json {
  return { ...(el.getAttributes() as Json) };
}

function readTable(el: Y.XmlElement): Json {
  const rows: Json[] = [];
  const widths: unknown[] = [];
  let headerRows = 0;
  let headerCols = Infinity;
  let countingHeaderRows = true;
  for (const rowEl of el.toArray()) {
    if (!(rowEl instanceof Y.XmlElement)) continue;
    const cells: Json[] = [];
    let allHeaders = true;
    let leadingHeaders = 0;
    let leading = true;
    rowEl.toArray().forEach((cellEl, c) => {
      if (!(cellEl instanceof Y.XmlElement)) return;
      const header = cellEl.nodeName === 'tableHeader';
      if (!header) allHeaders = false;
      if (header && leading) leadingHeaders++;
      else leading = false;
      const { colwidth, ...props } = attrsOf(cellEl);
      if (rows.length === 0) widths[c] = Array.isArray(colwidth) && typeof colwidth[0] === 'number' ? colwidth[0] : null;
      const para = cellEl.toArray().find((p): p is Y.XmlElement => p instanceof Y.XmlElement);
      cells.push({ type: 'tableCell', content: para ? readInline(para, false) : [], props });
    });
    if (countingHeaderRows && allHeaders && cells.length) headerRows++;
    else countingHeaderRows = false;
    headerCols = Math.min(headerCols, leadingHeaders);
    rows.push({ cells });
  }
  const content: Json = { type: 'tableContent', columnWidths: widths };
  if (headerRows > 0) content['headerRows'] = headerRows;
  if (headerCols > 0 && headerCols !== Infinity && headerRows < rows.length) content['headerCols'] = headerCols;
  content['rows'] = rows;
  return content;
}

/** Inline-content block types of the default schema (others without text children read as content-less). */
export const CONTENTLESS: ReadonlySet<string> = new Set(['image', 'file', 'video', 'audio', 'divider', 'pageBreak']);

/** One `blockContainer` as a BlockNote block, or undefined when it is malformed (no content element). */
export function readContainer(container: Y.XmlElement): EditorBlock | undefined {
  const id = container.getAttribute('id');
  const [contentEl, groupEl] = container.toArray();
  if (typeof id !== 'string' || !(contentEl instanceof Y.XmlElement)) return undefined;
  const type = contentEl.nodeName;
  const props = attrsOf(contentEl);
  const block: EditorBlock = { id, type, props, children: [] };
  if (type === 'table') block.content = readTable(contentEl);
  else if (!CONTENTLESS.has(type)) block.content = readInline(contentEl, type === 'codeBlock');
  block.children = groupEl instanceof Y.XmlElement ? readGroup(groupEl) : [];
  return block;
}

function readGroup(group: Y.XmlElement): EditorBlock[] {
  const out: EditorBlock[] = [];
  for (const c of group.toArray()) {
    if (c instanceof Y.XmlElement && c.nodeName === 'blockContainer') {
      const b = readContainer(c);
      if (b) out.push(b);
    }
  }
  return out;
}

/** The blocks of a fragment (every top-level `blockGroup`, in order). */
export function readFragment(fragment: Y.XmlFragment): EditorBlock[] {
  const out: EditorBlock[] = [];
  for (const g of fragment.toArray()) if (g instanceof Y.XmlElement && g.nodeName === 'blockGroup') out.push(...readGroup(g));
  return out;
}

/**
 * True when `block` is the empty trailing paragraph a BlockNote editor keeps at the end of a
 * document (empty paragraph, no children), which is not an API block unless `known` holds its id.
 */
export function isTrailingParagraph(block: EditorBlock, known: (id: string) => boolean): boolean {
  return block.type === 'paragraph' && Array.isArray(block.content) && block.content.length === 0 && block.children.length === 0 && !known(block.id);
}

/**
 * Each block's id and plain text, depth first, one line each: what an editor and the API's rich-json
 * must agree on once everything is committed (the editor's trailing empty paragraph left out).
 */
export function plainTextOf(blocks: readonly EditorBlock[]): string {
  const out: string[] = [];
  const inline = (content: unknown): string =>
    Array.isArray(content) ? content.map((c: { type?: string; text?: string; content?: unknown }) => (c.type === 'link' ? inline(c.content) : (c.text ?? ''))).join('') : '';
  const walk = (list: readonly EditorBlock[]) => {
    for (const b of list) {
      out.push(`${b.id}:${inline(b.content)}`);
      walk(b.children);
    }
  };
  walk(blocks);
  return out.join('\n');
}
