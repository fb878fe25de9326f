/**
 * The content of one document version, built lazily: the canonical JSON text and its SHA-256 are
 * computed when first read, at most once, never on the path of a caller that only needs the version.
 * @module
 */
import type { Sha256Hex } from '../hash.ts';

/**
 * One version's canonical rich-json `document` text and hash.
 * @remarks Holds the tree's cached JSON pieces of that version (strings shared with neighbouring
 * versions: an edit re-joins one chunk, so a version costs about one chunk of text until resolved).
 * The first read of {@link VersionContent.json} joins them; the first read of
 * {@link VersionContent.sha256} hashes them piece by piece; after both, only the results are kept.
 */
export class VersionContent {
  private parts: readonly string[] | null;
  private text: string | null = null;
  private hash: string | null;

  constructor(
    parts: readonly string[] | null,
    private readonly hasher: Sha256Hex,
    knownHash: string | null = null,
  ) {
    this.parts = parts;
    this.hash = knownHash;
  }

  /** A content whose text is already known (its hash is still computed on demand). */
  static ofText(text: string, hasher: Sha256Hex, knownHash: string | null = null): VersionContent {
    const content = new VersionContent(null, hasher, knownHash);
    content.text = text;
    return content;
  }

  /** The canonical JSON text, joined on first read. */
  get json(): string {
    if (this.text === null) {
      this.text = this.parts!.join('');
      if (this.hash !== null) this.parts = null;
    }
    return this.text;
  }

  /** Hex SHA-256 of {@link VersionContent.json}, computed on first read. */
  get sha256(): string {
    if (this.hash === null) {
      this.hash = this.text !== null ? this.hasher(this.text) : this.hasher(this.parts!);
      if (this.text !== null) this.parts = null;
    }
    return this.hash;
  }

  /** True once the hash is known. */
  get hashed(): boolean {
    return this.hash !== null;
  }

  /** True while only the pieces are held (neither text nor hash built yet). */
  get pending(): boolean {
    return this.text === null && this.hash === null;
  }
}

/** Versions kept per loaded document (a power of two): about one chunk of text each until read. */
export const RECENT_VERSIONS = 256;

/** The contents of a loaded document's last {@link RECENT_VERSIONS} versions, by version modulo their count. */
export interface RecentVersions {
  versions: Float64Array;
  contents: (VersionContent | undefined)[];
}

/** An empty ring of recent versions. */
export function recentVersions(): RecentVersions {
  return { versions: new Float64Array(RECENT_VERSIONS), contents: new Array<VersionContent | undefined>(RECENT_VERSIONS) };
}

/** Keep `content` as the content of `version` (it replaces the version {@link RECENT_VERSIONS} before). */
export function keepVersion(recent: RecentVersions, version: number, content: VersionContent): void {
  const slot = version & (RECENT_VERSIONS - 1);
  recent.versions[slot] = version;
  recent.contents[slot] = content;
}
