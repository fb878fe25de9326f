/**
 * Checks of a Block that a schema cannot express (which fields go with which type, one block of
 * inline Markdown per block) and its conversion to a stored record.
 * @module
 */
import { parseInline } from '../blocks/inline-markdown.ts';
import type { BlockInput, BlockRecord } from '../blocks/model.ts';
import type { FieldError } from '../errors.ts';

const TEXT_TYPES = new Set(['paragraph', 'heading', 'bulletListItem', 'numberedListItem', 'checkListItem', 'quote']);

const CODE_FIELDS: ReadonlySet<string> = new Set(['code', 'language']);
const TABLE_FIELDS: ReadonlySet<string> = new Set(['rows']);
const HEADING_FIELDS: ReadonlySet<string> = new Set(['markdown', 'level']);
const CHECK_FIELDS: ReadonlySet<string> = new Set(['markdown', 'checked']);
const TEXT_FIELDS: ReadonlySet<string> = new Set(['markdown']);

/** The fields each type may carry (besides `type` and `children`). */
function allowedFields(type: string): ReadonlySet<string> {
  if (type === 'codeBlock') return CODE_FIELDS;
  if (type === 'table') return TABLE_FIELDS;
  if (type === 'heading') return HEADING_FIELDS;
  if (type === 'checkListItem') return CHECK_FIELDS;
  return TEXT_FIELDS;
}

const OWN_FIELDS = ['markdown', 'level', 'checked', 'code', 'language', 'rows'] as const;

/**
 * Append to `errors` what is wrong with `block` (and its children) beyond the schema.
 * @param path the block's field path, e.g. `mutation.blocks.3`.
 */
export function checkBlock(block: BlockInput, path: string, errors: FieldError[]): void {
  const allowed = allowedFields(block.type);
  for (const f of OWN_FIELDS) {
    if (block[f] !== undefined && !allowed.has(f)) {
      errors.push({ field: `${path}.${f}`, message: `is not a field of a ${block.type} block` });
    }
  }
  if (block.type === 'table' && block.rows === undefined) {
    errors.push({ field: `${path}.rows`, message: 'is required for a table block (1-50 rows of 1-30 cells)' });
  }
  if (TEXT_TYPES.has(block.type) && block.markdown !== undefined) {
    const parsed = parseInline(block.markdown);
    if (!parsed.ok) errors.push({ field: `${path}.markdown`, message: parsed.message });
  }
  if (block.type === 'table' && block.rows) {
    block.rows.forEach((row, r) =>
      row.forEach((cell, c) => {
        const parsed = parseInline(cell);
        if (!parsed.ok) errors.push({ field: `${path}.rows.${r}.${c}`, message: parsed.message });
      }),
    );
  }
  block.children?.forEach((child, i) => checkBlock(child, `${path}.children.${i}`, errors));
}

/** Count a block and its descendants. */
export function countBlocks(blocks: readonly BlockInput[]): number {
  let n = 0;
  for (const b of blocks) n += 1 + (b.children ? countBlocks(b.children) : 0);
  return n;
}

/** The stored fields of a block (without parent and order key). */
export function toRecordFields(block: BlockInput): Omit<BlockRecord, 'p' | 'o'> {
  const rec: Omit<BlockRecord, 'p' | 'o'> = { t: block.type };
  if (block.type === 'codeBlock') {
    rec.code = block.code ?? '';
    if (block.language !== undefined) rec.lang = block.language;
    return rec;
  }
  if (block.type === 'table') {
    rec.rows = block.rows ?? [['']];
    return rec;
  }
  rec.md = block.markdown ?? '';
  if (block.type === 'heading') rec.lv = block.level ?? 1;
  if (block.type === 'checkListItem') rec.ck = block.checked ?? false;
  return rec;
}

/**
 * The stored record of a block under `parent` at order key `order`: {@link toRecordFields} followed
 * by `p` and `o` (the same keys in the same order), built without an intermediate object.
 */
export function toRecord(block: BlockInput, parent: string | null, order: string): BlockRecord {
  if (block.type === 'paragraph' || block.type === 'bulletListItem' || block.type === 'numberedListItem' || block.type === 'quote') {
    return { t: block.type, md: block.markdown ?? '', p: parent, o: order };
  }
  return { ...toRecordFields(block), p: parent, o: order };
}
