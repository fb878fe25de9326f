/**
 * Hashes of document versions asked for after the document moved on (a receipt replayed, a list
 * item): from the contents a loaded document keeps of its recent versions, else rebuilt from storage
 * (the live snapshot and log, or a stretch a compaction folded, see {@link FoldedHistory}).
 * @module
 */
import { BlockTree } from '../blocks/tree.ts';
import { conflict } from '../errors.ts';
import type { Storage } from '../ports.ts';
import { RECENT_VERSIONS, VersionContent } from './content.ts';
import type { DocumentCache } from './cache.ts';
import type { FoldedHistory } from './history.ts';
import type { Sha256Hex } from '../hash.ts';

/** Hashes derived from storage that are remembered, so that a retried replay does not rebuild again. */
const DERIVED_KEPT = 256;

/** Derives the hash of any version of a document that a receipt may still ask for, see {@link VersionRegistry.hashOf}. */
export class VersionRegistry {
  /** Hashes rebuilt from storage, by `documentRef` and version, oldest first. */
  private readonly derived = new Map<string, string>();

  constructor(
    private readonly storage: Storage,
    private readonly cache: DocumentCache,
    private readonly history: FoldedHistory,
    private readonly sha256: Sha256Hex,
  ) {}

  /**
   * The SHA-256 of the document's canonical JSON at `version`: the stored value when known, else from
   * the version's kept content, a hash derived before, or the tree rebuilt from storage (the snapshot
   * plus the logged updates up to `version`, or the folded stretch that holds it).
   * @remarks Throws CONFLICT when the version is none of these: its receipts expired, so that its
   * stretch was swept, before anyone read its hash.
   */
  async hashOf(documentRef: string, version: number, stored: string | null): Promise<string> {
    if (stored) return stored;
    const loaded = this.cache.peek(documentRef);
    if (loaded) {
      const slot = version & (RECENT_VERSIONS - 1);
      const kept = loaded.recent.contents[slot];
      if (kept && loaded.recent.versions[slot] === version) return kept.sha256;
    }
    const key = `${documentRef}\u0000${version}`;
    const known = this.derived.get(key);
    if (known !== undefined) return known;
    const hash = await this.rebuild(documentRef, version);
    this.derived.set(key, hash);
    if (this.derived.size > DERIVED_KEPT) this.derived.delete(this.derived.keys().next().value!);
    return hash;
  }

  private async rebuild(documentRef: string, version: number): Promise<string> {
    const doc = await this.storage.loadDocument(documentRef);
    if (doc && doc.head.snapshotVersion <= version && version <= doc.head.version) {
      const updates = doc.updates.filter((u) => u.version <= version).map((u) => u.update);
      return this.hash(BlockTree.load(doc.snapshot, updates));
    }
    const stretch = doc && version < doc.head.snapshotVersion ? await this.history.find(documentRef, version) : null;
    if (stretch) return this.hash(BlockTree.load(stretch.snapshot, stretch.updates.slice(0, version - stretch.from)));
    throw conflict(`Version ${version} of ${documentRef} can no longer be rebuilt to derive its content hash; read the document again.`);
  }

  private hash(tree: BlockTree): string {
    return new VersionContent(tree.jsonParts(), this.sha256).sha256;
  }
}
