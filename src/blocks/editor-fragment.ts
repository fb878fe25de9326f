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

/** The fragment a BlockNote editor collaborates on (its `collaboration.fragment`). */
export const EDITOR_FRAGMENT = 'document-store';

type Json = Record<string, unknown>;

/** A BlockNote block as JSON (a rich-json document's `blocks` entry). */
export interface EditorBlock {
  id: string;
  type: string;
  props: Json;
  content?: unknown;
  children: EditorBlock[];
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Boolean marks in BlockNote's order, then the two colour marks. */
const BOOLEAN_STYLES = ['bold', 'italic', 'underline', 'strike', 'code'] as const;
const VALUE_STYLES = ['textColor', 'backgroundColor'] as const;

type Delta = { insert: string | object; attributes?: Json }[];

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
function inlineRuns(content: unknown): Delta {
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
  const nodes: (Y.XmlText | Y.XmlElement)[] = [];
  let delta: Delta = [];
  const flush = () => {
    if (!delta.length) return;
    const text = new Y.XmlText();
    text.applyDelta(delta);
    nodes.push(text);
    delta = [];
  };
  for (const { insert, attributes } of inlineRuns(content)) {
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

function element(name: string, attrs: Json, children: (Y.XmlText | Y.XmlElement)[]): Y.XmlElement {
  const el = new Y.XmlElement(name);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null) el.setAttribute(k, v as string);
  }
  if (children.length) el.insert(0, children);
  return el;
}

function tableElement(props: Json, content: Json): Y.XmlElement {
  const rows = Array.isArray(content['rows']) ? content['rows'] : [];
  const widths = Array.isArray(content['columnWidths']) ? content['columnWidths'] : [];
  const headerRows = typeof content['headerRows'] === 'number' ? content['headerRows'] : 0;
  const headerCols = typeof content['headerCols'] === 'number' ? content['headerCols'] : 0;
  const rowEls = rows.map((row: unknown, r: number) => {
    const cells = isObject(row) && Array.isArray(row['cells']) ? row['cells'] : [];
    const cellEls = cells.map((cell: unknown, c: number) => {
      const cellJson = isObject(cell) ? cell : { content: cell };
      const cellProps = isObject(cellJson['props']) ? cellJson['props'] : {};
      const width = widths[c];
      const attrs: Json = { colspan: 1, rowspan: 1, ...cellProps };
      if (typeof width === 'number') attrs['colwidth'] = [width];
      const para = element('tableParagraph', {}, inlineNodes(cellJson['content'], true));
      return element(r < headerRows || c < headerCols ? 'tableHeader' : 'tableCell', attrs, [para]);
    });
    return element('tableRow', {}, cellEls);
  });
  return element('table', props, rowEls);
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
const CONTENTLESS = new Set(['image', 'file', 'video', 'audio', 'divider', 'pageBreak']);

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

// ---------------------------------------------------------------------------------------------
// Bringing a new API version into a fragment a person may be editing

interface Placed {
  block: EditorBlock;
  parent: string | null;
  /** The block's own JSON (without children): what an edit changes. */
  own: string;
}

function index(blocks: readonly EditorBlock[]): Map<string, Placed> {
  const out = new Map<string, Placed>();
  const walk = (list: readonly EditorBlock[], parent: string | null) => {
    for (const b of list) {
      out.set(b.id, { block: b, parent, own: JSON.stringify([b.type, b.props, b.content]) });
      walk(b.children, b.id);
    }
  };
  walk(blocks, null);
  return out;
}

function containers(fragment: Y.XmlFragment): Map<string, Y.XmlElement> {
  const out = new Map<string, Y.XmlElement>();
  const walk = (group: Y.XmlElement) => {
    for (const c of group.toArray()) {
      if (!(c instanceof Y.XmlElement) || c.nodeName !== 'blockContainer') continue;
      const id = c.getAttribute('id');
      if (typeof id === 'string' && !out.has(id)) out.set(id, c);
      const sub = c.toArray()[1];
      if (sub instanceof Y.XmlElement) walk(sub);
    }
  };
  for (const g of fragment.toArray()) if (g instanceof Y.XmlElement && g.nodeName === 'blockGroup') walk(g);
  return out;
}

/** Positions (in `seq`) of a longest strictly increasing subsequence. */
function longestIncreasing(seq: readonly number[]): Set<number> {
  const tails: number[] = [];
  const prev: number[] = new Array(seq.length).fill(-1);
  for (let i = 0; i < seq.length; i++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (seq[tails[mid]!]! < seq[i]!) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1]!;
    tails[lo] = i;
  }
  const keep = new Set<number>();
  for (let i = tails.length ? tails[tails.length - 1]! : -1; i >= 0; i = prev[i]!) keep.add(i);
  return keep;
}

/** Ids of `next`'s blocks whose place (parent, or order among the siblings they kept) changed since `base`. */
function movedIds(base: Map<string, Placed>, next: readonly EditorBlock[]): Set<string> {
  const moved = new Set<string>();
  const siblings = (list: readonly EditorBlock[], parent: string | null, baseList: readonly EditorBlock[]) => {
    const baseAt = new Map(baseList.map((b, i) => [b.id, i]));
    const stayed: string[] = [];
    for (const b of list) {
      const was = base.get(b.id);
      if (was === undefined) continue;
      if (was.parent !== parent) moved.add(b.id);
      else stayed.push(b.id);
    }
    const keep = longestIncreasing(stayed.map((id) => baseAt.get(id)!));
    stayed.forEach((id, i) => {
      if (!keep.has(i)) moved.add(id);
    });
    for (const b of list) siblings(b.children, b.id, base.get(b.id)?.block.children ?? []);
  };
  const roots = [...base.values()].filter((p) => p.parent === null).map((p) => p.block);
  siblings(next, null, roots);
  return moved;
}

/** Attributes with their keys sorted, as JSON: equal formatting compares equal. */
function attrsKey(attrs: Json | undefined): string {
  if (!attrs) return '{}';
  return JSON.stringify(Object.keys(attrs).sort().map((k) => [k, attrs[k]]));
}

/** The formatting of each UTF-16 unit of `runs` (the unit Yjs positions count). */
function unitAttrs(runs: Delta): (Json | undefined)[] {
  const out: (Json | undefined)[] = [];
  for (const r of runs) for (let i = 0; i < (r.insert as string).length; i++) out.push(r.attributes);
  return out;
}

/** `runs` from UTF-16 unit `from` to `to`, as runs again. */
function sliceRuns(text: string, attrs: readonly (Json | undefined)[], from: number, to: number): Delta {
  const out: Delta = [];
  for (let i = from; i < to; i++) {
    const last = out[out.length - 1];
    const a = attrs[i];
    if (last && attrsKey(last.attributes) === attrsKey(a)) last.insert += text[i]!;
    else out.push(a ? { insert: text[i]!, attributes: a } : { insert: text[i]! });
  }
  return out;
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** How many UTF-16 units of context around a changed span are used to find it in text a person changed. */
const CONTEXT = 16;

/**
 * Bring one block's change from `before` to `after` into its existing content element as a minimal
 * edit — changed props as attributes, changed inline text as a delete/insert/format of the span that
 * changed — so Yjs merges it with a person's concurrent keystrokes in the same block. False (nothing
 * done) when the block's shape does not allow it: a type change, a table, inline content with hard
 * breaks, or a content element that is not a single text node.
 */
function mergeBlock(container: Y.XmlElement, before: EditorBlock, after: EditorBlock): boolean {
  const el = container.toArray()[0];
  if (!(el instanceof Y.XmlElement) || before.type !== after.type || el.nodeName !== after.type) return false;
  const textless = CONTENTLESS.has(after.type) || after.content === undefined || before.content === undefined;
  const contentChanged = JSON.stringify(before.content) !== JSON.stringify(after.content);
  let nodes: (Y.XmlText | Y.XmlElement)[] = [];
  let baseRuns: Delta = [];
  let nextRuns: Delta = [];
  if (contentChanged) {
    if (textless || !Array.isArray(before.content) || !Array.isArray(after.content)) return false;
    baseRuns = inlineRuns(before.content);
    nextRuns = inlineRuns(after.content);
    const breaks = after.type !== 'codeBlock' && [...baseRuns, ...nextRuns].some((r) => (r.insert as string).includes('\n'));
    nodes = el.toArray() as (Y.XmlText | Y.XmlElement)[];
    if (breaks || nodes.length > 1 || (nodes.length === 1 && !(nodes[0] instanceof Y.XmlText))) return false;
  }
  const was = isObject(before.props) ? before.props : {};
  const now = isObject(after.props) ? after.props : {};
  for (const k of new Set([...Object.keys(was), ...Object.keys(now)])) {
    if (JSON.stringify(was[k]) === JSON.stringify(now[k])) continue;
    if (now[k] === undefined || now[k] === null) el.removeAttribute(k);
    else el.setAttribute(k, now[k] as string);
  }
  if (!contentChanged) return true;
  let text = nodes[0] as Y.XmlText | undefined;
  if (text === undefined) {
    el.insert(0, [new Y.XmlText()]);
    text = el.get(0) as Y.XmlText;
  }
  mergeText(text, baseRuns, nextRuns);
  return true;
}

/**
 * Apply the change from `baseRuns` to `nextRuns` to `text` (which held `baseRuns`, and may since
 * hold a person's edits): the span between their common prefix and suffix is found in the current
 * text — after the unchanged prefix, before the unchanged suffix, or by its surrounding context —
 * and replaced (or, when only its formatting changed, re-formatted). When the span is found nowhere
 * the agent's new text is inserted after the unchanged prefix or before the unchanged suffix (else at
 * its old offset) and nothing of the person's text is deleted.
 */
function mergeText(text: Y.XmlText, baseRuns: Delta, nextRuns: Delta): void {
  const b = baseRuns.map((r) => r.insert).join('');
  const n = nextRuns.map((r) => r.insert).join('');
  const bAttrs = unitAttrs(baseRuns);
  const nAttrs = unitAttrs(nextRuns);
  const same = (i: number, j: number) => b[i] === n[j] && attrsKey(bAttrs[i]) === attrsKey(nAttrs[j]);
  let p = 0;
  while (p < b.length && p < n.length && same(p, p)) p++;
  if (p > 0 && isHigh(b.charCodeAt(p - 1))) p--;
  let s = 0;
  while (s < b.length - p && s < n.length - p && same(b.length - 1 - s, n.length - 1 - s)) s++;
  if (s > 0 && isLow(b.charCodeAt(b.length - s))) s--;
  const bEnd = b.length - s;
  const nEnd = n.length - s;
  const removed = b.slice(p, bEnd);
  const cur = (text.toDelta() as Delta).map((op) => (typeof op.insert === 'string' ? op.insert : '\ufffc')).join('');
  let at = -1;
  if (cur.startsWith(b.slice(0, p)) && cur.startsWith(removed, p)) at = p;
  else if (cur.endsWith(b.slice(bEnd)) && cur.length - s - removed.length >= 0 && cur.startsWith(removed, cur.length - s - removed.length)) {
    at = cur.length - s - removed.length;
  } else {
    const left = b.slice(Math.max(0, p - CONTEXT), p);
    const probe = left + removed + b.slice(bEnd, bEnd + CONTEXT);
    const first = probe ? cur.indexOf(probe) : -1;
    if (first >= 0 && cur.indexOf(probe, first + 1) < 0) at = first + left.length;
  }
  if (at < 0) {
    // Next to whichever unchanged side is still intact, else at the span's old offset.
    const prefixKept = cur.startsWith(b.slice(0, p));
    let offset = !prefixKept && cur.endsWith(b.slice(bEnd)) && cur.length >= s ? cur.length - s : Math.min(p, cur.length);
    for (const r of sliceRuns(n, nAttrs, p, nEnd)) {
      text.insert(offset, r.insert as string, { ...(r.attributes ?? {}) });
      offset += (r.insert as string).length;
    }
    return;
  }
  if (removed === n.slice(p, nEnd)) {
    // Only the formatting changed: format the span, clearing the marks it no longer has.
    for (let i = 0; i < removed.length; i++) {
      const attrs: Json = { ...(nAttrs[p + i] ?? {}) };
      for (const k of Object.keys(bAttrs[p + i] ?? {})) if (!(k in attrs)) attrs[k] = null;
      text.format(at + i, 1, attrs);
    }
    return;
  }
  if (removed.length) text.delete(at, removed.length);
  let offset = at;
  for (const r of sliceRuns(n, nAttrs, p, nEnd)) {
    text.insert(offset, r.insert as string, { ...(r.attributes ?? {}) });
    offset += (r.insert as string).length;
  }
}

/**
 * Bring the change from API version `base` to API version `next` into `fragment`, leaving everything
 * else in it (a person's edits not committed yet) as it is. Call inside one transaction: the whole
 * change is then one Yjs update.
 * @remarks Per block: a block whose props or inline text changed gets the change applied to its
 * existing content element as a minimal edit (changed attributes; the changed span of its text
 * deleted/inserted/re-formatted, found in the text a person may be typing in), so Yjs keeps both the
 * agent's and the person's edits; a block whose type changed, a table whose content changed, or
 * inline content with hard breaks gets a new content element; a new block (or one a person
 * deleted meanwhile) is inserted after its nearest preceding sibling; a moved block is taken out with its current subtree and put at its new place; a block
 * `next` no longer holds is deleted with its subtree.
 */
export function applyVersion(fragment: Y.XmlFragment, base: readonly EditorBlock[], next: readonly EditorBlock[]): void {
  const was = index(base);
  const now = index(next);
  const moved = movedIds(was, next);
  const inFragment = containers(fragment);
  let top = fragment.toArray().find((g): g is Y.XmlElement => g instanceof Y.XmlElement && g.nodeName === 'blockGroup');
  if (top === undefined) {
    fragment.insert(fragment.length, [new Y.XmlElement('blockGroup')]);
    top = fragment.get(fragment.length - 1) as Y.XmlElement;
  }
  const forget = (container: Y.XmlElement) => {
    const id = container.getAttribute('id');
    if (typeof id === 'string' && inFragment.get(id) === container) inFragment.delete(id);
    const sub = container.toArray()[1];
    if (sub instanceof Y.XmlElement) for (const c of sub.toArray()) if (c instanceof Y.XmlElement) forget(c);
  };
  const remember = (container: Y.XmlElement) => {
    const id = container.getAttribute('id');
    if (typeof id === 'string') inFragment.set(id, container);
    const sub = container.toArray()[1];
    if (sub instanceof Y.XmlElement) for (const c of sub.toArray()) if (c instanceof Y.XmlElement) remember(c);
  };
  const remove = (container: Y.XmlElement) => {
    forget(container);
    const parent = container.parent as Y.XmlElement;
    const at = parent.toArray().indexOf(container);
    if (at >= 0) parent.delete(at, 1);
  };
  const groupFor = (parent: string | null): Y.XmlElement => {
    const container = parent === null ? undefined : inFragment.get(parent);
    if (container === undefined) return top!;
    const sub = container.toArray()[1];
    if (sub instanceof Y.XmlElement) return sub;
    container.insert(container.length, [new Y.XmlElement('blockGroup')]);
    return container.get(container.length - 1) as Y.XmlElement;
  };
  const insertAt = (block: EditorBlock, parent: string | null, siblings: readonly EditorBlock[], i: number) => {
    const group = groupFor(parent);
    let at = 0;
    for (let k = i - 1; k >= 0; k--) {
      const prev = inFragment.get(siblings[k]!.id);
      const pos = prev && prev.parent === group ? group.toArray().indexOf(prev) : -1;
      if (pos >= 0) {
        at = pos + 1;
        break;
      }
    }
    group.insert(at, [containerElement(block)]);
    remember(group.get(at) as Y.XmlElement);
  };
  const visit = (list: readonly EditorBlock[], parent: string | null) => {
    list.forEach((b, i) => {
      const before = was.get(b.id);
      const changed = before === undefined || before.own !== now.get(b.id)!.own;
      const container = inFragment.get(b.id);
      if (container === undefined) {
        // Unchanged by the agent and gone from the fragment: a person deleted it (not committed yet).
        if (before !== undefined && !changed && !moved.has(b.id)) return visit(b.children, b.id);
        insertAt({ ...b, children: [] }, parent, list, i);
      } else if (moved.has(b.id)) {
        const current = readContainer(container);
        remove(container);
        const own = changed || current === undefined ? b : current;
        insertAt({ ...own, children: current?.children ?? [] }, parent, list, i);
      } else if (changed && !(before !== undefined && mergeBlock(container, before.block, b))) {
        container.delete(0, 1);
        container.insert(0, [contentElement(b)]);
      }
      visit(b.children, b.id);
    });
  };
  visit(next, null);
  for (const [id] of was) {
    if (now.has(id)) continue;
    const container = inFragment.get(id);
    if (container !== undefined) remove(container);
  }
}
