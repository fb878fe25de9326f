/**
 * Canonical JSON: object keys sorted at every level, no whitespace, undefined members dropped. What
 * the service measures (the acceptance contract's size) and fingerprints (idempotency of bodies whose
 * key order is not meaningful).
 * @module
 */

/** JSON with object keys sorted at every level and no whitespace: the canonical form that is measured. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
