/**
 * Block-tree helpers of the API scenario suite: walk the rich-json `document` value
 * (`{type:"blocks", blocks:[{id, type, props, content, children}]}`, decisions.md) as a client would.
 * @module
 */

/* eslint-disable @typescript-eslint/no-explicit-any */

/** One block of the rich-json document. */
export interface RichBlock {
  id: string;
  type: string;
  props: Record<string, any>;
  content: any;
  children: RichBlock[];
}

/** Every block in document order (pre-order), with its parent id (null: the root). */
export function flatten(blocks: RichBlock[], parent: string | null = null, out: { id: string; parent: string | null; block: RichBlock }[] = []) {
  for (const b of blocks) {
    out.push({ id: b.id, parent, block: b });
    flatten(b.children ?? [], b.id, out);
  }
  return out;
}

/** Ids of the blocks in document order. */
export const ids = (blocks: RichBlock[]): string[] => flatten(blocks).map((x) => x.id);

export function find(blocks: RichBlock[], id: string): RichBlock | undefined {
  return flatten(blocks).find((x) => x.id === id)?.block;
}

export function parentOf(blocks: RichBlock[], id: string): string | null | undefined {
  const hit = flatten(blocks).find((x) => x.id === id);
  return hit === undefined ? undefined : hit.parent;
}

/** Child ids of `parent` (null: the root). */
export function childIds(blocks: RichBlock[], parent: string | null): string[] {
  if (parent === null) return blocks.map((b) => b.id);
  return (find(blocks, parent)?.children ?? []).map((b) => b.id);
}

/** The blocks just before and just after a contiguous run of children of `parent` (those that exist). */
export function around(blocks: RichBlock[], parent: string | null, run: string[]): string[] {
  const siblings = childIds(blocks, parent);
  const first = siblings.indexOf(run[0]!);
  const last = siblings.indexOf(run[run.length - 1]!);
  const out: string[] = [];
  if (first > 0) out.push(siblings[first - 1]!);
  if (last >= 0 && last + 1 < siblings.length) out.push(siblings[last + 1]!);
  return out;
}

/** Concatenated plain text of a block's inline content (text and link items). */
export function textOf(content: any): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((item: any) => (item?.type === 'text' ? String(item.text) : item?.type === 'link' ? textOf(item.content) : ''))
    .join('');
}
