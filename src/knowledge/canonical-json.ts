/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, as `JSON.stringify` writes
 * strings and numbers. Projections and graph digests are computed over it, so a client can recompute
 * them (`JSON.stringify` of the parsed value keeps the sorted order: no key is an array index).
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
