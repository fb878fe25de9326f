/**
 * The bearer header's grammar, once for every surface (the API, the operator API, MCP, the live
 * co-editing upgrade, the browser app and the request inspector).
 * @remarks `Authorization: Bearer <token>`: the scheme in any case, one or more spaces, the token (any
 * run of non-space characters; the credential lookup decides whether it exists), optional trailing
 * spaces. RFC 6750 §2.1 names one space; proxies and hand-written clients send more, and a token
 * can never contain a space, so accepting them is unambiguous.
 * @module
 */

const BEARER = /^Bearer +(\S+) *$/i;
const BEARER_SCHEME = /^bearer(?:\s|$)/i;

/** The token of an `Authorization` header of the bearer scheme, or null (absent, another scheme, malformed). */
export function bearerToken(authorization: string | undefined): string | null {
  if (authorization === undefined) return null;
  const m = BEARER.exec(authorization);
  return m === null ? null : m[1]!;
}

/** True when the header names the bearer scheme at all (well-formed or not): a credential was offered. */
export function namesBearerScheme(authorization: string | undefined): boolean {
  return authorization !== undefined && BEARER_SCHEME.test(authorization);
}
