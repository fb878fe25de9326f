/**
 * The visibility boundary of documents: an actor sees its account's documents, or only its one
 * document with a document-bound credential.
 * @module
 */
import type { Actor } from '../actor.ts';
import { notFound } from '../errors.ts';
import { Patterns } from '../ids.ts';
import { loadHeadAndUpdates, type DocumentHead, type HeadAndUpdates, type Storage } from '../ports.ts';

/** True when `head` exists and lies inside the actor's boundary. */
export function visibleTo(actor: Actor, head: DocumentHead | null): head is DocumentHead {
  return head !== null && head.accountId === actor.accountId && (actor.documentRef === null || actor.documentRef === head.documentRef);
}

/**
 * The stored head of a document the actor may see; NOT_FOUND when malformed, absent or outside the
 * boundary. (A reaction on the storage read, not an async function: one frame less on every
 * mutation and read.)
 */
export function visibleHead(storage: Storage, actor: Actor, documentRef: string): Promise<DocumentHead> {
  if (!Patterns.documentRef.test(documentRef)) return Promise.reject(notFound('The document'));
  return storage.getDocumentHead(documentRef).then((head) => {
    if (!visibleTo(actor, head)) throw notFound('The document');
    return head;
  });
}

/**
 * {@link visibleHead} and the updates logged after `afterVersion`, in one read where the storage
 * offers it (see Storage.loadHeadAndUpdates).
 */
export async function visibleHeadAndUpdates(storage: Storage, actor: Actor, documentRef: string, afterVersion: number): Promise<HeadAndUpdates> {
  if (!Patterns.documentRef.test(documentRef)) throw notFound('The document');
  const got = await loadHeadAndUpdates(storage, documentRef, afterVersion);
  if (got === null || !visibleTo(actor, got.head)) throw notFound('The document');
  return got;
}
