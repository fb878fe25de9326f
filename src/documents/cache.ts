/**
 * The loaded-document cache: each document's tree at a known head, kept for the least recently used
 * {@link DocumentCache} size, caught up from the storage log when another process moved it on.
 * @module
 */
import { BlockTree } from '../blocks/tree.ts';
import type { Actor } from '../actor.ts';
import { notFound } from '../errors.ts';
import type { DocumentHead, Storage, StoredUpdate } from '../ports.ts';
import { visibleHead, visibleTo } from './access.ts';
import { keepVersion, recentVersions, type RecentVersions, type VersionContent } from './content.ts';
import type { DocumentView, FlatBlock, MarkdownLoss } from './types.ts';

/** A document held in memory: its head and its tree at `head.version`, with per-version caches. */
export interface Loaded {
  head: DocumentHead;
  tree: BlockTree;
  /**
   * When the version before `head.version` was committed (the `createdAt` of its receipt), when this
   * process saw it; else `head.updatedAt`, which is no earlier.
   */
  previousUpdatedAt: number;
  /** Updates (count and bytes) logged since the stored snapshot, and the snapshot's size. */
  logCount: number;
  logBytes: number;
  snapshotBytes: number;
  /** The canonical JSON and hash of `head.version`, lazily (null: not captured yet). */
  content: VersionContent | null;
  /** The contents of recent versions made here, for their hashes asked for later. */
  recent: RecentVersions;
  /** Representations of `head.version`, built on first read (null: not yet). */
  view: DocumentView | null;
  blocks: FlatBlock[] | null;
  markdown: { markdown: string; losses: MarkdownLoss[] } | null;
  createdIso?: string;
  href?: string;
  /** The Service-Revision of `head`, when computed for its version. */
  revision?: { version: number; text: string };
  /**
   * Appends other processes committed after `head`, told by the storage ({@link DocumentCache.offer})
   * and not applied yet: applied on the next use of the entry, when no mutation of this process has
   * its tree ahead of `head`. `head` is the last one's.
   */
  pending: { head: DocumentHead; updates: Uint8Array[]; bytes: number } | null;
}

/** At most this many appends wait in {@link Loaded.pending}; later ones are read from storage when needed. */
const MAX_PENDING = 256;
const MAX_PENDING_BYTES = 1024 * 1024;

/** A fresh cache entry for a tree at `head`. */
export function newLoaded(head: DocumentHead, tree: BlockTree, logCount: number, logBytes: number, snapshotBytes: number): Loaded {
  return { head, tree, previousUpdatedAt: head.updatedAt, logCount, logBytes, snapshotBytes, content: null, recent: recentVersions(), view: null, blocks: null, markdown: null, pending: null };
}

/** Move a cache entry to a later version (its representations are rebuilt on the next read). */
export function advance(loaded: Loaded, head: DocumentHead, updates: number, bytes: number, content: VersionContent | null = null): void {
  loaded.previousUpdatedAt = updates === 1 ? loaded.head.updatedAt : head.updatedAt;
  loaded.head = head;
  loaded.content?.release(); // a view of the old version still reads it, from the pieces
  loaded.content = content;
  if (content !== null) keepVersion(loaded.recent, head.version, content);
  loaded.view = loaded.blocks = loaded.markdown = null;
  loaded.logCount += updates;
  loaded.logBytes += bytes;
}

/** Loaded documents by ref, least recently used first. */
export class DocumentCache {
  private readonly entries = new Map<string, Loaded>();

  constructor(
    private readonly storage: Storage,
    private readonly size: number,
    /** True while a mutation of this process holds the document (its tree may be ahead of its head). */
    private readonly busy: (ref: string) => boolean = () => false,
  ) {}

  /**
   * Take an append another process committed (Storage.subscribeAppends): kept on the entry when it
   * follows what the entry holds (version + 1, same generation), applied on the entry's next use.
   * @remarks Costs nothing for a document this process does not hold, and a copy of the update for
   * one it holds; the tree work is done only if the document is used here again.
   */
  offer(head: DocumentHead, update: Uint8Array): void {
    const cached = this.entries.get(head.documentRef);
    if (cached === undefined) return;
    const pending = cached.pending;
    const at = pending?.head ?? cached.head;
    if (head.generation !== at.generation || head.version !== at.version + 1) return;
    if (pending === null) cached.pending = { head, updates: [update], bytes: update.byteLength };
    else if (pending.updates.length < MAX_PENDING && pending.bytes + update.byteLength <= MAX_PENDING_BYTES) {
      pending.head = head;
      pending.updates.push(update);
      pending.bytes += update.byteLength;
    }
  }

  /** The head of `loaded` with the appends waiting on it (see {@link offer}). */
  latestHead(loaded: Loaded): DocumentHead {
    return loaded.pending?.head ?? loaded.head;
  }

  /**
   * Apply the appends waiting on the entry of `ref`. The caller holds the document's lock, or
   * nobody does (a mutation's tree may be ahead of its head until its commit).
   * @returns false when they did not apply (the entry is dropped: storage is the truth).
   */
  settle(ref: string): boolean {
    const cached = this.entries.get(ref);
    const pending = cached?.pending;
    if (cached === undefined || pending === null || pending === undefined) return true;
    cached.pending = null;
    try {
      cached.tree.catchUp(pending.updates);
    } catch {
      this.drop(ref);
      return false;
    }
    advance(cached, pending.head, pending.updates.length, pending.bytes);
    return true;
  }

  /** The entry of `ref`, without touching its recency. */
  peek(ref: string): Loaded | undefined {
    return this.entries.get(ref);
  }

  /**
   * The ref of the most recently used entry (the last of `entries`), or null when not known: then
   * the next {@link DocumentCache.remember} moves its entry to the end, as for any other ref.
   */
  private newest: string | null = null;

  /** Keep `loaded` as the most recently used entry of `ref`. */
  remember(ref: string, loaded: Loaded): void {
    // Already the most recent entry (a burst of requests on one document): the order stays as it is.
    if (ref === this.newest && this.entries.get(ref) === loaded) return;
    this.entries.delete(ref);
    this.entries.set(ref, loaded);
    this.newest = ref;
    if (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Forget `ref` (its tree ran ahead of storage, or failed to compact): storage is the truth. */
  drop(ref: string): void {
    this.entries.delete(ref);
    if (ref === this.newest) this.newest = null;
  }

  /** The document as this process must see it now, or NOT_FOUND when absent or outside the boundary. */
  async load(actor: Actor, ref: string): Promise<Loaded> {
    const head = await visibleHead(this.storage, actor, ref);
    return this.cachedAt(ref, head) ?? this.loadAt(actor, ref, head);
  }

  /**
   * The cached document when it is at `head` (read from storage after the request arrived) or
   * beyond it (a later mutation or compaction of this process, committed since), else null.
   * @remarks A cached tree of an older history generation than `head` is never returned: another
   * process rebuilt the document, and updates made against either doc do not apply to the other.
   */
  cachedAt(ref: string, head: DocumentHead): Loaded | null {
    if (this.entries.get(ref)?.pending && !this.busy(ref)) this.settle(ref);
    const cached = this.entries.get(ref);
    if (cached === undefined || cached.head.version < head.version || cached.head.generation < head.generation) return null;
    this.remember(ref, cached);
    return cached;
  }

  /**
   * Bring the document to `head`: catch up the cached tree from the log when it is of the same
   * history generation, or load it whole.
   * @remarks A rebuild writes its snapshot at the stored version and drops the log up to it, so an
   * update of a newer generation is never logged right after a version this tree is at: a head of
   * the cached generation that is ahead of it is caught up with updates of that generation only.
   * `read`: updates read together with `head` (Storage.loadHeadAndUpdates), used when they reach
   * back to the cached version.
   */
  async loadAt(actor: Actor, ref: string, head: DocumentHead, read: StoredUpdate[] | null = null): Promise<Loaded> {
    if (this.entries.get(ref)?.pending && !this.busy(ref)) this.settle(ref);
    const cached = this.entries.get(ref);
    if (cached && cached.head.version < head.version && cached.head.generation === head.generation) {
      // The updates read with the head (when they reach back to the cached version), else read now.
      const from = read?.findIndex((u) => u.version === cached.head.version + 1) ?? -1;
      const updates = from >= 0 ? read!.slice(from) : await this.storage.loadUpdates(ref, cached.head.version);
      const current = this.entries.get(ref) === cached && cached.head.version < head.version && cached.head.generation === head.generation;
      if (updates && current && updates.length === head.version - cached.head.version) {
        cached.tree.catchUp(updates.map((u) => u.update));
        advance(cached, head, updates.length, updates.reduce((n, u) => n + u.update.byteLength, 0));
        return cached;
      }
    }
    const stored = await this.storage.loadDocument(ref);
    if (!stored || !visibleTo(actor, stored.head)) throw notFound('The document');
    const tree = BlockTree.load(stored.snapshot, stored.updates.map((u) => u.update));
    const logBytes = stored.updates.reduce((n, u) => n + u.update.byteLength, 0);
    const loaded = newLoaded(stored.head, tree, stored.updates.length, logBytes, stored.snapshot.byteLength);
    this.remember(ref, loaded);
    return loaded;
  }
}
