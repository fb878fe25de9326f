/**
 * Per-account index of document heads for `listDocumentHeads`.
 * @module
 */
import type { DocumentHead, HeadCursor } from '../../src/ports.ts';
import { partitionPoint } from './binary-search.ts';

/** Anything that carries a current head (the core's document entries). */
export interface HasHead {
  head: DocumentHead;
}

/** Newest `updatedAt` first; ties by `documentRef` descending. */
function compareNewestFirst(a: HasHead, b: HasHead): number {
  const d = b.head.updatedAt - a.head.updatedAt;
  if (d !== 0) return d;
  const x = a.head.documentRef;
  const y = b.head.documentRef;
  return x < y ? 1 : x > y ? -1 : 0;
}

function isStrictlyAfter(entry: HasHead, cursor: HeadCursor): boolean {
  const h = entry.head;
  return h.updatedAt < cursor.updatedAt || (h.updatedAt === cursor.updatedAt && h.documentRef < cursor.documentRef);
}

interface AccountEntries<E extends HasHead> {
  entries: E[];
  sorted: boolean;
}

/**
 * Keeps each account's documents in one array, re-sorted lazily when listed after a change.
 * @remarks Appends only mark the account unsorted (O(1)), so the write path stays cheap. V8 sorts
 * with TimSort, which is close to linear on an array that was sorted before a few heads moved, so a
 * list after a handful of mutations costs about one pass. Entries are shared with the core: the index
 * reads `entry.head` at sort time, so the caller must call {@link touch} after replacing a head.
 */
export class HeadIndex<E extends HasHead> {
  private readonly accounts = new Map<string, AccountEntries<E>>();

  /** Adds a new document under its head's account. */
  add(entry: E): void {
    const id = entry.head.accountId;
    let account = this.accounts.get(id);
    if (account === undefined) {
      account = { entries: [], sorted: true };
      this.accounts.set(id, account);
    }
    account.entries.push(entry);
    account.sorted = false;
  }

  /** Removes a document from `accountId` (used when an append moves it to another account). */
  remove(entry: E, accountId: string): void {
    const account = this.accounts.get(accountId);
    if (account === undefined) return;
    const at = account.entries.indexOf(entry);
    if (at >= 0) account.entries.splice(at, 1);
    if (account.entries.length === 0) this.accounts.delete(accountId);
  }

  /** Marks an account's order stale after one of its heads changed. */
  touch(accountId: string): void {
    const account = this.accounts.get(accountId);
    if (account !== undefined) account.sorted = false;
  }

  /** Up to `limit` entries of one account, newest first, strictly after `after` when given. */
  list(accountId: string, limit: number, after?: HeadCursor): E[] {
    const account = this.accounts.get(accountId);
    if (account === undefined || !(limit > 0)) return [];
    if (!account.sorted) {
      account.entries.sort(compareNewestFirst);
      account.sorted = true;
    }
    const entries = account.entries;
    const start = after === undefined ? 0 : partitionPoint(entries, (entry) => isStrictlyAfter(entry, after));
    return entries.slice(start, start + limit);
  }
}
