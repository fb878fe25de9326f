/**
 * Reading BlockNote editor blocks back into block records.
 * @module
 */
import type { FieldError } from '../errors.ts';
import { blockContent, blockProps, type BlockExtra } from './blocknote.ts';
import { inlineToMarkdown, parseInline, type InlineContent, type Styles, type StyledText } from './inline-markdown.ts';
import { BLOCK_TYPES, CODE_LANGUAGE, CODE_LANGUAGE_RULE, type BlockRecord } from './model.ts';

/** One imported block: its editor id (if it had one), its record and its children. */
export interface ImportedBlock {
  id?: string;
  rec: Omit<BlockRecord, 'p' | 'o'>;
  children: ImportedBlock[];
}

/** Result of {@link importBlockNote}. */
export type ImportResult = { ok: true; blocks: ImportedBlock[] } | { ok: false; fieldErrors: FieldError[] };

/** Deepest nesting accepted (far beyond what an editor produces; keeps recursion bounded). */
export const MAX_IMPORT_DEPTH = 256;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const GRAMMAR = new Set<string>(BLOCK_TYPES);
const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * Convert BlockNote editor blocks (the `blocks` of a rich-json document) into records.
 * @param path field path of `blocks` used in field errors (dot-separated, e.g. `document.blocks`).
 * @remarks The eight grammar types become Markdown records; whatever Markdown cannot carry (underline,
 * colours, alignment, a heading level above 3, table widths, …) is kept in `rec.extra` so that
 * rendering the records gives back the same JSON. Other types (image, toggleListItem, divider, file,
 * audio, video, custom blocks) are kept verbatim in `rec.raw`. Block ids are returned as given and
 * not checked against the blockId pattern: that is the caller's choice.
 */
export function importBlockNote(blocks: unknown, path = 'blocks'): ImportResult {
  const errors: FieldError[] = [];
  if (!Array.isArray(blocks)) return { ok: false, fieldErrors: [{ field: path, message: 'must be an array of BlockNote blocks' }] };
  const out = importList(blocks, path, 0, errors);
  return errors.length ? { ok: false, fieldErrors: errors } : { ok: true, blocks: out };
}

function importList(list: unknown[], path: string, depth: number, errors: FieldError[]): ImportedBlock[] {
  const out: ImportedBlock[] = [];
  list.forEach((b, i) => {
    const imported = importBlock(b, `${path}.${i}`, depth, errors);
    if (imported) out.push(imported);
  });
  return out;
}

function importBlock(b: unknown, path: string, depth: number, errors: FieldError[]): ImportedBlock | undefined {
  if (!isObject(b)) {
    errors.push({ field: path, message: 'must be a block object { id, type, props, content, children }' });
    return undefined;
  }
  if (depth >= MAX_IMPORT_DEPTH) {
    errors.push({ field: path, message: `nests deeper than ${MAX_IMPORT_DEPTH} levels` });
    return undefined;
  }
  const before = errors.length;
  if (b.id !== undefined && (typeof b.id !== 'string' || b.id === '')) errors.push({ field: `${path}.id`, message: 'must be a non-empty string' });
  if (typeof b.type !== 'string' || b.type === '') errors.push({ field: `${path}.type`, message: 'is required: the BlockNote block type' });
  if (b.props !== undefined && !isObject(b.props)) errors.push({ field: `${path}.props`, message: 'must be an object' });
  if (b.children !== undefined && !Array.isArray(b.children)) errors.push({ field: `${path}.children`, message: 'must be an array of blocks' });
  const children = Array.isArray(b.children) ? importList(b.children, `${path}.children`, depth + 1, errors) : [];
  if (errors.length > before) return undefined;

  const type = b.type as string;
  const rec = GRAMMAR.has(type) ? grammarRecord(type, b, path, errors) : rawRecord(type, b);
  if (!rec) return undefined;
  const block: ImportedBlock = { rec, children };
  if (typeof b.id === 'string') block.id = b.id;
  return block;
}

function rawRecord(type: string, b: Json): Omit<BlockRecord, 'p' | 'o'> {
  const raw: Json = {};
  for (const [k, v] of Object.entries(b)) if (k !== 'id' && k !== 'children') raw[k] = v;
  return { t: type, raw };
}

function grammarRecord(type: string, b: Json, path: string, errors: FieldError[]): Omit<BlockRecord, 'p' | 'o'> | undefined {
  const props: Json = isObject(b.props) ? b.props : {};
  const rec: Omit<BlockRecord, 'p' | 'o'> = { t: type };
  if (type === 'codeBlock') {
    const items = inlineItems(b.content, `${path}.content`, errors);
    if (!items) return undefined;
    rec.code = items.map((i) => (i.type === 'link' ? i.content.map((t) => t.text).join('') : i.text)).join('');
    if (typeof props.language === 'string' && !CODE_LANGUAGE.test(props.language)) {
      errors.push({ field: `${path}.props.language`, message: CODE_LANGUAGE_RULE });
      return undefined;
    }
    if (typeof props.language === 'string' && props.language !== 'text') rec.lang = props.language;
  } else if (type === 'table') {
    const rows = tableRows(b.content, `${path}.content`, errors);
    if (!rows) return undefined;
    rec.rows = rows;
  } else {
    const items = inlineItems(b.content, `${path}.content`, errors);
    if (!items) return undefined;
    rec.md = markdownOf(items);
    if (type === 'heading') {
      const level = props.level;
      rec.lv = level === 1 || level === 2 || level === 3 ? level : typeof level === 'number' && level > 3 ? 3 : 1;
    }
    if (type === 'checkListItem') {
      if (props.checked !== undefined && typeof props.checked !== 'boolean') {
        errors.push({ field: `${path}.props.checked`, message: 'must be a boolean' });
        return undefined;
      }
      rec.ck = props.checked === true;
    }
  }
  const extra: BlockExtra = {};
  const base = blockProps(rec as BlockRecord);
  const extraProps: Json = {};
  for (const [k, v] of Object.entries(props)) if (!(k in base) || !same(base[k], v)) extraProps[k] = v;
  if (Object.keys(extraProps).length) extra.props = extraProps;
  const content = b.content === undefined ? (type === 'table' ? undefined : []) : b.content;
  if (!same(blockContent(rec as BlockRecord), content)) extra.content = b.content;
  if (extra.props || 'content' in extra) rec.extra = extra;
  return rec;
}

/** Inline content checked for shape; items of other inline types are allowed (kept via `extra`). */
function inlineItems(content: unknown, path: string, errors: FieldError[]): InlineContent[] | undefined {
  if (content === undefined) return [];
  if (!Array.isArray(content)) {
    errors.push({ field: path, message: 'must be an array of inline content' });
    return undefined;
  }
  const out: InlineContent[] = [];
  let ok = true;
  content.forEach((item, i) => {
    const at = `${path}.${i}`;
    if (!isObject(item) || typeof item.type !== 'string') {
      errors.push({ field: at, message: 'must be inline content ({ type: "text", text, styles } or { type: "link", href, content })' });
      ok = false;
    } else if (item.type === 'text') {
      const text = styledText(item, at, errors);
      if (text) out.push(text);
      else ok = false;
    } else if (item.type === 'link') {
      if (typeof item.href !== 'string' || !Array.isArray(item.content)) {
        errors.push({ field: at, message: 'a link needs a string href and an array content of styled text' });
        ok = false;
        return;
      }
      const texts: StyledText[] = [];
      item.content.forEach((t, j) => {
        const text = isObject(t) && t.type === 'text' ? styledText(t, `${at}.content.${j}`, errors) : undefined;
        if (text) texts.push(text);
        else {
          if (!isObject(t) || t.type !== 'text') errors.push({ field: `${at}.content.${j}`, message: 'must be styled text { type: "text", text, styles }' });
          ok = false;
        }
      });
      out.push({ type: 'link', href: item.href, content: texts });
    }
  });
  return ok ? out : undefined;
}

function styledText(item: Json, path: string, errors: FieldError[]): StyledText | undefined {
  if (typeof item.text !== 'string' || (item.styles !== undefined && !isObject(item.styles))) {
    errors.push({ field: path, message: 'styled text needs a string text and an object styles' });
    return undefined;
  }
  const s = isObject(item.styles) ? item.styles : {};
  const styles: Styles = {};
  if (s.bold === true) styles.bold = true;
  if (s.italic === true) styles.italic = true;
  if (s.strike === true) styles.strike = true;
  if (s.code === true) styles.code = true;
  return { type: 'text', text: item.text, styles };
}

/** Markdown for inline content; plain text when the Markdown would not read back as one block. */
function markdownOf(items: InlineContent[]): string {
  const md = inlineToMarkdown(items, { exact: false });
  if (parseInline(md).ok) return md;
  const text = items.map((i) => (i.type === 'link' ? i.content.map((t) => t.text).join('') : i.text)).join('');
  const plain = inlineToMarkdown([{ type: 'text', text: text.replace(/\n/g, ' '), styles: {} }]);
  return parseInline(plain).ok ? plain : '';
}

function tableRows(content: unknown, path: string, errors: FieldError[]): string[][] | undefined {
  if (!isObject(content) || content.type !== 'tableContent' || !Array.isArray(content.rows)) {
    errors.push({ field: path, message: 'must be table content { type: "tableContent", columnWidths, rows: [{ cells }] }' });
    return undefined;
  }
  const rows: string[][] = [];
  let ok = true;
  content.rows.forEach((row, r) => {
    if (!isObject(row) || !Array.isArray(row.cells)) {
      errors.push({ field: `${path}.rows.${r}`, message: 'must be a row { cells: [...] }' });
      ok = false;
      return;
    }
    rows.push(
      row.cells.map((cell, c) => {
        const at = `${path}.rows.${r}.cells.${c}`;
        const inline = isObject(cell) && cell.type === 'tableCell' ? cell.content : cell;
        const items = inlineItems(inline, isObject(cell) ? `${at}.content` : at, errors);
        if (!items) ok = false;
        return items ? markdownOf(items) : '';
      }),
    );
  });
  return ok ? rows : undefined;
}
