/**
 * The person's sign-in links and sessions (`engine.sessions`): the browser app signs a person in by a
 * one-time link, keeps the session of its cookie, and shows a new agent token once after the form
 * that made it. Stored through the storage port so that every process sharing one storage honours
 * them (a link used on one process is spent on all of them; a session ended on one is ended
 * everywhere).
 * @remarks Only SHA-256 hashes of the secrets are stored, as record keys. A link is spent and its
 * session created in one atomic batch, guarded by the link record's revision: of two requests racing
 * with one link, exactly one gets a session. The collections keep the names they had when the browser
 * app held them (`web-sign-in-links`, `web-sessions`, `web-new-tokens`), so existing data folders
 * keep working.
 * @module
 */
import { randomSecret } from './tokens.ts';
import type { EngineDeps } from '../deps.ts';
import { invalid } from '../errors.ts';
import { isStorageConflict, recordTopic } from '../ports.ts';
import { ACCOUNT_ID_PATTERN } from './credential-schema.ts';
import { watchGrant, type GrantEnded } from './grant-watch.ts';
import { keepNewToken, takeNewToken } from './new-tokens.ts';

/** Storage collection of unused sign-in links, keyed by the SHA-256 of the link's secret. */
export const SIGN_IN_LINK_COLLECTION = 'web-sign-in-links';
/** Storage collection of sessions, keyed by the SHA-256 of the session cookie's value. */
export const SESSION_COLLECTION = 'web-sessions';

/** How long a sign-in link may be used: 15 minutes. */
export const SIGN_IN_LINK_TTL_MS = 15 * 60_000;
/** How long a session lasts from sign-in: 7 days. */
export const SESSION_TTL_MS = 7 * 86_400_000;

const SECRET = /^[A-Za-z0-9_-]{43}$/;

/** A stored sign-in link. */
interface SignInLinkRecord {
  v: 1;
  accountId: string;
  createdAt: number;
  expiresAt: number;
}

/** A session as stored. */
export interface Session {
  v: 1;
  accountId: string;
  /** The CSRF token every form of this session carries in its hidden `csrf` field. */
  csrf: string;
  createdAt: number;
  expiresAt: number;
}

/** A new sign-in link: its secret (the last path segment of `/sign-in/<secret>`) and expiry. */
export interface SignInLink {
  secret: string;
  expiresAt: number;
}

/** Sign-in links and sessions over the engine's storage: `engine.sessions`. */
export interface SessionService {
  /**
   * A one-time link that signs into `accountId` within 15 minutes: its secret, the last path segment
   * of the browser app's `/sign-in/<secret>`.
   * @throws INVALID_REQUEST (fieldErrors `account`) when `accountId` is not an account id.
   */
  createLink(accountId: string): Promise<SignInLink>;
  /** Spend a link: a new session and its cookie value, or null for an unknown, used or expired link. */
  redeem(secret: string): Promise<{ cookie: string; session: Session } | null>;
  /** The live session of a cookie value, or null. */
  lookup(cookie: string): Promise<Session | null>;
  /** End the session of a cookie value (nothing when there is none). */
  end(cookie: string): Promise<void>;
  /**
   * Follow a live session: `ended` once it is ended (signed out, on any process sharing the storage)
   * or expires. Returns stop watching.
   */
  watch(cookie: string, session: Session, ended: GrantEnded): () => void;
  /**
   * Keep a new agent token for the session of `cookie` between the form post that made it and the
   * page that shows it (sealed with a key derived from the cookie, one use, 5 minutes): the id the
   * redirect names.
   */
  keepNewToken(cookie: string, token: string): Promise<string>;
  /** The token kept under `id` for the session of `cookie`, once; undefined when unknown, used, expired or another session's. */
  takeNewToken(cookie: string, id: string | null): Promise<string | undefined>;
}

/** Build the {@link SessionService}. */
export function createSessionService(deps: EngineDeps): SessionService {
  const { storage, clock, sha256 } = deps;

  /** Drop expired links and sessions (when a link is made: rare, and the collections stay small). */
  async function prune(now: number): Promise<void> {
    for (const collection of [SIGN_IN_LINK_COLLECTION, SESSION_COLLECTION]) {
      const expired = (await storage.listRecords<{ expiresAt: number }>(collection)).filter((r) => now >= r.value.expiresAt);
      if (expired.length === 0) continue;
      // Guarded by revision: a record another process just changed is left for the next sweep.
      await storage
        .commit(expired.map((r) => ({ kind: 'record.delete' as const, collection, key: r.key, expectedRevision: r.revision })))
        .catch((e: unknown) => {
          if (!isStorageConflict(e)) throw e;
        });
    }
  }

  return {
    async createLink(accountId) {
      if (typeof accountId !== 'string' || !ACCOUNT_ID_PATTERN.test(accountId)) {
        throw invalid('account must be an account id.', [{ field: 'account', message: 'must be 1-64 letters, digits, dots, underscores or hyphens, starting with a letter or digit' }]);
      }
      const secret = randomSecret();
      const now = clock.now();
      await prune(now);
      const record: SignInLinkRecord = { v: 1, accountId, createdAt: now, expiresAt: now + SIGN_IN_LINK_TTL_MS };
      await storage.commit([{ kind: 'record.put', collection: SIGN_IN_LINK_COLLECTION, key: sha256(secret), value: record, expectedRevision: null }]);
      return { secret, expiresAt: record.expiresAt };
    },

    async redeem(secret) {
      if (!SECRET.test(secret)) return null;
      const key = sha256(secret);
      const link = await storage.getRecord<SignInLinkRecord>(SIGN_IN_LINK_COLLECTION, key);
      if (!link) return null;
      const now = clock.now();
      if (now >= link.value.expiresAt) {
        await storage.commit([{ kind: 'record.delete', collection: SIGN_IN_LINK_COLLECTION, key, expectedRevision: link.revision }]).catch(() => undefined);
        return null;
      }
      const cookie = randomSecret();
      const session: Session = { v: 1, accountId: link.value.accountId, csrf: randomSecret(), createdAt: now, expiresAt: now + SESSION_TTL_MS };
      try {
        await storage.commit([
          { kind: 'record.delete', collection: SIGN_IN_LINK_COLLECTION, key, expectedRevision: link.revision },
          { kind: 'record.put', collection: SESSION_COLLECTION, key: sha256(cookie), value: session, expectedRevision: null },
        ]);
      } catch (e) {
        if (isStorageConflict(e)) return null; // spent by a racing request
        throw e;
      }
      return { cookie, session };
    },

    async lookup(cookie) {
      if (!SECRET.test(cookie)) return null;
      const stored = await storage.getRecord<Session>(SESSION_COLLECTION, sha256(cookie));
      if (!stored || clock.now() >= stored.value.expiresAt) return null;
      return stored.value;
    },

    async end(cookie) {
      if (!SECRET.test(cookie)) return;
      await storage.commit([{ kind: 'record.delete', collection: SESSION_COLLECTION, key: sha256(cookie) }]);
    },

    watch(cookie, session, ended) {
      const key = sha256(cookie);
      return watchGrant(storage, recordTopic(SESSION_COLLECTION, key), session.expiresAt, () => clock.now(), async () => {
        const stored = await storage.getRecord<Session>(SESSION_COLLECTION, key);
        return stored === null ? 'the session ended (signed out)' : null;
      }, ended);
    },

    keepNewToken: (cookie, token) => keepNewToken(deps, cookie, token),
    takeNewToken: (cookie, id) => takeNewToken(deps, cookie, id),
  };
}
