/**
 * Checks of a Block that a schema cannot express (which fields go with which type, one block of
 * inline Markdown per block) and its conversion to a stored record.
 * @module
 */
import { parseInline } from '../blocks/inline-markdown.ts';
import type { BlockInput, BlockRecord } from '../blocks/model.ts';
import type { FieldError } from '../errors.ts';

const TEXT_TYPES = new Set(['paragraph', 'heading', 'bulletListItem', 'numberedListItem', 'checkListItem', 'quote']);

/** The fields each type may carry (besides `type` and `children`). */
function allowedFields(type: string): ReadonlySet<string> {
  if (type === 'codeBlock') return new Set(['code', 'language']);
  if (type === 'table') return new Set(['rows']);
  if (type === 'heading') return new Set(['markdown', 'level']);
  if (type === 'checkListItem') return new Set(['markdown', 'checked']);
  return new Set(['markdown']);
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
