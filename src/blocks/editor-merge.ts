/**
 * Bringing a new API version into a BlockNote collaboration fragment a person may be editing
 * ({@link applyVersion}): every change an agent made is applied as the smallest Yjs edit that
 * carries it, so the person's keystrokes not committed yet survive beside it.
 *
 * Inline content is handled as a sequence of UTF-16 units: the characters of its `Y.XmlText`
 * children, and one unit ("\n") per `hardBreak` element. A change of a block's text is the span
 * between the unchanged start and end of the old and new text, found again in what the element
 * holds now and replaced there; a "\n" in it becomes a hardBreak (splitting the text node it falls
 * in), a removed one goes (the two text nodes it separated stay side by side until the editor joins
 * them on its next edit, so keystrokes still on their way into either are not lost).
 * @module
 */
import * as Y from 'yjs';
import {
  cellElement,
  cellSpec,
  containerElement,
  contentElement,
  CONTENTLESS,
  element,
  inlineRuns,
  isObject,
  readContainer,
  rowElement,
  runNodes,
  tableShape,
  type Delta,
  type EditorBlock,
  type Json,
  type TableShape,
} from './editor-fragment.ts';

// ---------------------------------------------------------------------------------------------
// Inline content of an element as units

type Inline = Y.XmlText | Y.XmlElement;

const isBreak = (node: unknown): node is Y.XmlElement => node instanceof Y.XmlElement && node.nodeName === 'hardBreak';

/** Units of an inline child: a text's length, one for an inline element. */
const unitsOf = (node: Inline) => (node instanceof Y.XmlText ? node.length : 1);

/** True when `el` holds only inline content this module can edit: text nodes and hardBreaks. */
function editableInline(el: Y.XmlElement): boolean {
  return el.toArray().every((n) => n instanceof Y.XmlText || isBreak(n));
}

/** What `el` holds now as runs: its texts' formatting runs, a hardBreak as an unformatted "\n". */
function currentRuns(el: Y.XmlElement): Delta {
  const runs: Delta = [];
  for (const node of el.toArray()) {
    if (node instanceof Y.XmlText) {
      for (const op of node.toDelta() as Delta) if (typeof op.insert === 'string') runs.push(op.attributes ? { insert: op.insert, attributes: op.attributes } : { insert: op.insert });
    } else runs.push({ insert: isBreak(node) ? '\n' : '\ufffc' });
  }
  return runs;
}

const textOf = (runs: Delta) => runs.map((r) => r.insert as string).join('');

/** Runs without formatting (a code block's text carries none). */
const unformatted = (runs: Delta): Delta => runs.map((r) => ({ insert: r.insert }));

/** Delete `count` units of `el` from `at`: text in its text nodes, whole hardBreaks. */
function deleteUnits(el: Y.XmlElement, at: number, count: number): void {
  const end = at + count;
  const nodes = el.toArray() as Inline[];
  const starts: number[] = [];
  let s = 0;
  for (const n of nodes) {
    starts.push(s);
    s += unitsOf(n);
  }
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i]!;
    const from = Math.max(at, starts[i]!);
    const to = Math.min(end, starts[i]! + unitsOf(node));
    if (from >= to) continue;
    if (node instanceof Y.XmlText) node.delete(from - starts[i]!, to - from);
    else el.delete(i, 1);
  }
}

/** Where text goes at unit `at` of `el`: a text node and an offset in it (a new text node where none is). */
interface Cursor {
  text: Y.XmlText;
  offset: number;
}

function cursorAt(el: Y.XmlElement, at: number): Cursor {
  const nodes = el.toArray() as Inline[];
  let s = 0;
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!;
    if (node instanceof Y.XmlText && at <= s + node.length) return { text: node, offset: Math.max(0, at - s) };
    if (at <= s) {
      el.insert(i, [new Y.XmlText()]);
      return { text: el.get(i) as Y.XmlText, offset: 0 };
    }
    s += unitsOf(node);
  }
  el.insert(nodes.length, [new Y.XmlText()]);
  return { text: el.get(nodes.length) as Y.XmlText, offset: 0 };
}

/** The formatting runs of `text` from unit `from` to `to`. */
function textRuns(text: Y.XmlText, from: number, to: number): Delta {
  const out: Delta = [];
  let s = 0;
  for (const op of text.toDelta() as Delta) {
    if (typeof op.insert !== 'string') continue;
    const str = op.insert.slice(Math.max(0, from - s), Math.max(0, to - s));
    if (str) out.push({ insert: str, attributes: op.attributes ?? {} });
    s += op.insert.length;
  }
  return out;
}

/**
 * Put a hardBreak at unit `at` of `el`. Inside a text node the shorter side of the text moves to a
 * new text node beside the break (Yjs cannot split a text; a person's keystrokes arriving later in
 * the moved side land at the break); between nodes nothing moves.
 */
function insertBreak(el: Y.XmlElement, at: number): void {
  const nodes = el.toArray() as Inline[];
  let s = 0;
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!;
    const n = unitsOf(node);
    if (at <= s) {
      el.insert(i, [new Y.XmlElement('hardBreak')]);
      return;
    }
    if (at < s + n && node instanceof Y.XmlText) {
      const offset = at - s;
      if (offset <= n - offset) {
        const head = textRuns(node, 0, offset);
        node.delete(0, offset);
        el.insert(i, [new Y.XmlText(), new Y.XmlElement('hardBreak')]);
        (el.get(i) as Y.XmlText).applyDelta(head);
      } else {
        const tail = textRuns(node, offset, n);
        node.delete(offset, n - offset);
        el.insert(i + 1, [new Y.XmlElement('hardBreak'), new Y.XmlText()]);
        (el.get(i + 2) as Y.XmlText).applyDelta(tail);
      }
      return;
    }
    s += n;
  }
  el.insert(nodes.length, [new Y.XmlElement('hardBreak')]);
}

/** Insert `runs` at unit `at` of `el`; with `hardBreaks` each "\n" becomes a hardBreak. */
function insertUnits(el: Y.XmlElement, at: number, runs: Delta, hardBreaks: boolean): void {
  let pos = at;
  for (const run of runs) {
    const parts = hardBreaks ? (run.insert as string).split('\n') : [run.insert as string];
    parts.forEach((part, k) => {
      if (k > 0) insertBreak(el, pos++);
      if (part === '') return;
      const { text, offset } = cursorAt(el, pos);
      text.insert(offset, part, { ...(run.attributes ?? {}) });
      pos += part.length;
    });
  }
}

/** Set the formatting of unit `at` of `el` (nothing for a hardBreak). */
function formatUnit(el: Y.XmlElement, at: number, attrs: Json): void {
  let s = 0;
  for (const node of el.toArray() as Inline[]) {
    const n = unitsOf(node);
    if (at < s + n) {
      if (node instanceof Y.XmlText) node.format(at - s, 1, attrs);
      return;
    }
    s += n;
  }
}

/** Attributes with their keys sorted, as JSON: equal formatting compares equal. */
function attrsKey(attrs: Json | undefined): string {
  if (!attrs) return '{}';
  return JSON.stringify(Object.keys(attrs).sort().map((k) => [k, attrs[k]]));
}

/** The formatting of each UTF-16 unit of `runs` (the unit Yjs positions count); a hardBreak has none. */
function unitAttrs(runs: Delta, hardBreaks: boolean): (Json | undefined)[] {
  const out: (Json | undefined)[] = [];
  for (const r of runs) {
    const str = r.insert as string;
    for (let i = 0; i < str.length; i++) out.push(hardBreaks && str[i] === '\n' ? undefined : r.attributes);
  }
  return out;
}

/** `text` from UTF-16 unit `from` to `to`, as runs of equal formatting. */
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
 * Apply the change from `baseRuns` to `nextRuns` to the inline content of `el` (which held
 * `baseRuns`, and may since hold a person's edits): the span between their common prefix and suffix
 * is found in the current content — after the unchanged prefix, before the unchanged suffix, or by
 * its surrounding context — and replaced (or, when only its formatting changed, re-formatted). When
 * the span is found nowhere the agent's new text is inserted after the unchanged prefix or before
 * the unchanged suffix (else at its old offset) and nothing of the person's text is deleted.
 * With `hardBreaks` a "\n" is a hardBreak element (else text, as in a code block).
 */
export function mergeInline(el: Y.XmlElement, baseRuns: Delta, nextRuns: Delta, hardBreaks: boolean): void {
  const b = textOf(baseRuns);
  const n = textOf(nextRuns);
  const bAttrs = unitAttrs(baseRuns, hardBreaks);
  const nAttrs = unitAttrs(nextRuns, hardBreaks);
  const same = (i: number, j: number) => b[i] === n[j] && attrsKey(bAttrs[i]) === attrsKey(nAttrs[j]);
  let p = 0;
  while (p < b.length && p < n.length && same(p, p)) p++;
  if (p > 0 && isHigh(b.charCodeAt(p - 1))) p--;
  let s = 0;
  while (s < b.length - p && s < n.length - p && same(b.length - 1 - s, n.length - 1 - s)) s++;
  if (s > 0 && isLow(b.charCodeAt(b.length - s))) s--;
  const bEnd = b.length - s;
  const nEnd = n.length - s;
  if (p === bEnd && p === nEnd) return;
  const removed = b.slice(p, bEnd);
  const cur = textOf(currentRuns(el));
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
    const offset = !prefixKept && cur.endsWith(b.slice(bEnd)) && cur.length >= s ? cur.length - s : Math.min(p, cur.length);
    insertUnits(el, offset, sliceRuns(n, nAttrs, p, nEnd), hardBreaks);
  } else if (removed === n.slice(p, nEnd)) {
    // Only the formatting changed: format the span, clearing the marks it no longer has.
    for (let i = 0; i < removed.length; i++) {
      const attrs: Json = { ...(nAttrs[p + i] ?? {}) };
      for (const k of Object.keys(bAttrs[p + i] ?? {})) if (!(k in attrs)) attrs[k] = null;
      formatUnit(el, at + i, attrs);
    }
  } else {
    if (removed.length) deleteUnits(el, at, removed.length);
    insertUnits(el, at, sliceRuns(n, nAttrs, p, nEnd), hardBreaks);
  }
}

// ---------------------------------------------------------------------------------------------
// One block

/** Set the attributes whose values differ between `was` and `now` (removing those `now` lacks); only `only`'s keys when given. */
function applyAttrs(el: Y.XmlElement, was: Json, now: Json, only?: (key: string) => boolean): void {
  for (const k of new Set([...Object.keys(was), ...Object.keys(now)])) {
    if (JSON.stringify(was[k]) === JSON.stringify(now[k]) || (only && !only(k))) continue;
    if (now[k] === undefined || now[k] === null) el.removeAttribute(k);
    else el.setAttribute(k, now[k] as string);
  }
}

const propsOf = (block: EditorBlock): Json => (isObject(block.props) ? block.props : {});

/** True for a block whose content is inline text (not a table, not content-less). */
const inlineBlock = (block: EditorBlock) => !CONTENTLESS.has(block.type) && Array.isArray(block.content);

/** Runs of a block's inline content as its element keeps them (a code block's unformatted). */
const runsFor = (type: string, content: unknown): Delta => (type === 'codeBlock' ? unformatted(inlineRuns(content)) : inlineRuns(content));

/** A new element named `name` with `attrs` holding what `from` holds now (for a type change keeping a person's text). */
function carryInline(from: Y.XmlElement, name: string, attrs: Json): Y.XmlElement {
  const code = name === 'codeBlock';
  const runs = code ? unformatted(currentRuns(from)) : currentRuns(from);
  return element(name, attrs, runNodes(runs, !code));
}

/**
 * A table's change from `before` to `after` applied to its element `el` cell by cell: rows (and
 * cells in a row) added or removed where the two differ, a changed cell's attributes set, its text
 * merged as inline content; a cell turning into a header (or back) is rebuilt with its current text.
 * False (nothing done) when the element's rows and cells no longer match `before` (a person
 * changed the table's shape too).
 */
function mergeTable(el: Y.XmlElement, before: TableShape, after: TableShape): boolean {
  const rowEls = el.toArray();
  if (rowEls.length !== before.rows.length || rowEls.some((r, i) => !(r instanceof Y.XmlElement) || r.length !== before.rows[i]!.length)) return false;
  const rowsPlan = pairUp(before.rows.map((r) => JSON.stringify(r)), after.rows.map((r) => JSON.stringify(r)));
  const cellsPlans = rowsPlan.pairs.map(([i, j]) => pairUp(before.rows[i]!.map((c) => JSON.stringify(c)), after.rows[j]!.map((c) => JSON.stringify(c))));
  for (const i of [...rowsPlan.removed].reverse()) el.delete(i, 1);
  for (const j of rowsPlan.added) el.insert(j, [rowElement(after, j)]);
  rowsPlan.pairs.forEach(([bi, aj], k) => {
    const row = el.get(aj) as Y.XmlElement;
    const plan = cellsPlans[k]!;
    for (const c of [...plan.removed].reverse()) row.delete(c, 1);
    for (const c of plan.added) {
      const { name, attrs } = cellSpec(after, aj, c);
      row.insert(c, [cellElement(name, attrs, runNodes(inlineRuns(after.rows[aj]![c]!['content']), true))]);
    }
    for (const [bc, ac] of plan.pairs) {
      const was = cellSpec(before, bi, bc);
      const now = cellSpec(after, aj, ac);
      let cell = row.get(ac) as Y.XmlElement;
      let para = cell.toArray().find((p): p is Y.XmlElement => p instanceof Y.XmlElement);
      if (cell.nodeName !== now.name || para === undefined || !editableInline(para)) {
        const rebuilt = cellElement(now.name, now.attrs, para && editableInline(para) ? runNodes(currentRuns(para), true) : []);
        row.delete(ac, 1);
        row.insert(ac, [rebuilt]);
        cell = row.get(ac) as Y.XmlElement;
        para = cell.get(0) as Y.XmlElement;
      } else applyAttrs(cell, was.attrs, now.attrs);
      const bRuns = inlineRuns(before.rows[bi]![bc]!['content']);
      const aRuns = inlineRuns(after.rows[aj]![ac]!['content']);
      mergeInline(para, bRuns, aRuns, true);
    }
  });
  return true;
}

/**
 * Positions of two lists kept in pairs, the rest removed from the first or added from the second:
 * equal items at the start and the end pair up, the changed stretch between them pairs up by
 * position and its longer side's extra items are removed (or added) at its end.
 */
function pairUp(was: readonly string[], now: readonly string[]): { pairs: [number, number][]; removed: number[]; added: number[] } {
  let p = 0;
  while (p < was.length && p < now.length && was[p] === now[p]) p++;
  let s = 0;
  while (s < was.length - p && s < now.length - p && was[was.length - 1 - s] === now[now.length - 1 - s]) s++;
  const pairs: [number, number][] = [];
  const removed: number[] = [];
  const added: number[] = [];
  const middle = Math.min(was.length - p - s, now.length - p - s);
  for (let i = 0; i < p + middle; i++) pairs.push([i, i]);
  for (let i = p + middle; i < was.length - s; i++) removed.push(i);
  for (let j = p + middle; j < now.length - s; j++) added.push(j);
  for (let k = 0; k < s; k++) pairs.push([was.length - s + k, now.length - s + k]);
  return { pairs, removed, added };
}

/**
 * Bring one block's change from `before` to `after` into its container as the smallest edit:
 * changed props as attributes; changed inline text (hard breaks included) merged into the text the
 * element holds now; a type change between inline types a new element carrying the current text
 * with the agent's text change merged in; a table merged cell by cell. A type the person changed
 * (and the agent did not) stays. False (nothing done) when the block's shape allows none of this:
 * content that is not inline text on one side of a type change, or a table whose rows a person
 * changed too.
 */
export function mergeBlock(container: Y.XmlElement, before: EditorBlock, after: EditorBlock): boolean {
  const el = container.toArray()[0];
  if (!(el instanceof Y.XmlElement)) return false;
  const contentChanged = JSON.stringify(before.content) !== JSON.stringify(after.content);
  if (before.type !== after.type) {
    // The agent changed the type: a new content element (Yjs elements keep their name), carrying the current text.
    if (!inlineBlock(before) || !inlineBlock(after) || !editableInline(el)) return false;
    const carried = carryInline(el, after.type, propsOf(after));
    container.delete(0, 1);
    container.insert(0, [carried]);
    const fresh = container.get(0) as Y.XmlElement;
    const code = after.type === 'codeBlock';
    mergeInline(fresh, code ? unformatted(runsFor(before.type, before.content)) : runsFor(before.type, before.content), runsFor(after.type, after.content), !code);
    return true;
  }
  const personTyped = el.nodeName !== before.type; // the person changed the type; the agent did not
  if (after.type === 'table' || el.nodeName === 'table') {
    if (personTyped) return false;
    if (contentChanged) {
      if (!isObject(before.content) || !isObject(after.content)) return false;
      if (!mergeTable(el, tableShape(before.content), tableShape(after.content))) return false;
    }
    applyAttrs(el, propsOf(before), propsOf(after));
    return true;
  }
  if (contentChanged && (!inlineBlock(before) || !inlineBlock(after) || CONTENTLESS.has(el.nodeName) || !editableInline(el))) return false;
  const hardBreaks = el.nodeName !== 'codeBlock';
  const has = new Set(Object.keys(el.getAttributes()));
  applyAttrs(el, propsOf(before), propsOf(after), personTyped ? (k) => has.has(k) : undefined);
  if (contentChanged) {
    const strip = (runs: Delta) => (hardBreaks ? runs : unformatted(runs));
    mergeInline(el, strip(runsFor(before.type, before.content)), strip(runsFor(after.type, after.content)), hardBreaks);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// A whole version

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

/** How much more keeping a block a person is typing in is worth than keeping another (see {@link movedIds}). */
const BUSY_WEIGHT = 1000;

/**
 * Positions (in `seq`, distinct numbers from 0 to `seq.length - 1` or a subset of a range as large)
 * of a strictly increasing subsequence of the greatest total `weight`: with weights of 1, a longest
 * one. O(n log n) with a Fenwick tree of prefix maxima over the values.
 */
function heaviestIncreasing(seq: readonly number[], weight: (i: number) => number): Set<number> {
  const size = seq.reduce((m, v) => Math.max(m, v + 1), 0);
  const tree: { best: number; at: number }[] = Array.from({ length: size + 1 }, () => ({ best: 0, at: -1 }));
  const best: number[] = [];
  const prev: number[] = [];
  for (let i = 0; i < seq.length; i++) {
    let top = { best: 0, at: -1 };
    for (let k = seq[i]!; k > 0; k -= k & -k) if (tree[k]!.best > top.best) top = tree[k]!;
    best[i] = top.best + weight(i);
    prev[i] = top.at;
    for (let k = seq[i]! + 1; k <= size; k += k & -k) if (best[i]! > tree[k]!.best) tree[k] = { best: best[i]!, at: i };
  }
  let end = -1;
  for (let i = 0; i < seq.length; i++) if (end < 0 || best[i]! > best[end]!) end = i;
  const keep = new Set<number>();
  for (let i = end; i >= 0; i = prev[i]!) keep.add(i);
  return keep;
}

/**
 * Ids of `next`'s blocks whose place (parent, or order among the siblings they kept) changed since
 * `base`: where a reorder can be told either way, the fewest blocks count as moved, a `busy` one
 * (a person is typing in it) as a thousand.
 */
function movedIds(base: Map<string, Placed>, next: readonly EditorBlock[], busy: (id: string) => boolean): Set<string> {
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
    const keep = heaviestIncreasing(
      stayed.map((id) => baseAt.get(id)!),
      (i) => (busy(stayed[i]!) ? BUSY_WEIGHT : 1),
    );
    stayed.forEach((id, i) => {
      if (!keep.has(i)) moved.add(id);
    });
    for (const b of list) siblings(b.children, b.id, base.get(b.id)?.block.children ?? []);
  };
  const roots = [...base.values()].filter((p) => p.parent === null).map((p) => p.block);
  siblings(next, null, roots);
  return moved;
}

/** Options of {@link applyVersion}. */
export interface ApplyOptions {
  /**
   * True for a block a person has edits pending in: when the version reorders its siblings, the
   * others are moved around it rather than it (Yjs has no move: a moved block is a new element, and
   * keystrokes still on their way into the old one would be lost).
   */
  busy?: (id: string) => boolean;
}

/**
 * Bring the change from API version `base` to API version `next` into `fragment`, leaving everything
 * else in it (a person's edits not committed yet) as it is. Call inside one transaction: the whole
 * change is then one Yjs update.
 * @remarks Per block: a changed block gets its change merged into its existing content element
 * ({@link mergeBlock}: props, inline text with hard breaks, type changes between text types, table
 * cells), so Yjs keeps both the agent's and the person's edits; only where that is impossible (a
 * type change to or from a table or a content-less block, a table whose rows a person changed too)
 * does the block get a new content element (the agent's version). A new block (or one a person
 * deleted meanwhile) is inserted after its nearest preceding sibling; a moved block is taken out
 * with its current subtree and content and put at its new place, then its change merged as above;
 * a block `next` no longer holds is deleted with its subtree.
 */
export function applyVersion(fragment: Y.XmlFragment, base: readonly EditorBlock[], next: readonly EditorBlock[], options: ApplyOptions = {}): void {
  const was = index(base);
  const now = index(next);
  const moved = movedIds(was, next, options.busy ?? (() => false));
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
  const insertAt = (block: EditorBlock, parent: string | null, siblings: readonly EditorBlock[], i: number): Y.XmlElement => {
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
    const placed = group.get(at) as Y.XmlElement;
    remember(placed);
    return placed;
  };
  const bring = (container: Y.XmlElement, before: Placed | undefined, b: EditorBlock) => {
    if (before !== undefined && mergeBlock(container, before.block, b)) return;
    container.delete(0, 1);
    container.insert(0, [contentElement(b)]);
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
        // Yjs has no move: the block is put back at its new place as it is now, then the agent's change merged in.
        const current = readContainer(container);
        remove(container);
        const placed = insertAt({ ...(current ?? b), children: current?.children ?? [] }, parent, list, i);
        if (changed && current !== undefined) bring(placed, before, b);
      } else if (changed) bring(container, before, b);
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
