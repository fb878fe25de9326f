/**
 * The twelve scopes of the contract's Authentication section.
 * @module
 */

/** Every scope a credential may hold. */
export const SCOPES = [
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
] as const;
export type Scope = (typeof SCOPES)[number];

const SCOPE_SET: ReadonlySet<string> = new Set(SCOPES);

/** True when `value` names one of the twelve scopes. */
export function isScope(value: string): value is Scope {
  return SCOPE_SET.has(value);
}
