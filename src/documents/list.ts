/**
 * The document list: newest first, paged by opaque cursors bound to the credential.
 * @module
 */
import type { Actor } from '../actor.ts';
import type { Links } from '../contract/links.ts';
import type { DocumentHead, HeadCursor, Storage } from '../ports.ts';
import { visibleTo } from './access.ts';
import { decodeCursor, encodeCursor, invalidCursor, pageLimit } from '../cursor.ts';
import type { DocumentPage } from './types.ts';
import { summaryOf } from './view.ts';

/** One page of the actor's documents (a document-bound actor sees at most its one document). */
export async function listDocumentPage(
  storage: Storage,
  links: Links,
  /** The hash of a head's version (its stored value, or derived when it was left to be computed lazily). */
  hashOf: (head: DocumentHead) => Promise<string>,
  actor: Actor,
  query: { limit?: number | undefined; cursor?: string | undefined },
): Promise<DocumentPage> {
  const limit = pageLimit(query.limit);
  const credential = actor.credentialRef ?? '';
  const position = query.cursor === undefined ? undefined : decodeCursor('documents', credential, query.cursor);
  if (position !== undefined && position.updatedAt === undefined) throw invalidCursor();
  const after: HeadCursor | undefined = position && { updatedAt: position.updatedAt!, documentRef: position.after };
  let heads: DocumentHead[];
  if (actor.documentRef !== null) {
    const head = await storage.getDocumentHead(actor.documentRef);
    heads = visibleTo(actor, head) && (!after || sortsAfter(head, after)) ? [head] : [];
  } else {
    heads = await storage.listDocumentHeads(actor.accountId, limit + 1, after);
  }
  const page = heads.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor = heads.length > limit && last ? encodeCursor('documents', credential, { after: last.documentRef, updatedAt: last.updatedAt }) : null;
  const hashes = await Promise.all(page.map(hashOf));
  return { items: page.map((h, i) => summaryOf(h, hashes[i]!, links)), nextCursor };
}

/** True when `head` sorts strictly after the cursor position (newest first, ties by ref descending). */
function sortsAfter(head: DocumentHead, after: HeadCursor): boolean {
  return head.updatedAt < after.updatedAt || (head.updatedAt === after.updatedAt && head.documentRef < after.documentRef);
}
