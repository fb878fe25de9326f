/**
 * Which spaces an actor may see, and the per-space write queue.
 * @remarks Each document has its own space; a space belongs to the account of its
 * document. A document-bound actor sees only its document's space; an account-wide actor sees every
 * space of its account. Owners never change, so a resolved owner is cached.
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import type { Actor } from '../actor.ts';
import type { HeadCursor } from '../ports.ts';
import { Patterns } from '../ids.ts';
import { KnowledgeCollections, type SpaceRecord } from './records.ts';

/** The owner of a space: its account and document. */
export interface SpaceOwner {
  accountId: string;
  documentRef: string;
}

/** Space ownership lookups and a write queue per space. */
export interface SpaceDirectory {
  /** The owner of a space the actor may see, else null (absent and out-of-boundary alike). */
  visible(actor: Actor, spaceRef: string): Promise<SpaceOwner | null>;
  /** The owner of a space, whoever asks (operator and trusted in-process callers). */
  owner(spaceRef: string): Promise<SpaceOwner | null>;
  /** Run `fn` after every earlier write of the same space has settled. */
  serialize<T>(spaceRef: string, fn: () => Promise<T>): Promise<T>;
}

/** Build the directory over the engine's storage. */
export function createSpaceDirectory(deps: EngineDeps): SpaceDirectory {
  const { storage } = deps;
  const owners = new Map<string, SpaceOwner>();
  const queues = new Map<string, Promise<unknown>>();

  async function scanAccount(accountId: string, spaceRef: string): Promise<SpaceOwner | null> {
    let after: HeadCursor | undefined;
    for (;;) {
      const heads = await storage.listDocumentHeads(accountId, 500, after);
      for (const h of heads) if (h.spaceRef === spaceRef) return { accountId: h.accountId, documentRef: h.documentRef };
      if (heads.length < 500) return null;
      const last = heads[heads.length - 1]!;
      after = { updatedAt: last.updatedAt, documentRef: last.documentRef };
    }
  }

  async function stored(spaceRef: string): Promise<SpaceOwner | null> {
    const cached = owners.get(spaceRef);
    if (cached) return cached;
    const rec = await storage.getRecord<SpaceRecord>(KnowledgeCollections.spaces, spaceRef);
    if (!rec) return null;
    const owner = { accountId: rec.value.accountId, documentRef: rec.value.documentRef };
    owners.set(spaceRef, owner);
    return owner;
  }

  return {
    async visible(actor, spaceRef) {
      if (!Patterns.spaceRef.test(spaceRef)) return null;
      if (actor.documentRef !== null) {
        const head = await storage.getDocumentHead(actor.documentRef);
        if (!head || head.spaceRef !== spaceRef || head.accountId !== actor.accountId) return null;
        return { accountId: head.accountId, documentRef: head.documentRef };
      }
      const known = await stored(spaceRef);
      if (known) return known.accountId === actor.accountId ? known : null;
      const found = await scanAccount(actor.accountId, spaceRef);
      if (found) owners.set(spaceRef, found);
      return found;
    },
    owner: stored,
    serialize(spaceRef, fn) {
      const run = (queues.get(spaceRef) ?? Promise.resolve()).then(fn, fn);
      const tail = run.catch(() => undefined);
      queues.set(spaceRef, tail);
      void tail.then(() => {
        if (queues.get(spaceRef) === tail) queues.delete(spaceRef);
      });
      return run;
    },
  };
}
