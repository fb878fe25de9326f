/**
 * Credentials: creation (by the operator), bearer-token authentication, request budgets and the
 * Principal view.
 * @remarks Credentials are immutable once created, so a verified credential is cached in memory and
 * authentication does not touch storage again for it. Only a SHA-256 of each token is stored.
 * @module
 */
import { isoTimestamp } from '../clock.ts';
import type { Actor, EngineDeps } from '../deps.ts';
import { invalid, notFound, ServiceError, type FieldError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import { createBudgetLedger, type BudgetStatus } from './budgets.ts';
import type { Principal } from './principal-schema.ts';
import { isScope, type Scope } from './scopes.ts';
import { constantTimeEqual, credentialRefOfToken, displayPrefix, mintToken } from './tokens.ts';

/** Storage collection of credential records, keyed by credentialRef. */
export const CREDENTIAL_COLLECTION = 'credentials';

/** Limits of credential fields. */
export const CredentialLimits = {
  labelMax: 80,
  budgetMin: 1,
  budgetMax: 10_000,
  budgetDefault: 10_000,
  expiresInDaysMin: 1,
  expiresInDaysMax: 90,
  expiresInDaysDefault: 90,
  accountIdMax: 64,
} as const;

/** An account id: 1-64 characters, letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

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

export type { Principal } from './principal-schema.ts';

/** The credential service the engine exposes as `engine.credentials`. */
export interface CredentialService {
  /** Create a credential (operator only). NOT_FOUND when `documentRef` is not a document of the account. */
  create(input: CreateCredentialInput): Promise<CreatedCredential>;
  /**
   * The live credential a bearer token stands for. AUTH_REQUIRED (requiredAction authenticate) for a
   * malformed, unknown, wrong or expired token.
   */
  authenticate(token: string): Promise<Credential>;
  /** A credential by ref (no secret check), or null. */
  get(credentialRef: string): Promise<Credential | null>;
  /** Count one request against the budget; RATE_LIMITED (with retryAfterMs) when it is spent. Synchronous. */
  charge(credential: Credential): BudgetStatus;
  /** True when the storage is shared by processes: charges must go through {@link CredentialService.take}. */
  readonly sharedBudgets: boolean;
  /** Count one request atomically in the shared storage (exact across processes); RATE_LIMITED when spent. */
  take(credential: Credential): Promise<BudgetStatus>;
  /** The budget standing without charging. */
  budget(credential: Credential): BudgetStatus;
  /** The Principal view of a credential. */
  principal(credential: Credential, budget?: BudgetStatus): Principal;
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

/**
 * Build the credential service.
 * @param options.budgetWindowMs length of the request-budget window (24 hours by default).
 */
export function createCredentialService(deps: EngineDeps, options: { budgetWindowMs: number }): CredentialService {
  const { storage, clock, refs, sha256 } = deps;
  const cache = new Map<string, Credential>();
  const loading = new Map<string, Promise<Credential | null>>();
  const ledger = createBudgetLedger(storage, clock, options.budgetWindowMs, undefined, deps.reportError);

  async function load(credentialRef: string): Promise<Credential | null> {
    const cached = cache.get(credentialRef);
    if (cached) return cached;
    let pending = loading.get(credentialRef);
    if (!pending) {
      pending = (async () => {
        try {
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

  function browserHref(documentRef: string): string {
    return `${deps.baseUrl}/documents/${documentRef}`;
  }

  return {
    async create(input) {
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
        accountId: accountId ?? 'owner',
        label: input.label,
        scopes: [...new Set(input.scopes)] as Scope[],
        documentRef,
        spaceRef,
        requestBudget: input.requestBudget ?? CredentialLimits.budgetDefault,
        createdAt,
        expiresAt: createdAt + (input.expiresInDays ?? CredentialLimits.expiresInDaysDefault) * DAY_MS,
        tokenSha256: sha256(token),
      };
      await storage.commit([{ kind: 'record.put', collection: CREDENTIAL_COLLECTION, key: credentialRef, value: record, expectedRevision: null }]);
      const credential = hydrate(record);
      cache.set(credentialRef, credential);
      await ledger.load(credential);
      return { token, credential };
    },

    async authenticate(token) {
      const credentialRef = credentialRefOfToken(token);
      if (!credentialRef) throw authRequired('The bearer token is malformed.');
      const credential = await load(credentialRef);
      if (!credential || !constantTimeEqual(sha256(token), credential.tokenSha256)) {
        throw authRequired('The bearer token is not valid.');
      }
      if (clock.now() >= credential.expiresAt) throw authRequired('The bearer token has expired; create a new one.');
      return credential;
    },

    get: load,

    charge: (credential) => ledger.charge(credential),
    sharedBudgets: ledger.shared,
    take: (credential) => ledger.take(credential),
    budget: (credential) => ledger.status(credential),

    principal(credential, budget) {
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
        p.browserHref = browserHref(credential.documentRef);
      }
      p.budgets = { request: { limit: b.limit, remaining: b.remaining, windowMs: b.windowEnd - b.windowStart, resetsAt: isoTimestamp(b.windowEnd) } };
      return p;
    },

    flush: () => ledger.flush(),
  };
}
