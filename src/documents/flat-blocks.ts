/**
 * The `blocks` representation of a document.
 * @module
 */
import { parseInline } from '../blocks/inline-markdown.ts';
import { codeBlockMarkdown, tableMarkdown } from '../blocks/markdown-projection.ts';
import type { BlockType } from '../blocks/model.ts';
import type { BlockTree } from '../blocks/tree.ts';
import type { FlatBlock } from './types.ts';

/**
 * The `blocks` representation: every block in document order with parent, index, own fields and own
 * Markdown (inline Markdown for text blocks, the fenced block of a code block, the pipe table of a table).
 */
export function flatBlocks(tree: BlockTree): FlatBlock[] {
  const out: FlatBlock[] = [];
  for (const e of tree.walk()) {
    const r = e.rec;
    const block: FlatBlock = { id: e.id, parentBlockId: e.parentId, index: e.indexInParent, depth: e.depth, type: r.t as BlockType, markdown: '', citations: [] };
    if (r.md !== undefined) {
      block.markdown = r.md;
      const parsed = parseInline(r.md);
      if (parsed.ok) block.citations = [...parsed.citations];
    }
    if (r.lv !== undefined) block.level = r.lv;
    if (r.ck !== undefined) block.checked = r.ck;
    if (r.code !== undefined) block.code = r.code;
    if (r.lang !== undefined) block.language = r.lang;
    if (r.t === 'codeBlock') block.markdown = codeBlockMarkdown(r.code ?? '', r.lang ?? '');
    if (r.rows !== undefined) {
      block.rows = r.rows;
      block.markdown = tableMarkdown(r.rows);
      const cited = new Set<string>();
      for (const row of r.rows) for (const cell of row) {
        const parsed = parseInline(cell);
        if (parsed.ok) for (const c of parsed.citations) cited.add(c);
      }
      block.citations = [...cited];
    }
    out.push(block);
  }
  return out;
}
