/**
 * What the composition root hands every domain service.
 * @module
 */
import type { Clock } from './clock.ts';
import type { Sha256Hex } from './hash.ts';
import type { IdSource, RefMinter } from './ids.ts';
import type { Storage } from './ports.ts';

/** Shared dependencies of the domain services. */
export interface EngineDeps {
  storage: Storage;
  clock: Clock;
  ids: IdSource;
  refs: RefMinter;
  sha256: Sha256Hex;
  /** Origin prefixed to browser links (`browserHref`), e.g. `http://127.0.0.1:8787`; '' gives relative links. */
  baseUrl: string;
}

/**
 * Who is acting: the account, the credential (null for a trusted in-process caller) and, for a
 * document-bound credential, the one document it may see.
 */
export interface Actor {
  accountId: string;
  credentialRef: string | null;
  documentRef: string | null;
}
