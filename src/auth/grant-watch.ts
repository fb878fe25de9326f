/**
 * Following a grant that outlives its request — a live co-editing socket, an event stream — until it
 * ends: the credential revoked or expired, the person's session ended (signed out) or expired. The
 * storage's change notification of the grant's record carries a revocation or a sign-out made by
 * any process sharing the storage (PostgreSQL: LISTEN/NOTIFY), and a timer its expiry.
 * @module
 */
import type { ChangeTopic, Storage } from '../ports.ts';
import { recordTopic } from '../ports.ts';
import type { EngineDeps } from '../deps.ts';
import { CREDENTIAL_COLLECTION, type Credential } from './credentials.ts';

/** The longest a node timer may wait (ms); a later expiry is re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/** What ends a watch: the reason, in words for a close frame or a log. */
export type GrantEnded = (reason: string) => void;

/**
 * Call `ended` once when `stillValid()` answers a reason (a string) after a change of `topic`, or
 * when `expiresAt` (epoch ms, by `now()`) passes; also checked once right away (a change between the
 * grant being given and this watch would otherwise be missed).
 * @returns stop watching (idempotent).
 */
export function watchGrant(
  storage: Pick<Storage, 'subscribe'>,
  topic: ChangeTopic,
  expiresAt: number,
  now: () => number,
  stillValid: () => Promise<string | null>,
  ended: GrantEnded,
): () => void {
  let done = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const finish = (reason: string) => {
    if (done) return;
    stop();
    ended(reason);
  };
  const check = () => {
    if (done) return;
    stillValid().then(
      (reason) => reason !== null && finish(reason),
      () => {}, // the storage away: the next change (or the expiry) checks again
    );
  };
  const arm = () => {
    const wait = expiresAt - now();
    if (wait <= 0) return finish('the grant expired');
    timer = setTimeout(arm, Math.min(wait, MAX_TIMER_MS));
    timer.unref?.();
  };
  const off = storage.subscribe(topic, check);
  function stop() {
    done = true;
    off();
    if (timer !== null) clearTimeout(timer);
    timer = null;
  }
  arm();
  check();
  return () => {
    if (!done) stop();
  };
}

/** Watch a credential (a bearer token's grant): `ended` once it is revoked (by any process) or expires. */
export function watchCredential(deps: Pick<EngineDeps, 'storage' | 'clock'>, credential: Pick<Credential, 'credentialRef' | 'expiresAt'>, ended: GrantEnded): () => void {
  const ref = credential.credentialRef;
  return watchGrant(deps.storage, recordTopic(CREDENTIAL_COLLECTION, ref), credential.expiresAt, () => deps.clock.now(), async () => {
    const stored = await deps.storage.getRecord<{ revokedAt?: number | null }>(CREDENTIAL_COLLECTION, ref);
    if (stored === null) return 'the token no longer exists';
    return stored.value.revokedAt ? 'the token was revoked' : null;
  }, ended);
}
