/**
 * The contents of recent document versions whose hash may still be asked for (a receipt replayed, a
 * list item), so that it is computed from the version's own pieces instead of rebuilt from storage.
 * @module
 */
import { BlockTree } from '../blocks/tree.ts';
import { conflict } from '../errors.ts';
import type { Storage } from '../ports.ts';
import { VersionContent } from './content.ts';
import type { DocumentCache } from './cache.ts';
import type { Sha256Hex } from '../hash.ts';

/** Versions kept by default: about one chunk of document text each until resolved. */
const DEFAULT_KEPT = 1024;

/** Recent versions' contents by document and version, oldest dropped first. */
export class VersionRegistry {
  private readonly entries = new Map<string, VersionContent>();

  constructor(
    private readonly storage: Storage,
    private readonly cache: DocumentCache,
    private readonly sha256: Sha256Hex,
    private readonly kept = DEFAULT_KEPT,
  ) {}

  /** Keep the content of `documentRef` at `version`. */
  set(documentRef: string, version: number, content: VersionContent): void {
    this.entries.set(`${documentRef}@${version}`, content);
    if (this.entries.size > this.kept) this.entries.delete(this.entries.keys().next().value!);
  }

  /**
   * The SHA-256 of the document's canonical JSON at `version`: the stored value when known, else from
   * the version's kept content, the cached tree at that version, or the tree rebuilt from storage
   * (snapshot plus the logged updates up to `version`).
   * @remarks Throws CONFLICT when the version is neither kept nor rebuildable (its log was compacted
   * away by another process before anyone read its hash).
   */
  async hashOf(documentRef: string, version: number, stored: string | null): Promise<string> {
    if (stored) return stored;
    const kept = this.entries.get(`${documentRef}@${version}`);
    if (kept) return kept.sha256;
    const loaded = this.cache.peek(documentRef);
    if (loaded && loaded.head.version === version) return (loaded.content ??= new VersionContent(loaded.tree.jsonParts(), this.sha256)).sha256;
    const doc = await this.storage.loadDocument(documentRef);
    if (doc && doc.head.snapshotVersion <= version && version <= doc.head.version) {
      const updates = doc.updates.filter((u) => u.version <= version).map((u) => u.update);
      const content = new VersionContent(BlockTree.load(doc.snapshot, updates).jsonParts(), this.sha256);
      this.set(documentRef, version, content);
      return content.sha256;
    }
    throw conflict(`Version ${version} of ${documentRef} can no longer be rebuilt to derive its content hash; read the document again.`);
  }
}
