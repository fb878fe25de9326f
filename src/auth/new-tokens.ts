/**
 * New tokens between the form post that made them and the page that shows them (post/redirect/get):
 * kept through the storage port, so the redirected GET may reach any process behind a balancer;
 * sealed with a key derived from the session cookie (AES-256-GCM, WebCrypto), so the storage never
 * holds a token it could read (decisions.md: only a hash of a token is stored); one use; 5 minutes.
 * @module
 */
import { randomSecret } from './tokens.ts';
import type { EngineDeps } from '../deps.ts';
import { decodeBase64, encodeBase64 } from '../library/base64.ts';

/** The collection of sealed new tokens (key: SHA-256 of the id in the redirect). */
export const NEW_TOKEN_COLLECTION = 'web-new-tokens';
/** How long a new token waits for its page. */
export const NEW_TOKEN_TTL_MS = 5 * 60_000;
const ID = /^[A-Za-z0-9_-]{16,128}$/;

interface SealedToken {
  iv: string;
  sealed: string;
  expiresAt: number;
}

const hexBytes = (hex: string) => Uint8Array.from({ length: hex.length / 2 }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));

/** The sealing key of one session: SHA-256 of its cookie secret, under a label of its own. */
function sealKey(deps: Pick<EngineDeps, 'sha256'>, cookie: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', hexBytes(deps.sha256(`kw new token\n${cookie}`)), 'AES-GCM', false, ['encrypt', 'decrypt']);
}

/** Keep `token` for the session of `cookie`; returns the id the redirect names. Expired ones are dropped on the way. */
export async function keepNewToken(deps: Pick<EngineDeps, 'storage' | 'clock' | 'sha256'>, cookie: string, token: string): Promise<string> {
  const now = deps.clock.now();
  const expired = (await deps.storage.listRecords<SealedToken>(NEW_TOKEN_COLLECTION)).filter((r) => r.value.expiresAt <= now);
  if (expired.length > 0) {
    await deps.storage.commit(expired.map((r) => ({ kind: 'record.delete' as const, collection: NEW_TOKEN_COLLECTION, key: r.key, expectedRevision: r.revision }))).catch(() => undefined);
  }
  const id = randomSecret();
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await sealKey(deps, cookie), new TextEncoder().encode(token)));
  const value: SealedToken = { iv: encodeBase64(iv), sealed: encodeBase64(sealed), expiresAt: now + NEW_TOKEN_TTL_MS };
  await deps.storage.commit([{ kind: 'record.put', collection: NEW_TOKEN_COLLECTION, key: deps.sha256(id), value, expectedRevision: null }]);
  return id;
}

/** The token kept under `id` for the session of `cookie`, once; undefined when unknown, used, expired or another session's. */
export async function takeNewToken(deps: Pick<EngineDeps, 'storage' | 'clock' | 'sha256'>, cookie: string, id: string | null): Promise<string | undefined> {
  if (id === null || !ID.test(id)) return undefined;
  const key = deps.sha256(id);
  const record = await deps.storage.getRecord<SealedToken>(NEW_TOKEN_COLLECTION, key);
  if (record === null) return undefined;
  let opened: ArrayBuffer;
  try {
    opened = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: Uint8Array.from(decodeBase64(record.value.iv)) }, await sealKey(deps, cookie), Uint8Array.from(decodeBase64(record.value.sealed)));
  } catch {
    return undefined; // another session's token: it stays for its own
  }
  // One use: the page that deletes it shows it (a racing reload loses the delete).
  const taken = await deps.storage
    .commit([{ kind: 'record.delete', collection: NEW_TOKEN_COLLECTION, key, expectedRevision: record.revision }])
    .then(() => true, () => false);
  if (!taken || record.value.expiresAt <= deps.clock.now()) return undefined;
  return new TextDecoder().decode(opened);
}
