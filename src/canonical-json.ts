/**
 * Canonical JSON: object keys sorted by code unit at every level, no whitespace, undefined members
 * dropped, as `JSON.stringify` writes strings and numbers. What the service measures (the acceptance
 * contract's size), fingerprints (bodies whose key order is not meaningful) and digests (projections
 * and graph revisions, so a client can recompute them).
 * @module
 */

/** Serialize a JSON value canonically. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((x) => canonicalJson(x === undefined ? null : x)).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}
