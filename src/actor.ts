/**
 * Who is acting: the one notion every domain and every edge shares (an edge builds the actor of a
 * signed-in person; the engine checks what an actor may see and do).
 * @module
 */

/**
 * Who is acting: the account, the credential (null for a trusted in-process caller) and, for a
 * document-bound credential, the one document it may see.
 */
export interface Actor {
  accountId: string;
  credentialRef: string | null;
  documentRef: string | null;
}

/** The trusted, account-wide actor of an account (the engine's own reads and writes for it: reports, pages). */
export function accountActor(accountId: string): Actor {
  return { accountId, credentialRef: null, documentRef: null };
}

/** The account of the local person when none is named: a credential or sign-in link made without `account` belongs to it. */
export const DEFAULT_LOCAL_ACCOUNT = 'owner';
