/**
 * Credentials: creation (by the operator), bearer-token authentication, request budgets and the
 * Principal view.
 * @remarks A credential changes once at most: when it is revoked. A verified credential is cached in
 * memory and authentication does not touch storage again for it; the cache follows the stored record
 * through the storage's change notification (`subscribe`), so a revocation made by any process sharing
 * the storage reaches every process's cache. Only a SHA-256 of each token is stored.
 * @module
 */
import { DEFAULT_LOCAL_ACCOUNT } from '../actor.ts';
import { isoTimestamp } from '../clock.ts';
import type { EngineDeps } from '../deps.ts';
import type { Actor } from '../actor.ts';
import { invalid, notFound, ServiceError, type FieldError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import { isStorageConflict, recordTopic, type BatchOp } from '../ports.ts';
import { canonicalJson } from '../canonical-json.ts';
import { IdempotencyStore, OPERATOR_KEY_OWNER, createdReceipt, requireIdempotencyKey, newReceiptRef, replayedReceipt, writeScope, type IdempotencyRecord, type WriteReceipt } from '../idempotency/idempotency.ts';
import { createBudgetLedger, type BudgetStatus } from './budgets.ts';
import type { Principal } from './principal-schema.ts';
import { isScope, type Scope } from './scopes.ts';
import { constantTimeEqual, credentialRefOfToken, displayPrefix, mintToken } from './tokens.ts';

/** Storage collection of credential records, keyed by credentialRef. */
export const CREDENTIAL_COLLECTION = 'credentials';

export { ACCOUNT_ID_PATTERN, CredentialLimits } from './credential-schema.ts';
import { ACCOUNT_ID_PATTERN, CredentialLimits } from './credential-schema.ts';

const DAY_MS = 86_400_000;

/** A credential as stored (immutable). Times are epoch milliseconds. */
export interface CredentialRecord {
  v: 1;
  credentialRef: string;
  accountId: string;
  label: string;
  scopes: Scope[];
  /** The one document a document-bound credential may see; null for an account-wide credential. */
  documentRef: string | null;
  /** The bound document's space; null for an account-wide credential. */
  spaceRef: string | null;
  requestBudget: number;
  createdAt: number;
  expiresAt: number;
  /** Lowercase hex SHA-256 of the whole token. */
  tokenSha256: string;
  /** When the person revoked it (epoch ms); absent or null while it is live. */
  revokedAt?: number | null;
}

/** A verified credential, as the API layer holds it for one request. */
export interface Credential extends CredentialRecord {
  readonly scopeSet: ReadonlySet<string>;
  /** The engine actor of this credential. */
  readonly actor: Actor;
}

/** Input of {@link CredentialService.create}; the API edge validates shapes, the service re-checks ranges. */
export interface CreateCredentialInput {
  /** Owning account; default: the bound document's account, else `owner`. */
  accountId?: string | undefined;
  label: string;
  scopes: readonly string[];
  documentRef?: string | null | undefined;
  requestBudget?: number | undefined;
  expiresInDays?: number | undefined;
}

/** Result of {@link CredentialService.create}: the token is shown this once. */
export interface CreatedCredential {
  token: string;
  credential: Credential;
}

/** Result of {@link CredentialService.createOnce}: the token on the first application only. */
export interface KeyedCredential {
  token: string | null;
  credential: Credential;
  receipt: WriteReceipt;
}

export type { Principal } from './principal-schema.ts';

/** The credential service the engine exposes as `engine.credentials`. */
export interface CredentialService {
  /** Create a credential (operator only). NOT_FOUND when `documentRef` is not a document of the account. */
  create(input: CreateCredentialInput): Promise<CreatedCredential>;
  /**
   * {@link CredentialService.create} under the operator's idempotency key. An exact repeat answers
   * the credential it created, as it is now, with `token: null`: the token is shown once, and only
   * its hash is stored.
   */
  createOnce(input: CreateCredentialInput, idempotencyKey: string): Promise<KeyedCredential>;
  /**
   * The live credential a bearer token stands for. AUTH_REQUIRED (requiredAction authenticate) for a
   * malformed, unknown, wrong or expired token.
   */
  authenticate(token: string): Promise<Credential>;
  /** A credential by ref (no secret check), or null. */
  get(credentialRef: string): Promise<Credential | null>;
  /** The credentials of an account (revoked and expired ones included), newest first. */
  listOfAccount(accountId: string): Promise<Credential[]>;
  /**
   * Revoke a credential of `accountId`: its token answers AUTH_REQUIRED from then on, in every process
   * sharing the storage. Revoking a revoked credential changes nothing. NOT_FOUND for a credential of
   * another account or none.
   */
  revoke(accountId: string, credentialRef: string): Promise<Credential>;
  /** Count one request against the budget; RATE_LIMITED (with retryAfterMs) when it is spent. Synchronous. */
  charge(credential: Credential): BudgetStatus;
  /** True when the storage is shared by processes: charges must go through {@link CredentialService.take}. */
  readonly sharedBudgets: boolean;
  /** Count one request atomically in the shared storage (exact across processes); RATE_LIMITED when spent. */
  take(credential: Credential): Promise<BudgetStatus>;
  /** The budget standing without charging. */
  budget(credential: Credential): BudgetStatus;
  /** The Principal view of a credential. */
  principal(credential: Credential, budget?: BudgetStatus, researchRuns?: { limit: number; remaining: number } | null): Principal;
  /** Persist pending budget counters. */
  flush(): Promise<void>;
}

function authRequired(message: string): ServiceError {
  return new ServiceError('AUTH_REQUIRED', message, { requiredAction: 'authenticate' });
}

function hydrate(record: CredentialRecord): Credential {
  return {
    ...record,
    scopeSet: new Set(record.scopes),
    actor: { accountId: record.accountId, credentialRef: record.credentialRef, documentRef: record.documentRef },
  };
}

function checkInput(input: CreateCredentialInput): FieldError[] {
  const errors: FieldError[] = [];
  const { label, scopes, requestBudget, expiresInDays, accountId, documentRef } = input;
  if (typeof label !== 'string' || label.length < 1 || label.length > CredentialLimits.labelMax) {
    errors.push({ field: 'label', message: `must be 1-${CredentialLimits.labelMax} characters` });
  }
  if (!Array.isArray(scopes) || scopes.length < 1) {
    errors.push({ field: 'scopes', message: 'must list at least one scope' });
  } else {
    scopes.forEach((s, i) => {
      if (typeof s !== 'string' || !isScope(s)) errors.push({ field: `scopes.${i}`, message: 'is not a known scope' });
    });
  }
  if (
    requestBudget !== undefined &&
    (!Number.isInteger(requestBudget) || requestBudget < CredentialLimits.budgetMin || requestBudget > CredentialLimits.budgetMax)
  ) {
    errors.push({ field: 'requestBudget', message: 'must be an integer from 1 to 10000' });
  }
  if (
    expiresInDays !== undefined &&
    (!Number.isInteger(expiresInDays) || expiresInDays < CredentialLimits.expiresInDaysMin || expiresInDays > CredentialLimits.expiresInDaysMax)
  ) {
    errors.push({ field: 'expiresInDays', message: 'must be an integer from 1 to 90' });
  }
  if (accountId !== undefined && (typeof accountId !== 'string' || !ACCOUNT_ID_PATTERN.test(accountId))) {
    errors.push({ field: 'account', message: 'must be 1-64 letters, digits, dots, underscores or hyphens, starting with a letter or digit' });
  }
  if (documentRef !== undefined && documentRef !== null && (typeof documentRef !== 'string' || !Patterns.documentRef.test(documentRef))) {
    errors.push({ field: 'documentRef', message: 'must be a documentRef (sdoc_ and 48 lowercase hex)' });
  }
  return errors;
}

/** How many verified tokens authentication remembers, so a token is hashed once, not per request. */
const VERIFIED_TOKENS_MAX = 1024;

/**
 * Build the credential service.
 * @param options.budgetWindowMs length of the request-budget window (24 hours by default).
 */
export function createCredentialService(deps: EngineDeps, options: { budgetWindowMs: number; idempotency?: IdempotencyStore | undefined }): CredentialService {
  const { storage, clock, refs, sha256 } = deps;
  const idem = options.idempotency ?? new IdempotencyStore(storage, clock, { onError: deps.reportError });
  const cache = new Map<string, Credential>();
  /** Tokens whose SHA-256 matched, and the credential they matched (the oldest dropped past the bound). */
  const verified = new Map<string, Credential>();
  const loading = new Map<string, Promise<Credential | null>>();
  const watched = new Set<string>();
  /** Drop the cached credential whenever its stored record changes (a revocation, in any process). */
  function watch(credentialRef: string): void {
    if (watched.has(credentialRef)) return;
    storage.subscribe(recordTopic(CREDENTIAL_COLLECTION, credentialRef), () => cache.delete(credentialRef));
    watched.add(credentialRef);
  }
  const ledger = createBudgetLedger(storage, clock, options.budgetWindowMs, undefined, deps.reportError);

  async function load(credentialRef: string): Promise<Credential | null> {
    const cached = cache.get(credentialRef);
    if (cached) return cached;
    let pending = loading.get(credentialRef);
    if (!pending) {
      pending = (async () => {
        try {
          watch(credentialRef); // before the read, so a change racing the read still drops the entry
          const stored = await storage.getRecord<CredentialRecord>(CREDENTIAL_COLLECTION, credentialRef);
          if (!stored) return null;
          const credential = hydrate(stored.value);
          await ledger.load(credential);
          cache.set(credentialRef, credential);
          return credential;
        } finally {
          loading.delete(credentialRef);
        }
      })();
      loading.set(credentialRef, pending);
    }
    return pending;
  }

  /** Create a credential; `recordOp` adds the idempotency record of a keyed creation to its batch. */
  async function createWith(input: CreateCredentialInput, recordOp: ((record: CredentialRecord) => BatchOp) | null): Promise<CreatedCredential> {
    const errors = checkInput(input);
    if (errors.length) throw invalid('The credential request is invalid.', errors);
    let accountId = input.accountId;
    let documentRef: string | null = null;
    let spaceRef: string | null = null;
    if (input.documentRef) {
      const head = await storage.getDocumentHead(input.documentRef);
      if (!head || (accountId !== undefined && head.accountId !== accountId)) throw notFound('Document');
      accountId = head.accountId;
      documentRef = head.documentRef;
      spaceRef = head.spaceRef;
    }
    const createdAt = clock.now();
    const credentialRef = refs.credentialRef();
    const token = mintToken(credentialRef);
    const record: CredentialRecord = {
      v: 1,
      credentialRef,
      accountId: accountId ?? DEFAULT_LOCAL_ACCOUNT,
      label: input.label,
      scopes: [...new Set(input.scopes)] as Scope[],
      documentRef,
      spaceRef,
      requestBudget: input.requestBudget ?? CredentialLimits.budgetDefault,
      createdAt,
      expiresAt: createdAt + (input.expiresInDays ?? CredentialLimits.expiresInDaysDefault) * DAY_MS,
      tokenSha256: sha256(token),
    };
    const put: BatchOp = { kind: 'record.put', collection: CREDENTIAL_COLLECTION, key: credentialRef, value: record, expectedRevision: null };
    await storage.commit(recordOp ? [put, recordOp(record)] : [put]);
    const credential = hydrate(record);
    watch(credentialRef);
    cache.set(credentialRef, credential);
    await ledger.load(credential);
    return { token, credential };
  }

  return {
    create: (input) => createWith(input, null),

    async createOnce(input, idempotencyKey) {
      const scope = writeScope('credential.create', OPERATOR_KEY_OWNER, requireIdempotencyKey(idempotencyKey));
      const errors = checkInput(input);
      if (errors.length) throw invalid('The credential request is invalid.', errors);
      const fingerprint = sha256(canonicalJson({ ...input, scopes: [...input.scopes] }));
      const receiptRef = newReceiptRef(deps.ids);
      return idem.run(
        scope,
        fingerprint,
        async (): Promise<KeyedCredential> => {
          const created = await createWith(input, (record) => idem.recordOp(scope, { fingerprint, receiptRef, createdAt: record.createdAt, result: { credentialRef: record.credentialRef } }));
          return { ...created, receipt: createdReceipt(receiptRef) };
        },
        async (record: IdempotencyRecord<{ credentialRef: string }>): Promise<KeyedCredential> => {
          const credential = await load(record.result.credentialRef);
          if (!credential) throw new Error(`an idempotency record names the missing credential ${record.result.credentialRef}`);
          return { token: null, credential, receipt: replayedReceipt(record) };
        },
      );
    },

    async authenticate(token) {
      let credential: Credential | null | undefined = verified.get(token);
      // A verified token stands for its credential while the credential cache holds that very object:
      // a revocation (in any process) drops the cache entry, and with it every token verified against it.
      if (credential === undefined || cache.get(credential.credentialRef) !== credential) {
        const credentialRef = credentialRefOfToken(token);
        if (!credentialRef) throw authRequired('The bearer token is malformed.');
        credential = await load(credentialRef);
        if (!credential || !constantTimeEqual(sha256(token), credential.tokenSha256)) {
          throw authRequired('The bearer token is not valid.');
        }
        if (verified.size >= VERIFIED_TOKENS_MAX) verified.delete(verified.keys().next().value!);
        verified.set(token, credential);
      }
      if (credential.revokedAt) throw authRequired('The bearer token was revoked; create a new one.');
      if (clock.now() >= credential.expiresAt) throw authRequired('The bearer token has expired; create a new one.');
      return credential;
    },

    get: load,

    async listOfAccount(accountId) {
      const records = await storage.listRecords<CredentialRecord>(CREDENTIAL_COLLECTION);
      return records
        .filter((r) => r.value.accountId === accountId)
        .map((r) => hydrate(r.value))
        .sort((a, b) => b.createdAt - a.createdAt || (a.credentialRef < b.credentialRef ? 1 : -1));
    },

    async revoke(accountId, credentialRef) {
      for (;;) {
        const stored = Patterns.credentialRef.test(credentialRef) ? await storage.getRecord<CredentialRecord>(CREDENTIAL_COLLECTION, credentialRef) : null;
        if (!stored || stored.value.accountId !== accountId) throw notFound('Credential');
        if (stored.value.revokedAt) return hydrate(stored.value);
        const record: CredentialRecord = { ...stored.value, revokedAt: clock.now() };
        try {
          await storage.commit([{ kind: 'record.put', collection: CREDENTIAL_COLLECTION, key: credentialRef, value: record, expectedRevision: stored.revision }]);
        } catch (e) {
          if (isStorageConflict(e)) continue;
          throw e;
        }
        cache.delete(credentialRef);
        return hydrate(record);
      }
    },

    charge: (credential) => ledger.charge(credential),
    sharedBudgets: ledger.shared,
    take: (credential) => ledger.take(credential),
    budget: (credential) => ledger.status(credential),

    principal(credential, budget, researchRuns) {
      const b = budget ?? ledger.status(credential);
      const p: Principal = {
        v: 1,
        credentialRef: credential.credentialRef,
        displayPrefix: displayPrefix(credential.credentialRef),
        label: credential.label,
        scopes: credential.scopes,
        requestBudget: credential.requestBudget,
        remainingBudget: b.remaining,
        expiresAt: isoTimestamp(credential.expiresAt),
      };
      if (credential.spaceRef) p.spaceRef = credential.spaceRef;
      if (credential.documentRef) {
        p.documentRef = credential.documentRef;
        p.browserHref = deps.links.documentPage(credential.documentRef);
      }
      p.budgets = {
        request: { limit: b.limit, remaining: b.remaining, windowMs: b.windowEnd - b.windowStart, resetsAt: isoTimestamp(b.windowEnd) },
        researchRuns: researchRuns ?? null,
      };
      return p;
    },

    flush: () => ledger.flush(),
  };
}
