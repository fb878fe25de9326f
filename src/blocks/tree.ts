/**
 * The block tree of one document: a Y.Doc holding one plain record per block in a Y.Map keyed by
 * block id, plus an in-memory index (children order, parents) and per-block cached JSON fragments.
 * @module
 */
import * as Y from 'yjs';
import { renderOwnPrefixSized } from './blocknote.ts';
import type { BlockRecord } from './model.ts';
import { utf8Length } from '../text.ts';

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
  /** UTF-8 length of `prefix` (valid while it is not null). */
  prefixBytes: number;
  /** UTF-8 length of `fragment` (valid while it is not null). */
  fragmentBytes: number;
  /** The chunk of a top-level block (one shown at the root); null below the root. */
  chunk: Chunk | null;
}

/**
 * A run of consecutive top-level blocks whose fragments are joined and cached together.
 * @remarks The document text is the chunks' texts joined by ",": after a one-block edit only the
 * edited block's chunk is joined again (at most {@link CHUNK_MAX} fragments), not every top-level
 * fragment of the document.
 */
interface Chunk {
  ids: string[];
  /**
   * The chunk's piece of the document text: its blocks' fragments joined by ",", after the document
   * prefix (first chunk) or a "," and before the document suffix (last chunk); null when stale.
   */
  part: string | null;
  /** Which surroundings `part` has: PART_FIRST and/or PART_LAST bits. */
  partKind: number;
  /** UTF-8 length of `part`, -1 until measured. */
  bytes: number;
  /** UTF-8 bytes of `part`, once a reader asked for them (see {@link BlockTree.partBytes}); null when stale. */
  encoded: Uint8Array | null;
}

/** A chunk's part starts the document (the document prefix, else a "," separator). */
const PART_FIRST = 1;
/** A chunk's part ends the document (the document suffix). */
const PART_LAST = 2;

/** Chunks are split in halves above this many top-level blocks. */
const CHUNK_MAX = 128;
/** Top-level blocks per chunk when the index is built. */
const CHUNK_FILL = 64;

function newChunk(ids: string[]): Chunk {
  return { ids, part: null, partKind: 0, bytes: -1, encoded: null };
}

function staleChunk(chunk: Chunk): void {
  chunk.part = null;
  chunk.bytes = -1;
  chunk.encoded = null;
}

const utf8 = new TextEncoder();

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
  private chunks: Chunk[] = [];
  private docJson: string | null = null;
  private docParts: string[] | null = null;
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

  /**
   * How many Yjs structs the doc holds: one per live block entry plus one per tombstone each replaced
   * or deleted entry left behind (a few hundred bytes of heap each), so `structCount - size` is the
   * weight of the history. Counts the store's arrays, not the structs: O(clients).
   */
  get structCount(): number {
    let n = 0;
    for (const structs of this.doc.store.clients.values()) n += structs.length;
    return n;
  }

  /**
   * The same blocks (ids and records, so the same order, text and JSON) over a fresh Y.Doc without
   * history: one struct per block.
   * @remarks Updates of this tree's doc do not apply to the new one, nor the other way round: a
   * rebuilt tree starts a new history generation (see the storage head's `generation`).
   */
  rebuilt(): BlockTree {
    const doc = new Y.Doc({ gc: true });
    const map = doc.getMap<BlockRecord>(BLOCKS_KEY);
    doc.transact(() => {
      for (const [id, node] of this.nodes) map.set(id, node.rec);
    }, 'rebuild');
    return new BlockTree(doc);
  }

  private rebuildIndex(): void {
    this.nodes.clear();
    this.root.length = 0;
    this.docJson = this.docParts = null;
    this.map.forEach((rec, id) => {
      this.nodes.set(id, { rec, children: [], prefix: null, fragment: null, prefixBytes: 0, fragmentBytes: 0, chunk: null });
    });
    for (const [id, node] of this.nodes) {
      const parent = node.rec.p === null ? null : this.nodes.get(node.rec.p);
      if (parent) parent.children.push(id);
      else this.root.push(id); // an orphan (never produced by the engine) is shown at the root
    }
    const cmp = compareOrder(this.nodes);
    this.root.sort(cmp);
    for (const node of this.nodes.values()) if (node.children.length > 1) node.children.sort(cmp);
    this.chunks = [];
    for (let i = 0; i < this.root.length; i += CHUNK_FILL) {
      const chunk = newChunk(this.root.slice(i, i + CHUNK_FILL));
      for (const id of chunk.ids) this.nodes.get(id)!.chunk = chunk;
      this.chunks.push(chunk);
    }
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
    for (let i = 0; i < writes.length; i++) this.reindex(writes[i]!);
    this.docJson = this.docParts = null;
    return update;
  }

  /** Remove a block from its parent's children (or from the root and its chunk). */
  private detach(id: string, node: Node): void {
    const chunk = node.chunk;
    if (chunk !== null) {
      const at = this.root.indexOf(id);
      if (at >= 0) this.root.splice(at, 1);
      const inChunk = chunk.ids.indexOf(id);
      if (inChunk >= 0) chunk.ids.splice(inChunk, 1);
      if (chunk.ids.length === 0) this.chunks.splice(this.chunks.indexOf(chunk), 1);
      staleChunk(chunk);
      node.chunk = null;
      return;
    }
    const parentId = node.rec.p;
    const list = parentId === null ? undefined : this.nodes.get(parentId)?.children;
    if (!list) return;
    const at = list.indexOf(id);
    if (at >= 0) list.splice(at, 1);
    this.invalidate(parentId);
  }

  /** Insert a block among its parent's children (null: the root) by order key. */
  private attach(id: string, node: Node, parentId: string | null): void {
    const list = parentId === null ? this.root : this.nodes.get(parentId)!.children;
    const key = node.rec.o;
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
    if (parentId === null) this.chunkInsert(id, node, lo);
    else this.invalidate(parentId);
  }

  /** Put a block that now sits at `at` in the root into the chunk of its neighbour. */
  private chunkInsert(id: string, node: Node, at: number): void {
    let chunk: Chunk;
    if (at > 0) {
      chunk = this.nodes.get(this.root[at - 1]!)!.chunk!;
      chunk.ids.splice(chunk.ids.indexOf(this.root[at - 1]!) + 1, 0, id);
    } else if (this.root.length > 1) {
      chunk = this.nodes.get(this.root[1]!)!.chunk!;
      chunk.ids.unshift(id);
    } else {
      chunk = newChunk([id]);
      this.chunks.push(chunk);
    }
    node.chunk = chunk;
    staleChunk(chunk);
    if (chunk.ids.length > CHUNK_MAX) {
      const half = newChunk(chunk.ids.splice(chunk.ids.length >>> 1));
      for (const moved of half.ids) this.nodes.get(moved)!.chunk = half;
      this.chunks.splice(this.chunks.indexOf(chunk) + 1, 0, half);
    }
  }

  /**
   * The fragment of block `id` (null: nothing) changed: mark it stale, with its ancestors' and its
   * top-level chunk.
   * @remarks Stops at an ancestor that is stale already: its own ancestors and chunk are stale too
   * (a fragment is only ever built after its descendants', a chunk after its blocks').
   */
  private invalidate(id: string | null): void {
    let cur = id;
    while (cur !== null) {
      const node = this.nodes.get(cur);
      if (!node) return;
      const chunk = node.chunk;
      if (chunk !== null) {
        node.fragment = null;
        staleChunk(chunk);
        return;
      }
      const stale = node.fragment === null;
      node.fragment = null;
      if (stale && cur !== id) return;
      cur = node.rec.p;
    }
  }

  private reindex(w: BlockWrite): void {
    const existing = this.nodes.get(w.id);
    if (w.rec === null) {
      if (!existing) return;
      this.detach(w.id, existing);
      this.nodes.delete(w.id);
      return;
    }
    if (!existing) {
      // Plans list new parents before their children (pre-order), so the parent is indexed already.
      const node: Node = { rec: w.rec, children: [], prefix: null, fragment: null, prefixBytes: 0, fragmentBytes: 0, chunk: null };
      this.nodes.set(w.id, node);
      this.attach(w.id, node, w.rec.p !== null && this.nodes.has(w.rec.p) ? w.rec.p : null);
      return;
    }
    const moved = existing.rec.p !== w.rec.p || existing.rec.o !== w.rec.o;
    if (moved) {
      this.detach(w.id, existing);
      existing.rec = w.rec;
      existing.prefix = null;
      existing.fragment = null;
      this.attach(w.id, existing, w.rec.p !== null && this.nodes.has(w.rec.p) ? w.rec.p : null);
      return;
    }
    existing.rec = w.rec;
    existing.prefix = null;
    this.invalidate(w.id);
  }

  /** The compact JSON of one block's subtree, from cache where valid. */
  private fragment(id: string): string {
    const node = this.nodes.get(id)!;
    if (node.fragment !== null) return node.fragment;
    if (node.prefix === null) {
      // Measured as it is built: scanning the text would flatten it (see below).
      const own = renderOwnPrefixSized(id, node.rec);
      node.prefix = own.text;
      node.prefixBytes = own.bytes;
    }
    let out = node.prefix;
    const kids = node.children;
    // Bytes are summed as the pieces are joined: the joined text is never scanned to measure it.
    let bytes = node.prefixBytes + DOC_SUFFIX.length + (kids.length > 1 ? kids.length - 1 : 0);
    for (let i = 0; i < kids.length; i++) {
      out += (i ? ',' : '') + this.fragment(kids[i]!);
      bytes += this.nodes.get(kids[i]!)!.fragmentBytes;
    }
    out += DOC_SUFFIX;
    node.fragmentBytes = bytes;
    // Left a rope: V8 flattens it in place when first read whole (a hash, a write), if ever.
    node.fragment = out;
    return node.fragment;
  }

  /** The chunk's piece of the document text (see {@link Chunk.part}), joined again when stale. */
  private chunkPart(chunk: Chunk, kind: number): string {
    if (chunk.part !== null && chunk.partKind === kind) return chunk.part;
    const ids = chunk.ids;
    let text = kind & PART_FIRST ? DOC_PREFIX : ',';
    let bytes = text.length + (ids.length > 1 ? ids.length - 1 : 0) + (kind & PART_LAST ? DOC_SUFFIX.length : 0);
    for (let i = 0; i < ids.length; i++) {
      text += i === 0 ? this.fragment(ids[i]!) : `,${this.fragment(ids[i]!)}`;
      bytes += this.nodes.get(ids[i]!)!.fragmentBytes;
    }
    if (kind & PART_LAST) text += DOC_SUFFIX;
    // Left a rope until read (see fragment): a version nobody reads is never flattened.
    chunk.part = text;
    chunk.encoded = null;
    chunk.partKind = kind;
    chunk.bytes = bytes;
    return chunk.part;
  }

  /**
   * The canonical rich-json `document` text as consecutive flat pieces: their concatenation is
   * {@link BlockTree.json}. Hash these (SHA-256 takes them one by one) rather than the whole text.
   * @remarks One piece per chunk of up to {@link CHUNK_MAX} top-level blocks (with the separator or
   * the document's prefix and suffix around it), each cached: after a one-block edit only one chunk
   * is joined again. A document of one chunk is one piece. Do not mutate the array.
   */
  jsonParts(): readonly string[] {
    if (this.docParts !== null) return this.docParts;
    const chunks = this.chunks;
    if (chunks.length === 0) {
      this.docParts = [DOC_PREFIX + DOC_SUFFIX];
      return this.docParts;
    }
    const last = chunks.length - 1;
    const parts = new Array<string>(chunks.length);
    for (let i = 0; i <= last; i++) {
      const chunk = chunks[i]!;
      parts[i] = this.chunkPart(chunk, (i === 0 ? PART_FIRST : 0) | (i === last ? PART_LAST : 0));
    }
    this.docParts = parts;
    return parts;
  }

  /**
   * The UTF-8 bytes of each of `parts` (what {@link BlockTree.jsonParts} returned for some version).
   * @remarks A part that is still the current text of its chunk is encoded once and kept with the
   * chunk until the chunk changes, so after a one-block edit only the edited block's chunk is encoded
   * again; a part of an older version that the tree has moved past is encoded on each call.
   */
  partBytes(parts: readonly string[]): Uint8Array[] {
    const out = new Array<Uint8Array>(parts.length);
    const chunks = this.chunks;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const chunk = chunks[i];
      out[i] = chunk !== undefined && chunk.part === part ? (chunk.encoded ??= utf8.encode(part)) : utf8.encode(part);
    }
    return out;
  }

  /**
   * The canonical rich-json `document` text: `{"type":"blocks","blocks":[...]}`.
   * @remarks Built from cached fragments and chunks, so after a one-block edit only that block, its
   * ancestors and its chunk are rendered again; concatenating the chunks is the only work that grows
   * with size, and it copies nothing (the text stays a rope until a reader needs it flat).
   */
  json(): string {
    if (this.docJson !== null) return this.docJson;
    const parts = this.jsonParts();
    let out = parts[0]!;
    for (let i = 1; i < parts.length; i++) out += parts[i]!;
    this.docJson = out;
    return out;
  }

  /** Length (UTF-16 units) of {@link BlockTree.json}, from its cached pieces. */
  jsonLength(): number {
    const parts = this.jsonParts();
    let length = 0;
    for (let i = 0; i < parts.length; i++) length += parts[i]!.length;
    return length;
  }

  /** UTF-8 length of {@link BlockTree.json}, from per-chunk counts (only stale chunks are measured). */
  jsonByteLength(): number {
    const parts = this.jsonParts();
    if (this.chunks.length === 0) return parts[0]!.length;
    let bytes = 0;
    for (const chunk of this.chunks) {
      if (chunk.bytes < 0) chunk.bytes = utf8Length(chunk.part!);
      bytes += chunk.bytes;
    }
    return bytes;
  }
}
