/**
 * The black-box client of the API scenario suite ({@link ./suite.ts}): a thin `fetch` wrapper,
 * the contract's formats as regular expressions, and envelope validators. Written only from
 * the published contract and the documented choices (docs/http-api.md); it knows nothing of the server's code.
 * @remarks Its lists (scopes, error codes, required actions, formats) and small helpers deliberately
 * repeat what the server declares: an independent client must not import the code it checks, so
 * `duplicates` pairs between this file and src/ are intended.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';


/** What a transport hands the suite. */
export interface ScenarioTarget {
  fetch: typeof fetch;
  /** Origin of the service, without a trailing slash; paths are appended as they are. */
  baseUrl: string;
  operatorKey: string;
  teardown(): Promise<void>;
}

/** One answer as the scenarios inspect it. */
export interface Reply {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** Options of {@link ScenarioClient.call}. */
export interface CallOptions {
  token?: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is (Content-Type application/json unless given). */
  rawBody?: string;
  /** Idempotency-Key. */
  key?: string;
  /** Service-If-Revision. */
  revision?: string;
  /** Send the body as a stream of 16 KB chunks (no Content-Length; chunked over HTTP/1.1). */
  chunked?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Formats (the contract, "Identifier and value formats")

export const F = {
  credentialRef: /^scred_[a-f0-9]{24}$/,
  displayPrefix: /^svc_agent_v1_scred_[a-f0-9]{8}\u2026$/,
  token: /^svc_agent_v1_scred_([a-f0-9]{24})_[A-Za-z0-9_-]{32,}$/,
  spaceRef: /^ksp_[a-f0-9]{48}$/,
  documentRef: /^sdoc_[a-f0-9]{48}$/,
  operationRef: /^docop_[a-f0-9]{48}$/,
  sha256: /^[a-f0-9]{64}$/,
  blockId: /^[A-Za-z0-9][A-Za-z0-9._:$-]{0,127}$/,
  requestId: /^[A-Za-z0-9][A-Za-z0-9_-]{15,127}$/,
  receiptRef: /^[A-Za-z0-9][A-Za-z0-9_-]{15,159}$/,
  timestamp: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
  fieldErrorField: /^(\$|[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*)$/,
  linkRel: /^[a-z]+(-[a-z]+)*$/,
  weakEtag: /^W\/"[^"]*"$/,
} as const;

export const ERROR_CODES = new Set([
  'INVALID_REQUEST',
  'AUTH_REQUIRED',
  'AUTH_AMBIGUOUS',
  'FORBIDDEN',
  'NOT_FOUND',
  'IDEMPOTENCY_REQUIRED',
  'IDEMPOTENCY_CONFLICT',
  'PRECONDITION_REQUIRED',
  'PRECONDITION_FAILED',
  'CONFLICT',
  'RATE_LIMITED',
  'TEMPORARILY_UNAVAILABLE',
  'AGENT_RUN_REQUIRED',
  'JOB_FAILED',
  'INTERNAL_ERROR',
  // emitted although the enum omits them
  'REPORT_NOT_READY',
  'METHOD_NOT_ALLOWED',
  'FEATURE_RETIRED',
]);

export const REQUIRED_ACTIONS = new Set([
  'authenticate',
  'choose-new-idempotency-key',
  'refresh-resource',
  'retry-job',
  'review-in-browser',
  'submit-through-research-job',
]);

/** Every scope of the contract's Authentication section. */
export const ALL_SCOPES = [
  'document:create',
  'document:read',
  'document:write',
  'inquiry:create',
  'knowledge:propose',
  'knowledge:read',
  'public:read',
  'research:read',
  'research:run',
  'review:read',
  'library:read',
  'library:write',
];
export const DOC_SCOPES = ['document:create', 'document:read', 'document:write'];

export const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** A fresh Idempotency-Key (25 characters). */
export const newKey = (): string => `k${randomBytes(12).toString('hex')}`;
export const hex = (n: number): string => randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n);
export const a36 = (n: number): string => Array.from({ length: n }, () => '0123456789abcdefghijklmnopqrstuvwxyz'[Math.floor(Math.random() * 36)]).join('');

// ---------------------------------------------------------------------------------------------
// Envelope validation (the contract, "Success envelope" and "Error envelope")

function linkProblems(links: unknown): string[] {
  if (!Array.isArray(links)) return ['links is not an array'];
  const p: string[] = [];
  if (links.length > 16) p.push(`links has ${links.length} items (max 16)`);
  for (const l of links) {
    if (!isObject(l)) p.push('a link is not an object');
    else {
      if (typeof l.href !== 'string' || l.href.length > 2048) p.push(`link href ${JSON.stringify(l.href)}`);
      if (typeof l.rel !== 'string' || l.rel.length < 1 || l.rel.length > 64 || !F.linkRel.test(l.rel)) p.push(`link rel ${JSON.stringify(l.rel)}`);
    }
  }
  return p;
}

/** Problems of an ApiError value (empty when it conforms). */
export function apiErrorProblems(e: unknown): string[] {
  if (!isObject(e)) return ['error is not an object'];
  const p: string[] = [];
  if (typeof e.code !== 'string' || !ERROR_CODES.has(e.code)) p.push(`error.code ${JSON.stringify(e.code)} is not a contract code`);
  if (typeof e.message !== 'string' || e.message.length > 2048) p.push('error.message is not a string of at most 2048 chars');
  if (typeof e.retryable !== 'boolean') p.push('error.retryable is not a boolean');
  if ('fieldErrors' in e) {
    if (!Array.isArray(e.fieldErrors) || e.fieldErrors.length > 32) p.push('error.fieldErrors is not an array of at most 32');
    else
      for (const fe of e.fieldErrors) {
        if (!isObject(fe)) p.push('a fieldError is not an object');
        else {
          if (typeof fe.field !== 'string' || fe.field.length < 1 || fe.field.length > 256 || !F.fieldErrorField.test(fe.field))
            p.push(`fieldError.field ${JSON.stringify(fe.field)} does not match $ or dotted names`);
          if (typeof fe.message !== 'string' || fe.message.length > 1024) p.push('fieldError.message is not a string of at most 1024 chars');
        }
      }
  }
  if ('requiredAction' in e && !REQUIRED_ACTIONS.has(e.requiredAction)) p.push(`error.requiredAction ${JSON.stringify(e.requiredAction)} not in enum`);
  if ('retryAfterMs' in e && !(Number.isInteger(e.retryAfterMs) && e.retryAfterMs >= 0 && e.retryAfterMs <= 86_400_000)) {
    p.push(`error.retryAfterMs ${JSON.stringify(e.retryAfterMs)} is not an integer 0-86400000`);
  }
  return p;
}

/** True when this answer should carry the JSON envelope of the /api/v1 surface. */
export function isEnvelopeReply(r: Reply): boolean {
  if (!r.path.startsWith('/api/v1')) return false;
  if (r.status === 304 || r.status === 204) return false;
  return /^application\/json/i.test(r.headers.get('content-type') ?? '');
}

/** Problems of an /api/v1 JSON answer's envelope (empty when it conforms). */
export function envelopeProblems(r: Reply): string[] {
  const p: string[] = [];
  const j = r.json;
  if (!isObject(j)) return ['body is not a JSON object'];
  const meta = j.meta;
  if (!isObject(meta)) p.push('meta missing');
  else {
    if (meta.apiVersion !== '1') p.push(`meta.apiVersion is ${JSON.stringify(meta.apiVersion)}, not "1"`);
    if (typeof meta.requestId !== 'string' || !F.requestId.test(meta.requestId)) p.push(`meta.requestId ${JSON.stringify(meta.requestId)} has the wrong format`);
    const header = r.headers.get('x-request-id');
    if (header !== meta.requestId) p.push(`X-Request-Id header ${JSON.stringify(header)} differs from meta.requestId`);
  }
  if (r.status >= 400) {
    for (const k of Object.keys(j)) if (k !== 'error' && k !== 'meta') p.push(`error envelope has extra member ${k}`);
    p.push(...apiErrorProblems(j.error));
  } else {
    for (const k of Object.keys(j)) if (!['data', 'meta', 'links', 'receipt'].includes(k)) p.push(`success envelope has extra member ${k}`);
    if (!isObject(j.data)) p.push('data is not an object');
    if ('links' in j) p.push(...linkProblems(j.links));
    if ('receipt' in j) {
      const rc = j.receipt;
      if (!isObject(rc)) p.push('receipt is not an object');
      else {
        if (rc.idempotency !== 'created' && rc.idempotency !== 'replayed') p.push(`receipt.idempotency ${JSON.stringify(rc.idempotency)}`);
        if (typeof rc.receiptRef !== 'string' || !F.receiptRef.test(rc.receiptRef)) p.push(`receipt.receiptRef ${JSON.stringify(rc.receiptRef)}`);
        if (rc.v !== 1) p.push('receipt.v is not 1');
      }
    }
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// The client

/** Calls the service through the target's `fetch` and records every answer. */
export class ScenarioClient {
  readonly seen: Reply[] = [];
  private accounts = 0;

  /** @param resolve - gives the target once the suite has set it up. */
  constructor(private readonly resolve: () => ScenarioTarget) {}

  get target(): ScenarioTarget {
    return this.resolve();
  }

  async call(method: string, path: string, o: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) headers[k.toLowerCase()] = v;
    if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
    if (o.key !== undefined) headers['idempotency-key'] = o.key;
    if (o.revision !== undefined) headers['service-if-revision'] = o.revision;
    let body: string | undefined;
    if (o.rawBody !== undefined) body = o.rawBody;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const init: RequestInit & { duplex?: 'half' } = { method, headers };
    if (body !== undefined && o.chunked) {
      const bytes = new TextEncoder().encode(body);
      let at = 0;
      init.body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (at >= bytes.byteLength) controller.close();
          else {
            controller.enqueue(bytes.slice(at, at + 16_384));
            at += 16_384;
          }
        },
      });
      init.duplex = 'half';
    } else if (body !== undefined) init.body = body;
    const res = await this.target.fetch(`${this.target.baseUrl}${path}`, init);
    const text = await res.text();
    let json: any = undefined;
    if (/json/i.test(res.headers.get('content-type') ?? '') && text) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    const reply: Reply = { method, path, status: res.status, headers: res.headers, text, json };
    this.seen.push(reply);
    return reply;
  }

  /** A fresh account name, so scenarios do not see each other's documents. */
  account(): string {
    return `acct-${++this.accounts}-${hex(6)}`;
  }

  /** Create a credential through the operator API exactly as docs/http-api.md describes; returns the 201 data. */
  async credential(spec: {
    scopes: string[];
    account?: string;
    label?: string;
    documentRef?: string;
    requestBudget?: number;
    expiresInDays?: number;
  }): Promise<Record<string, any> & { token: string; credentialRef: string }> {
    const r = await this.call('POST', '/operator/v1/credentials', {
      token: this.target.operatorKey,
      body: { label: 'scenario', ...spec },
    });
    if (r.status !== 201) throw new Error(`credential creation answered ${r.status}: ${r.text}`);
    return r.json.data;
  }

  /** An account-wide credential of a fresh account with the given scopes. */
  async token(scopes: string[] = DOC_SCOPES, extra: { account?: string; requestBudget?: number } = {}): Promise<string> {
    const data = await this.credential({ scopes, account: extra.account ?? this.account(), ...(extra.requestBudget ? { requestBudget: extra.requestBudget } : {}) });
    return data.token;
  }

  async operator(path: string, body: unknown): Promise<Reply> {
    return this.call('POST', path, { token: this.target.operatorKey, body });
  }
}
