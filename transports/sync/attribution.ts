/**
 * One person's share of a room's pending edits: the document as the last API version holds it, with
 * only the blocks this person changed taken from the editor. Committing it makes a version of that
 * person's edits alone while others' stay pending for their own versions.
 * @module
 */
import type { EditorBlock } from '../../src/blocks/editor-fragment.ts';

interface Node {
  /** The block's own fields (its `children` are ignored: see {@link Node.children}). */
  block: EditorBlock;
  parent: string | null;
  children: string[];
}

interface Placed {
  block: EditorBlock;
  parent: string | null;
  siblings: readonly EditorBlock[];
  index: number;
}

/** A block placed under a parent that lies inside it: the mix of two people's moves has a cycle. */
class Cycle extends Error {}

/**
 * The blocks of `base` (the API version the editors last took) with one person's edits of
 * `current` (the editor's blocks now) brought in: every block in `touched` takes its content and
 * place from `current` (a new block's new ancestors come along, so it has somewhere to be), every
 * block of `base` under a block in `deleted` that `current` no longer holds is gone. Blocks others
 * changed keep their `base` content and place.
 * @remarks Where the two people's moves would put a block inside itself, `current` is answered
 * whole (the version then carries the other person's moves too).
 */
export function ownBlocks(base: readonly EditorBlock[], current: readonly EditorBlock[], touched: ReadonlySet<string>, deleted: ReadonlySet<string>): EditorBlock[] {
  try {
    return mix(base, current, touched, deleted);
  } catch (error) {
    if (error instanceof Cycle) return [...current];
    throw error;
  }
}

function mix(base: readonly EditorBlock[], current: readonly EditorBlock[], touched: ReadonlySet<string>, deleted: ReadonlySet<string>): EditorBlock[] {
  const nodes = new Map<string, Node>();
  const roots: string[] = [];
  const kids = (parent: string | null) => (parent === null ? roots : nodes.get(parent)!.children);
  const baseParent = new Map<string, string | null>();
  const load = (list: readonly EditorBlock[], parent: string | null) => {
    for (const b of list) {
      nodes.set(b.id, { block: b, parent, children: [] });
      baseParent.set(b.id, parent);
      kids(parent).push(b.id);
      load(b.children, b.id);
    }
  };
  load(base, null);

  const now = new Map<string, Placed>();
  const order: string[] = [];
  const index = (list: readonly EditorBlock[], parent: string | null) => {
    list.forEach((block, i) => {
      now.set(block.id, { block, parent, siblings: list, index: i });
      order.push(block.id);
      index(block.children, block.id);
    });
  };
  index(current, null);

  // The blocks taken from the editor: the touched ones, and new ancestors they sit in.
  const take = new Set<string>();
  for (const id of touched) {
    if (!now.has(id)) continue;
    take.add(id);
    for (let p = now.get(id)!.parent; p !== null && !nodes.has(p) && !take.has(p); p = now.get(p)!.parent) take.add(p);
  }
  const detach = (id: string) => {
    const node = nodes.get(id);
    if (node === undefined) return;
    const list = kids(node.parent);
    const at = list.indexOf(id);
    if (at >= 0) list.splice(at, 1);
  };
  const inside = (parent: string | null, id: string) => {
    for (let p = parent; p !== null; p = nodes.get(p)?.parent ?? null) if (p === id) return true;
    return false;
  };
  for (const id of order) {
    if (!take.has(id)) continue;
    const { block, parent, siblings, index: i } = now.get(id)!;
    if (inside(parent, id)) throw new Cycle();
    detach(id);
    const node = nodes.get(id) ?? { block, parent, children: [] };
    node.block = block;
    node.parent = parent;
    nodes.set(id, node);
    const list = kids(parent);
    let at = 0;
    for (let k = i - 1; k >= 0; k--) {
      const pos = list.indexOf(siblings[k]!.id);
      if (pos >= 0) {
        at = pos + 1;
        break;
      }
    }
    list.splice(at, 0, id);
  }

  // This person's deletions: a block of the base under (or at) one they deleted, gone from the editor.
  const deletedByThem = (id: string) => {
    for (let p: string | null | undefined = id; p !== null && p !== undefined; p = baseParent.get(p)) if (deleted.has(p)) return true;
    return false;
  };
  /** The node's descendants the editor still holds (lifted into its place when it goes); the rest go with it. */
  const survivors = (id: string): string[] => {
    const out: string[] = [];
    for (const c of nodes.get(id)!.children) {
      if (now.has(c)) out.push(c);
      else {
        out.push(...survivors(c));
        nodes.delete(c);
      }
    }
    return out;
  };
  for (const id of [...baseParent.keys()]) {
    if (now.has(id) || !nodes.has(id) || !deletedByThem(id)) continue;
    const node = nodes.get(id)!;
    const list = kids(node.parent);
    const lifted = survivors(id);
    for (const c of lifted) nodes.get(c)!.parent = node.parent;
    list.splice(list.indexOf(id), 1, ...lifted);
    nodes.delete(id);
  }

  const build = (id: string): EditorBlock => {
    const node = nodes.get(id)!;
    return { ...node.block, children: node.children.map(build) };
  };
  return roots.map(build);
}
