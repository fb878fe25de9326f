/**
 * Live co-editing's rules as an engine service (`engine.live`): a document's editing session (its
 * editor Y.Doc kept in step with the versions, each person's edits committed as that person on the
 * version rhythm: ./bridge.ts), the grant checks of a token's connection (revoked, expired, its
 * request budget), and the cross-process ownership of a document's room (./leases.ts). A transport
 * (transports/sync: y-websocket framing, the HTTP upgrade, per-peer limits) builds on this surface
 * alone.
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import type { Actor } from '../actor.ts';
import type { DocumentsService } from '../documents/types.ts';
import { ServiceError } from '../errors.ts';
import { watchCredential } from '../auth/grant-watch.ts';
import { CREDENTIAL_COLLECTION, type Credential, type CredentialService } from '../auth/credentials.ts';
import { DocumentBridge, defaultTiming, type LiveSession, type SyncTiming } from './bridge.ts';
import { storageRelayPort, type LiveRelayPort } from './leases.ts';

/** Options of {@link LiveEditingService.open}. */
export interface LiveSessionOptions {
  /** The version rhythm (1 s pause, 5 s at most) and its timers. */
  timing?: Partial<SyncTiming> | undefined;
  /** Failed background work of the session (a commit, a read); default: the engine's error reporter. */
  onError?: ((error: unknown) => void) | undefined;
}

/** Live co-editing: what a transport serving editors needs of the engine. */
export interface LiveEditingService {
  /**
   * Open the editing session of `documentRef`, read as the account `accountId` (the connection's
   * actor was checked against the document by the caller): the current version is loaded into the
   * editor doc, which then follows every version. A person's edits (attributed through
   * {@link LiveSession.attribute}) are committed as that person; a token's grant is checked before
   * each of its commits (revoked or expired: AUTH_REQUIRED, its edits not saved; a spent budget:
   * RATE_LIMITED), each commit a request of its budget.
   * @throws NOT_FOUND for an unknown document; CONFLICT for one nested deeper than the editor holds.
   */
  open(documentRef: string, accountId: string, options?: LiveSessionOptions): Promise<LiveSession>;
  /**
   * Follow a token's grant while its connection is open: `ended` once the credential is revoked (by
   * any process sharing the storage), deleted, or expires.
   * @returns stop following (idempotent).
   */
  watchCredential(credential: Pick<Credential, 'credentialRef' | 'expiresAt'>, ended: (reason: string) => void): () => void;
  /** A fresh request id (`req_…`) for an answer the transport gives itself (a refused upgrade). */
  requestId(): string;
  /**
   * Rooms across processes: the ownership leases and the ephemeral channel; null when the storage
   * carries no ephemeral messages (one room per process).
   */
  readonly relay: LiveRelayPort | null;
}

/** What the service takes from the engine besides its dependencies. */
interface LiveContext {
  documents: DocumentsService;
  credentials: CredentialService;
}

/** The live-editing service of an engine (made by createEngine). */
export function createLiveEditingService(deps: EngineDeps, { documents, credentials }: LiveContext): LiveEditingService {
  const authRequired = (message: string) => new ServiceError('AUTH_REQUIRED', message, { requiredAction: 'authenticate' });

  /**
   * Before each commit of a token's edits: the token is still live (not revoked — on any process —
   * nor expired), and the commit is a request of its budget. A person's edits need no check here:
   * their connections are closed when they sign out.
   */
  async function checkCommit(actor: Actor): Promise<void> {
    if (actor.credentialRef === null) return;
    const stored = await deps.storage.getRecord<{ revokedAt?: number | null; expiresAt: number }>(CREDENTIAL_COLLECTION, actor.credentialRef);
    if (stored === null || stored.value.revokedAt) throw authRequired('The token was revoked; its edits were not saved.');
    if (deps.clock.now() >= stored.value.expiresAt) throw authRequired('The token has expired; its edits were not saved.');
    const credential = await credentials.get(actor.credentialRef);
    if (credential === null) throw authRequired('The token no longer exists.');
    if (credentials.sharedBudgets) await credentials.take(credential);
    else credentials.charge(credential);
  }

  return {
    async open(documentRef, accountId, options = {}) {
      const reader: Actor = { accountId, credentialRef: null, documentRef: null };
      const timing: SyncTiming = { ...defaultTiming, ...options.timing };
      const onError = options.onError ?? ((error: unknown) => deps.reportError(error, `sync ${documentRef}`));
      const bridge = new DocumentBridge(documents, documentRef, reader, timing, deps.refs.blockId, onError, () => deps.ids.hex(32));
      bridge.beforeCommit(checkCommit);
      try {
        await bridge.open();
      } catch (error) {
        bridge.close();
        throw error;
      }
      return bridge;
    },
    watchCredential: (credential, ended) => watchCredential(deps, credential, ended),
    requestId: () => deps.refs.requestId(),
    relay: storageRelayPort(deps.storage),
  };
}
