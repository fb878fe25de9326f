/**
 * The content of one document version, built lazily: the canonical JSON text and its SHA-256 are
 * computed when first read, at most once, never on the path of a caller that only needs the version.
 * @module
 */
import type { Sha256Hex } from '../hash.ts';

/** Encodes a version's text pieces as UTF-8, reusing what it kept (the block tree keeps each chunk's bytes). */
export interface PartEncoder {
  partBytes(parts: readonly string[]): Uint8Array[];
}

const utf8 = new TextEncoder();
const plainEncoder: PartEncoder = { partBytes: (parts) => parts.map((p) => utf8.encode(p)) };

/**
 * What a loaded document keeps of a recent version for its hash (see {@link RecentVersions}): the
 * version's pieces until the hash is known, then the hash alone.
 * @remarks Keeping the {@link VersionContent} itself would keep each version's text (for a small
 * document, its whole JSON) alive for {@link RECENT_VERSIONS} versions: every edit's text would
 * outlive the young generation and be copied into the old one, to die there. Once the version's
 * hash is known (an HTTP answer reads it at once) the pieces live only as long as a view of the
 * version does.
 */
export class KeptHash {
  constructor(
    private parts: readonly string[] | null,
    private readonly hasher: Sha256Hex,
    public hash: string | null,
  ) {}

  /** Hex SHA-256 of the version's text. */
  get sha256(): string {
    if (this.hash === null) this.settle(this.hasher(this.parts!));
    return this.hash!;
  }

  /** The hash is known: keep it, drop the pieces. */
  settle(hash: string): void {
    this.hash = hash;
    this.parts = null;
  }
}

/**
 * One version's canonical rich-json `document` text and hash.
 * @remarks Holds the tree's cached JSON pieces of that version: strings shared with neighbouring
 * versions (an edit re-joins one chunk), so a version costs about one chunk of text plus an array.
 * The first read of {@link VersionContent.json} joins them, the first read of
 * {@link VersionContent.sha256} hashes them (the joined text when there is one, else piece by
 * piece); each at most once. {@link VersionContent.bytes} are the pieces as UTF-8 (for an HTTP
 * answer), from the encoder's kept chunks; the hash is taken over them when they exist.
 * {@link VersionContent.release} drops the joined text and the bytes once the document has moved on,
 * so that kept versions do not hold a whole document each.
 */
export class VersionContent {
  private text: string | null = null;
  private encoded: readonly Uint8Array[] | null = null;
  /** The hash, shared with the loaded document's ring of recent versions. */
  readonly kept: KeptHash;

  constructor(
    private readonly parts: readonly string[],
    private readonly hasher: Sha256Hex,
    knownHash: string | null = null,
    private readonly encoder: PartEncoder = plainEncoder,
  ) {
    this.kept = new KeptHash(knownHash === null ? parts : null, hasher, knownHash);
  }

  /** Length of {@link VersionContent.json} in UTF-16 units, without joining it. */
  get length(): number {
    if (this.text !== null) return this.text.length;
    let n = 0;
    for (let i = 0; i < this.parts.length; i++) n += this.parts[i]!.length;
    return n;
  }

  /** The text's UTF-8 bytes in pieces (their concatenation is the encoded text), built on first read. */
  get bytes(): readonly Uint8Array[] {
    return (this.encoded ??= this.encoder.partBytes(this.parts));
  }

  /** The canonical JSON text, joined on first read (and again only after a release). */
  get json(): string {
    return (this.text ??= this.parts.join(''));
  }

  /** Hex SHA-256 of {@link VersionContent.json}, computed on first read. */
  get sha256(): string {
    const kept = this.kept;
    if (kept.hash === null) kept.settle(this.hasher(this.encoded ?? this.text ?? this.parts));
    return kept.hash!;
  }

  /** Drop the joined text and the bytes (kept: the pieces, and the hash when computed). */
  release(): void {
    this.text = null;
    this.encoded = null;
  }
}

/** Versions kept per loaded document (a power of two): their hash, or their pieces until it is known. */
export const RECENT_VERSIONS = 64;

/** The hashes of a loaded document's last {@link RECENT_VERSIONS} versions, by version modulo their count. */
export interface RecentVersions {
  versions: Float64Array;
  contents: (KeptHash | undefined)[];
}

/** An empty ring of recent versions. */
export function recentVersions(): RecentVersions {
  return { versions: new Float64Array(RECENT_VERSIONS), contents: new Array<KeptHash | undefined>(RECENT_VERSIONS) };
}

/** Keep the hash of `version` (its pieces until the hash is known); it replaces the version {@link RECENT_VERSIONS} before. */
export function keepVersion(recent: RecentVersions, version: number, content: VersionContent): void {
  const slot = version & (RECENT_VERSIONS - 1);
  recent.versions[slot] = version;
  recent.contents[slot] = content.kept;
}
