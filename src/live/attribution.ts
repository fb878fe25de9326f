/**
 * One person's share of a room's pending edits: the document as the last API version holds it, with
 * only the blocks this person changed taken from the editor. Committing it makes a version of that
 * person's edits alone while others' stay pending for their own versions.
 * @module
 */
import type { EditorBlock } from '../blocks/editor-fragment.ts';

/** A block put inside itself by the mix of two people's moves. */
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
  // The base tree and the editor's, each as parent and children by id (null: the root).
  const baseBlock = new Map<string, EditorBlock>();
  const baseParent = new Map<string, string | null>();
  const baseKids = new Map<string | null, string[]>();
  const nowBlock = new Map<string, EditorBlock>();
  const nowParent = new Map<string, string | null>();
  const nowKids = new Map<string | null, string[]>();
  const load = (list: readonly EditorBlock[], parent: string | null, block: Map<string, EditorBlock>, parents: Map<string, string | null>, kids: Map<string | null, string[]>) => {
    kids.set(parent, list.map((b) => b.id));
    for (const b of list) {
      block.set(b.id, b);
      parents.set(b.id, parent);
      load(b.children, b.id, block, parents, kids);
    }
  };
  load(base, null, baseBlock, baseParent, baseKids);
  load(current, null, nowBlock, nowParent, nowKids);

  // The blocks taken from the editor: the touched ones, and new ancestors they sit in.
  const take = new Set<string>();
  for (const id of touched) {
    if (!nowBlock.has(id)) continue;
    take.add(id);
    for (let p = nowParent.get(id)!; p !== null && !baseBlock.has(p) && !take.has(p); p = nowParent.get(p)!) take.add(p);
  }
  /** A block's parent in the mix: the editor's for a taken block, the base's for the others. */
  const parentOf = (id: string) => (take.has(id) ? nowParent.get(id)! : (baseParent.get(id) ?? null));
  for (const id of take) {
    let steps = 0;
    for (let p = parentOf(id); p !== null; p = parentOf(p)) if (p === id || ++steps > baseBlock.size + take.size) throw new Cycle();
  }

  /**
   * The children of `parent` in the mix: its base children that stay (in base order), each taken
   * block right after the nearest preceding sibling (in the editor) that the mix has there.
   */
  const after = (parent: string | null): string[] => {
    const anchored = new Map<string | null, string[]>();
    let last: string | null = null;
    for (const id of nowKids.get(parent) ?? []) {
      if (take.has(id)) {
        const list = anchored.get(last) ?? [];
        list.push(id);
        anchored.set(last, list);
        last = id;
      } else if (baseParent.get(id) === parent && baseBlock.has(id)) last = id;
    }
    // Each id, then what is anchored after it, depth first (a stack: a run of taken blocks chains).
    const out: string[] = [];
    const emit = (first: string) => {
      const stack = [first];
      while (stack.length > 0) {
        const id = stack.pop()!;
        out.push(id);
        const next = anchored.get(id);
        if (next !== undefined) for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]!);
      }
    };
    for (const id of anchored.get(null) ?? []) emit(id);
    for (const id of baseKids.get(parent) ?? []) if (!take.has(id)) emit(id);
    return out;
  };

  // This person's deletions: a block of the base under (or at) one they deleted, gone from the editor.
  const deletedByThem = (id: string) => {
    if (nowBlock.has(id)) return false;
    for (let p: string | null | undefined = id; p !== null && p !== undefined; p = baseParent.get(p)) if (deleted.has(p)) return true;
    return false;
  };
  /** A block of the mix with its subtree; a deleted one gives way to its descendants the editor still holds. */
  const build = (id: string): EditorBlock[] => {
    const children = after(id).flatMap(build);
    if (deletedByThem(id)) return children;
    return [{ ...(take.has(id) ? nowBlock.get(id)! : baseBlock.get(id)!), children }];
  };
  return after(null).flatMap(build);
}
