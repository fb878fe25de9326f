/**
 * The request inspector's memory: the last requests of each token, bounded per token and in the
 * number of tokens, so its memory never grows with traffic.
 * @remarks It keeps what a person needs to match a client's error to the server's view — method,
 * path (query values dropped, token-shaped text masked), status, error code, duration and request id —
 * and never headers or bodies. Tokens are told apart by the credentialRef embedded in the bearer token,
 * without verifying it: a request with a wrong secret is listed under the credential it claimed, which
 * is what its owner wants to see. But requests refused for their credential (401 AUTH_REQUIRED:
 * unknown, wrong secret, revoked, expired) are kept apart, in a ring of their own per credential
 * (`perRefused`, 10) and over their own set of credentials: anyone may send them naming a real
 * credentialRef, and they never push out the requests the token itself made. Per process: a request
 * answered by another process sharing the storage shows in that process's inspector.
 * @module
 */
import { credentialRefOfToken } from '../../src/auth/tokens.ts';
import { bearerToken } from '../../src/contract/bearer.ts';

/** One request as the inspector shows it. */
export interface InspectedRequest {
  /** Epoch ms the answer was ready. */
  at: number;
  credentialRef: string;
  method: string;
  path: string;
  status: number;
  errorCode: string | null;
  durationMs: number;
  requestId: string;
}

/** What the inspector needs of an answered request: the API handler's `onResponse` event fits. */
export interface AnsweredRequest {
  request: { method: string; url: string; headers: Record<string, string> };
  response: { status: number };
  requestId: string;
  errorCode: string | null;
  durationMs: number;
}

/** Limits of {@link RequestInspector}. */
export interface InspectorLimits {
  /** Requests kept per token (default 50). */
  perToken?: number;
  /** Tokens kept; the one heard from least recently is dropped first (default 200). */
  tokens?: number;
  /** Refused requests (401 AUTH_REQUIRED) kept per claimed credential, apart from the others (default 10). */
  perRefused?: number;
}

const TOKEN_LIKE = /(svc_agent_v1_scred_)[A-Za-z0-9_-]+/g;

/** A bounded, per-token ring of recent requests. */
export class RequestInspector {
  private readonly byToken = new Map<string, InspectedRequest[]>();
  /** Requests refused for their credential, by the credentialRef they claimed (bounded the same way). */
  private readonly refused = new Map<string, InspectedRequest[]>();
  private readonly perToken: number;
  private readonly perRefused: number;
  private readonly maxTokens: number;

  constructor(limits: InspectorLimits = {}) {
    this.perToken = Math.max(1, limits.perToken ?? 50);
    this.perRefused = Math.max(1, limits.perRefused ?? 10);
    this.maxTokens = Math.max(1, limits.tokens ?? 200);
  }

  /**
   * Note one answered request; requests without a bearer token are not kept.
   * @param event what the API handler's `onResponse` reports.
   */
  record(event: AnsweredRequest, now: number): void {
    const token = bearerToken(event.request.headers.authorization);
    const credentialRef = token === null ? null : credentialRefOfToken(token);
    if (credentialRef === null) return;
    const url = event.request.url;
    const q = url.indexOf('?');
    const path = (q === -1 ? url : url.slice(0, q)).slice(0, 300).replace(TOKEN_LIKE, '$1***');
    const refused = event.errorCode === 'AUTH_REQUIRED';
    const rings = refused ? this.refused : this.byToken;
    const per = refused ? this.perRefused : this.perToken;
    let list = rings.get(credentialRef);
    if (list) rings.delete(credentialRef); // re-inserted below: most recent last
    else list = [];
    list.push({ at: now, credentialRef, method: event.request.method.slice(0, 10), path, status: event.response.status, errorCode: event.errorCode, durationMs: Math.round(event.durationMs * 10) / 10, requestId: event.requestId });
    if (list.length > per) list.splice(0, list.length - per);
    rings.set(credentialRef, list);
    if (rings.size > this.maxTokens) rings.delete(rings.keys().next().value!);
  }

  /**
   * Requests of the given tokens, newest first, optionally of one token and one status or status
   * class (`"4xx"`).
   */
  list(credentialRefs: ReadonlySet<string>, filter: { credentialRef?: string | undefined; status?: string | undefined } = {}, limit = 200): InspectedRequest[] {
    const out: InspectedRequest[] = [];
    const status = filter.status;
    const matches = (s: number) => {
      if (!status) return true;
      if (/^[1-5]xx$/.test(status)) return Math.floor(s / 100) === Number(status[0]);
      return String(s) === status;
    };
    for (const rings of [this.byToken, this.refused]) {
      for (const [ref, list] of rings) {
        if (!credentialRefs.has(ref) || (filter.credentialRef && filter.credentialRef !== ref)) continue;
        for (const r of list) if (matches(r.status)) out.push(r);
      }
    }
    out.sort((a, b) => b.at - a.at || (a.requestId < b.requestId ? 1 : -1));
    return out.slice(0, limit);
  }

  /** How many requests are held (for tests of the bounds). */
  get size(): number {
    let n = 0;
    for (const rings of [this.byToken, this.refused]) for (const list of rings.values()) n += list.length;
    return n;
  }
}
