/**
 * The block tree of one document: a Y.Doc holding one plain record per block in a Y.Map keyed by
 * block id, plus an in-memory index (children order, parents) and per-block cached JSON fragments.
 * @module
 */
import * as Y from 'yjs';
import { renderOwnPrefix } from './blocknote.ts';
import type { BlockRecord } from './model.ts';

const BLOCKS_KEY = 'blocks';
const DOC_PREFIX = '{"type":"blocks","blocks":[';
const DOC_SUFFIX = ']}';

interface Node {
  rec: BlockRecord;
  children: string[];
  /** Cached JSON up to and including `"children":[`; null when stale. */
  prefix: string | null;
  /** Cached JSON of the whole subtree; null when stale. */
  fragment: string | null;
}

/** A write planned by a mutation: a record to set, or null to delete the block. */
export interface BlockWrite {
  id: string;
  rec: BlockRecord | null;
}

/** One entry of a document-order walk. */
export interface WalkEntry {
  id: string;
  rec: BlockRecord;
  depth: number;
  parentId: string | null;
  parentType: string | null;
  indexInParent: number;
}

const compareOrder = (nodes: Map<string, Node>) => (a: string, b: string) => {
  const ka = nodes.get(a)!.rec.o;
  const kb = nodes.get(b)!.rec.o;
  if (ka < kb) return -1;
  if (ka > kb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
};

/**
 * The tree over a Y.Doc.
 * @remarks Invariants: every block's parent exists (or is the root); each block is listed exactly once
 * in its parent's children, ordered by its order key; a cached fragment is valid for its subtree.
 * Writes go only through {@link BlockTree.apply}, which runs one `transact` and returns its update.
 */
export class BlockTree {
  readonly doc: Y.Doc;
  private readonly map: Y.Map<BlockRecord>;
  private readonly nodes = new Map<string, Node>();
  private readonly root: string[] = [];
  private docJson: string | null = null;
  private lastUpdate: Uint8Array | null = null;

  private constructor(doc: Y.Doc) {
    this.doc = doc;
    this.map = doc.getMap<BlockRecord>(BLOCKS_KEY);
    this.rebuildIndex();
    // One listener for the tree's life: registering one per apply costs more than the edit.
    doc.on('update', (update: Uint8Array) => {
      this.lastUpdate = update;
    });
  }

  /** An empty tree. */
  static empty(): BlockTree {
    return new BlockTree(new Y.Doc({ gc: true }));
  }

  /** A tree from a snapshot and the updates logged after it. */
  static load(snapshot: Uint8Array, updates: Iterable<Uint8Array>): BlockTree {
    const doc = new Y.Doc({ gc: true });
    Y.applyUpdate(doc, snapshot);
    for (const u of updates) Y.applyUpdate(doc, u);
    return new BlockTree(doc);
  }

  /** Apply updates logged by another process after this tree's state (catch-up), then reindex. */
  catchUp(updates: Iterable<Uint8Array>): void {
    for (const u of updates) Y.applyUpdate(this.doc, u);
    this.rebuildIndex();
  }

  /** The full Yjs state, for a compaction snapshot. */
  snapshot(): Uint8Array {
    return Y.encodeStateAsUpdate(this.doc);
  }

  private rebuildIndex(): void {
    this.nodes.clear();
    this.root.length = 0;
    this.docJson = null;
    this.map.forEach((rec, id) => {
      this.nodes.set(id, { rec, children: [], prefix: null, fragment: null });
    });
    for (const [id, node] of this.nodes) {
      const parent = node.rec.p === null ? null : this.nodes.get(node.rec.p);
      if (parent) parent.children.push(id);
      else this.root.push(id); // an orphan (never produced by the engine) is shown at the root
    }
    const cmp = compareOrder(this.nodes);
    this.root.sort(cmp);
    for (const node of this.nodes.values()) if (node.children.length > 1) node.children.sort(cmp);
  }

  /** Number of blocks. */
  get size(): number {
    return this.nodes.size;
  }

  has(id: string): boolean {
    return this.nodes.has(id);
  }

  /** A block's record, or undefined. Do not mutate it. */
  get(id: string): BlockRecord | undefined {
    return this.nodes.get(id)?.rec;
  }

  /** Children ids of a block (null: the root), in order. Do not mutate the array. */
  children(parentId: string | null): readonly string[] {
    if (parentId === null) return this.root;
    return this.nodes.get(parentId)?.children ?? [];
  }

  /** True when `id` is `ancestorId` or lies below it. */
  isWithin(id: string, ancestorId: string): boolean {
    let cur: string | null = id;
    while (cur !== null) {
      if (cur === ancestorId) return true;
      cur = this.nodes.get(cur)?.rec.p ?? null;
    }
    return false;
  }

  /** Ids of a block's subtree (itself first), in document order. */
  subtree(id: string, out: string[] = []): string[] {
    out.push(id);
    for (const c of this.nodes.get(id)?.children ?? []) this.subtree(c, out);
    return out;
  }

  /** Walk every block in document order (pre-order). */
  *walk(): Generator<WalkEntry> {
    const stack: { ids: readonly string[]; i: number; depth: number; parentId: string | null }[] = [
      { ids: this.root, i: 0, depth: 0, parentId: null },
    ];
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      if (top.i >= top.ids.length) {
        stack.pop();
        continue;
      }
      const index = top.i++;
      const id = top.ids[index]!;
      const node = this.nodes.get(id)!;
      yield {
        id,
        rec: node.rec,
        depth: top.depth,
        parentId: top.parentId,
        parentType: top.parentId === null ? null : this.nodes.get(top.parentId)!.rec.t,
        indexInParent: index,
      };
      if (node.children.length) stack.push({ ids: node.children, i: 0, depth: top.depth + 1, parentId: id });
    }
  }

  /**
   * Apply planned writes in one Yjs transaction and return its update (null when nothing changed).
   * @remarks The caller has validated the plan against this exact state; apply never fails half-way.
   */
  apply(writes: BlockWrite[], origin: string): Uint8Array | null {
    this.lastUpdate = null;
    this.doc.transact(() => {
      for (const w of writes) {
        if (w.rec === null) this.map.delete(w.id);
        else this.map.set(w.id, w.rec);
      }
    }, origin);
    const update = this.lastUpdate;
    for (const w of writes) this.reindex(w);
    this.docJson = null;
    return update;
  }

  private detach(id: string, parentId: string | null): void {
    const list = parentId === null ? this.root : this.nodes.get(parentId)?.children;
    if (!list) return;
    const at = list.indexOf(id);
    if (at >= 0) list.splice(at, 1);
    this.invalidateFrom(parentId);
  }

  private attach(id: string, parentId: string | null, key: string): void {
    const list = parentId === null ? this.root : this.nodes.get(parentId)!.children;
    // Binary search by order key: siblings are sorted.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const other = this.nodes.get(list[mid]!)!.rec.o;
      if (other < key || (other === key && list[mid]! < id)) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, id);
    this.invalidateFrom(parentId);
  }

  private invalidateFrom(id: string | null): void {
    let cur = id;
    while (cur !== null) {
      const node = this.nodes.get(cur);
      if (!node || node.fragment === null) break; // ancestors of a stale fragment are stale already
      node.fragment = null;
      cur = node.rec.p;
    }
  }

  private reindex(w: BlockWrite): void {
    const existing = this.nodes.get(w.id);
    if (w.rec === null) {
      if (!existing) return;
      this.detach(w.id, existing.rec.p);
      this.nodes.delete(w.id);
      return;
    }
    if (!existing) {
      // Plans list new parents before their children (pre-order), so the parent is indexed already.
      this.nodes.set(w.id, { rec: w.rec, children: [], prefix: null, fragment: null });
      this.attach(w.id, w.rec.p !== null && this.nodes.has(w.rec.p) ? w.rec.p : null, w.rec.o);
      return;
    }
    const moved = existing.rec.p !== w.rec.p || existing.rec.o !== w.rec.o;
    if (moved) this.detach(w.id, existing.rec.p);
    existing.rec = w.rec;
    existing.prefix = null;
    existing.fragment = null;
    if (moved) this.attach(w.id, w.rec.p, w.rec.o);
    else this.invalidateFrom(w.rec.p);
  }

  /** The compact JSON of one block's subtree, from cache where valid. */
  private fragment(id: string): string {
    const node = this.nodes.get(id)!;
    if (node.fragment !== null) return node.fragment;
    node.prefix ??= renderOwnPrefix(id, node.rec);
    let out = node.prefix;
    const kids = node.children;
    for (let i = 0; i < kids.length; i++) out += (i ? ',' : '') + this.fragment(kids[i]!);
    node.fragment = out + DOC_SUFFIX;
    return node.fragment;
  }

  /**
   * The canonical rich-json `document` text: `{"type":"blocks","blocks":[...]}`.
   * @remarks Built from cached fragments, so after a one-block edit only that block and its ancestors
   * are re-rendered; the join over top-level fragments is the only work that grows with size.
   */
  json(): string {
    if (this.docJson !== null) return this.docJson;
    const parts = new Array<string>(this.root.length);
    for (let i = 0; i < this.root.length; i++) parts[i] = this.fragment(this.root[i]!);
    this.docJson = DOC_PREFIX + parts.join(',') + DOC_SUFFIX;
    return this.docJson;
  }
}
