/**
 * The representations of a loaded document: the Document view (rich-json), the flat blocks, the
 * Markdown projection, list summaries, and the opaque Service-Revision.
 * @module
 */
import type { Links } from '../contract/links.ts';
import { projectMarkdown } from '../blocks/markdown-projection.ts';
import { isGrammarBlock } from '../blocks/model.ts';
import type { BlockTree } from '../blocks/tree.ts';
import { isoTimestamp } from '../clock.ts';
import type { EngineDeps } from '../deps.ts';
import { conflict } from '../errors.ts';
import type { DocumentHead } from '../ports.ts';
import type { Loaded } from './cache.ts';
import { VersionContent } from './content.ts';
import { flatBlocks } from './flat-blocks.ts';
import type { DocumentFormat, DocumentRead, DocumentSummary, DocumentView } from './types.ts';

/** The opaque Service-Revision of a document version: unique per document and version. */
export function revisionOf(documentRef: string, version: number): string {
  return `${documentRef.slice(5)}.${version}`;
}

/** The Service-Revision of a loaded document's current head (kept until the version changes). */
export function currentRevision(loaded: Loaded): string {
  const version = loaded.head.version;
  const cached = loaded.revision;
  if (cached !== undefined && cached.version === version) return cached.text;
  const text = revisionOf(loaded.head.documentRef, version);
  loaded.revision = { version, text };
  return text;
}

/** What building views needs of the engine. */
export type ViewDeps = Pick<EngineDeps, 'links' | 'sha256'>;

/**
 * The lazy content of the loaded version (its tree must be at `head.version`: outside a mutation's
 * lock, or right after a mutation applied it).
 */
export function contentOf(loaded: Loaded, sha256: EngineDeps['sha256']): VersionContent {
  return (loaded.content ??= new VersionContent(loaded.tree.jsonParts(), sha256, loaded.head.contentSha256 || null, loaded.tree));
}

/** Where a view or receipt keeps the {@link VersionContent} its lazy fields read. */
const CONTENT = Symbol('content');
type WithContent = { [CONTENT]: VersionContent };

/**
 * The lazy fields: one getter function each, shared by every object, reading the object's own
 * content. Shared getters let V8 keep such objects in fast mode with one hidden class (an object
 * literal with `get` closures falls back to a slow dictionary object and costs ~1 µs to build).
 */
const SHA256_FIELD: PropertyDescriptor = {
  get(this: WithContent) {
    return this[CONTENT].sha256;
  },
  enumerable: true,
  configurable: true,
};
const JSON_FIELD: PropertyDescriptor = {
  get(this: WithContent) {
    return this[CONTENT].json;
  },
  enumerable: true,
  configurable: true,
};

/** The lazy content a view built by {@link viewOf} reads its `documentJson` and `contentSha256` from (for its UTF-8 bytes). */
export function viewContent(view: DocumentView): VersionContent | undefined {
  return (view as Partial<WithContent>)[CONTENT];
}

/**
 * Give `target` its own enumerable `contentSha256` getter over `content` (hashed on first read), as
 * its next key.
 */
export function defineContentSha256<T extends object>(target: T, content: VersionContent): T {
  (target as T & WithContent)[CONTENT] = content;
  return Object.defineProperty(target, 'contentSha256', SHA256_FIELD);
}

/**
 * The Document view of the loaded version, built once per version.
 * @remarks `documentJson` and `contentSha256` are getters over the version's {@link VersionContent}:
 * joined and hashed on first read, at most once per version, so a caller that reads only the
 * version or revision never pays for them. They are own enumerable properties (a spread or
 * `JSON.stringify` of the view reads them), in the view's key order.
 */
export function viewOf(loaded: Loaded, deps: ViewDeps): DocumentView {
  if (loaded.view) return loaded.view;
  const h = loaded.head;
  const view = defineContentSha256(
    {
      v: 1,
      documentRef: h.documentRef,
      spaceRef: h.spaceRef,
      title: h.title,
      version: h.version,
      format: 'service-rich-document',
      formatGeneration: 1,
    },
    contentOf(loaded, deps.sha256),
  ) as Partial<DocumentView>;
  view.browserHref = loaded.href ??= deps.links.documentPage(h.documentRef);
  Object.defineProperty(view, 'documentJson', JSON_FIELD);
  view.revision = currentRevision(loaded);
  view.createdAt = loaded.createdIso ??= isoTimestamp(h.createdAt);
  view.updatedAt = isoTimestamp(h.updatedAt);
  return (loaded.view = view as DocumentView);
}

/** A list item from a stored head and the hash of its version. */
export function summaryOf(h: DocumentHead, contentSha256: string, links: Links): DocumentSummary {
  return {
    v: 1,
    documentRef: h.documentRef,
    spaceRef: h.spaceRef,
    title: h.title,
    version: h.version,
    contentSha256,
    blockCount: h.blockCount,
    browserHref: links.documentPage(h.documentRef),
    createdAt: isoTimestamp(h.createdAt),
    updatedAt: isoTimestamp(h.updatedAt),
  };
}

/** One representation of a loaded document (synchronous: nothing can interleave). */
export function represent(loaded: Loaded, format: DocumentFormat, deps: ViewDeps): DocumentRead {
  const revision = currentRevision(loaded);
  const version = loaded.head.version;
  const documentRef = loaded.head.documentRef;
  if (format === 'rich-json') return { format: 'rich-json', revision, version, document: viewOf(loaded, deps) };
  // Built once per version: the grammar check walks the whole tree, so it runs only with the build.
  if (format === 'blocks') {
    if (!loaded.blocks) {
      requireGrammar(loaded.tree);
      loaded.blocks = flatBlocks(loaded.tree);
    }
    return { format: 'blocks', revision, version, documentRef, blocks: loaded.blocks };
  }
  let projection = loaded.markdown;
  if (!projection) {
    const projected = projectMarkdown(loaded.tree.walk());
    if ('outsideGrammar' in projected) {
      requireGrammar(loaded.tree);
      throw conflict('The document holds blocks outside the Markdown grammar; read it with format=rich-json.');
    }
    projection = loaded.markdown = projected;
  }
  const { markdown, losses } = projection;
  return { format: 'markdown', revision, version, documentRef, markdown, lossCount: losses.length, losses };
}

/** CONFLICT when the tree holds blocks outside the Markdown grammar (only rich-json can carry them). */
function requireGrammar(tree: BlockTree): void {
  const outside: string[] = [];
  for (const entry of tree.walk()) if (!isGrammarBlock(entry.rec)) outside.push(entry.id);
  if (outside.length) {
    throw conflict(
      `The document holds ${outside.length} block(s) outside the Markdown grammar (first: ${outside[0]}); read it with format=rich-json.`,
    );
  }
}
