/**
 * URI checks and canonical forms for proposal identifiers and sources.
 * @remarks Parsing is done by maintained libraries, not regular expressions: the WHATWG URL parser
 * (a web-standard global) for http and https, `fast-uri` (RFC 3986, with RFC 8141 URN support; the
 * URI library ajv uses) for URNs and other schemes. Canonical forms: http(s) as WHATWG `href`
 * (lowercase scheme and host, default port dropped, dot segments removed, IDN as punycode); URNs with
 * lowercase `urn` and NID; other schemes as fast-uri normalizes them.
 * @module
 */
import fastUri from 'fast-uri';

/** A canonical URI, or the reason the input is not one. */
export type UriResult = { ok: true; uri: string } | { ok: false; problem: string };

const MAX_URI = 2048;
/** Schemes that run or embed content rather than name something; refused everywhere. */
const UNSAFE_SCHEMES: ReadonlySet<string> = new Set(['javascript', 'vbscript', 'data', 'file', 'blob']);

function hasSpaceOrControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return true;
  }
  return false;
}

/**
 * Check an absolute URI and return its canonical form.
 * @param identifier true for entity identifiers: only HTTP, HTTPS or URN URIs are allowed.
 */
export function canonicalUri(value: string, identifier: boolean): UriResult {
  if (value.length === 0) return { ok: false, problem: 'must not be empty' };
  if (value.length > MAX_URI) return { ok: false, problem: `must be at most ${MAX_URI} characters` };
  if (hasSpaceOrControl(value)) return { ok: false, problem: 'must not contain spaces or control characters' };
  const parsed = fastUri.parse(value);
  if (parsed.error) return { ok: false, problem: `is not a valid URI (${parsed.error})` };
  const scheme = parsed.scheme?.toLowerCase();
  if (!scheme || parsed.reference === 'relative') return { ok: false, problem: 'must be an absolute URI with a scheme' };
  if (scheme === 'http' || scheme === 'https') {
    let url: URL;
    try {
      url = new URL(value);
    } catch (cause) {
      return { ok: false, problem: `is not a valid ${scheme.toUpperCase()} URL${cause instanceof Error ? ` (${cause.message})` : ''}` };
    }
    if (!url.hostname) return { ok: false, problem: 'needs a host' };
    return { ok: true, uri: url.href };
  }
  if (scheme === 'urn') {
    if (!parsed.nid || !(parsed.nss || parsed.uuid)) return { ok: false, problem: 'is not a valid URN: urn:<namespace>:<specific string>' };
    try {
      return { ok: true, uri: fastUri.serialize(parsed) };
    } catch (cause) {
      return { ok: false, problem: `is not a valid URN${cause instanceof Error ? ` (${cause.message})` : ''}` };
    }
  }
  if (identifier) return { ok: false, problem: 'must be an HTTP, HTTPS or URN URI' };
  if (UNSAFE_SCHEMES.has(scheme)) return { ok: false, problem: `must not use the ${scheme}: scheme` };
  return { ok: true, uri: fastUri.normalize(value) };
}
