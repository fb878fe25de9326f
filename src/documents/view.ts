/**
 * The representations of a loaded document: the Document view (rich-json), the flat blocks, the
 * Markdown projection, list summaries, and the opaque Service-Revision.
 * @module
 */
import { projectMarkdown } from '../blocks/markdown-projection.ts';
import { isGrammarBlock } from '../blocks/model.ts';
import type { BlockTree } from '../blocks/tree.ts';
import { isoTimestamp } from '../clock.ts';
import { conflict } from '../errors.ts';
import type { DocumentHead } from '../ports.ts';
import { flatString } from '../text.ts';
import type { Loaded } from './cache.ts';
import { flatBlocks } from './flat-blocks.ts';
import type { DocumentFormat, DocumentRead, DocumentSummary, DocumentView } from './types.ts';

/** The opaque Service-Revision of a document version: unique per document and version. */
export function revisionOf(documentRef: string, version: number): string {
  return `${documentRef.slice(5)}.${version}`;
}

/** The browser link of a document. */
export function browserHref(baseUrl: string, documentRef: string): string {
  return `${baseUrl}/documents/${documentRef}`;
}

/** The Service-Revision of a loaded document's current head (kept until the version changes). */
export function currentRevision(loaded: Loaded): string {
  const version = loaded.head.version;
  const cached = loaded.revision;
  if (cached !== undefined && cached.version === version) return cached.text;
  const text = flatString(revisionOf(loaded.head.documentRef, version));
  loaded.revision = { version, text };
  return text;
}

/** The Document view of the loaded version, built once per version. */
export function viewOf(loaded: Loaded, baseUrl: string): DocumentView {
  if (loaded.view) return loaded.view;
  const h = loaded.head;
  loaded.view = {
    v: 1,
    documentRef: h.documentRef,
    spaceRef: h.spaceRef,
    title: h.title,
    version: h.version,
    format: 'service-rich-document',
    formatGeneration: 1,
    contentSha256: h.contentSha256,
    browserHref: (loaded.href ??= browserHref(baseUrl, h.documentRef)),
    documentJson: loaded.tree.json(),
    revision: currentRevision(loaded),
    createdAt: (loaded.createdIso ??= isoTimestamp(h.createdAt)),
    updatedAt: isoTimestamp(h.updatedAt),
  };
  return loaded.view;
}

/** A list item from a stored head. */
export function summaryOf(h: DocumentHead, baseUrl: string): DocumentSummary {
  return {
    v: 1,
    documentRef: h.documentRef,
    spaceRef: h.spaceRef,
    title: h.title,
    version: h.version,
    contentSha256: h.contentSha256,
    blockCount: h.blockCount,
    browserHref: browserHref(baseUrl, h.documentRef),
    createdAt: isoTimestamp(h.createdAt),
    updatedAt: isoTimestamp(h.updatedAt),
  };
}

/** One representation of a loaded document (synchronous: nothing can interleave). */
export function represent(loaded: Loaded, format: DocumentFormat, baseUrl: string): DocumentRead {
  const revision = currentRevision(loaded);
  const version = loaded.head.version;
  const documentRef = loaded.head.documentRef;
  if (format === 'rich-json') return { format: 'rich-json', revision, version, document: viewOf(loaded, baseUrl) };
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
