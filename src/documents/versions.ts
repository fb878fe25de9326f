/**
 * Hashes of document versions asked for after the document moved on (a receipt replayed, a list
 * item): from the contents a loaded document keeps of its recent versions, else rebuilt from storage.
 * @module
 */
import { BlockTree } from '../blocks/tree.ts';
import { conflict } from '../errors.ts';
import type { Storage } from '../ports.ts';
import { RECENT_VERSIONS, VersionContent } from './content.ts';
import type { DocumentCache } from './cache.ts';
import type { Sha256Hex } from '../hash.ts';

/** Derives the hash of any stored version of a document, see {@link VersionRegistry.hashOf}. */
export class VersionRegistry {
  constructor(
    private readonly storage: Storage,
    private readonly cache: DocumentCache,
    private readonly sha256: Sha256Hex,
  ) {}

  /**
   * The SHA-256 of the document's canonical JSON at `version`: the stored value when known, else from
   * the version's kept content, the cached tree at that version, or the tree rebuilt from storage
   * (snapshot plus the logged updates up to `version`).
   * @remarks Throws CONFLICT when the version is neither kept nor rebuildable (its log was compacted
   * away by another process before anyone read its hash).
   */
  async hashOf(documentRef: string, version: number, stored: string | null): Promise<string> {
    if (stored) return stored;
    const loaded = this.cache.peek(documentRef);
    if (loaded) {
      const slot = version & (RECENT_VERSIONS - 1);
      const kept = loaded.recent.contents[slot];
      if (kept && loaded.recent.versions[slot] === version) return kept.sha256;
    }
    const doc = await this.storage.loadDocument(documentRef);
    if (doc && doc.head.snapshotVersion <= version && version <= doc.head.version) {
      const updates = doc.updates.filter((u) => u.version <= version).map((u) => u.update);
      return new VersionContent(BlockTree.load(doc.snapshot, updates).jsonParts(), this.sha256).sha256;
    }
    throw conflict(`Version ${version} of ${documentRef} can no longer be rebuilt to derive its content hash; read the document again.`);
  }
}
