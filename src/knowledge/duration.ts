/**
 * ISO 8601 durations as proposal facts carry them: `PnYnMnDTnHnMnS` (any non-empty subset, time
 * components after `T`) or `PnW` alone; only the last component may carry a decimal fraction (`.` or
 * `,`). Negative durations are not ISO 8601 and are refused.
 * @module
 */

const DURATION = /^P(?:(\d+(?:[.,]\d+)?)Y)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)D)?(?:T(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/;
/**
 * The shape the published schema checks (components in order, something after P and after T); the
 * rule that only the last component may be fractional is checked by {@link isIsoDuration}.
 */
export const DURATION_SHAPE = /^P(?!$)(?:\d+(?:[.,]\d+)?Y)?(?:\d+(?:[.,]\d+)?M)?(?:\d+(?:[.,]\d+)?W)?(?:\d+(?:[.,]\d+)?D)?(?:T(?=\d)(?:\d+(?:[.,]\d+)?H)?(?:\d+(?:[.,]\d+)?M)?(?:\d+(?:[.,]\d+)?S)?)?$/;
const WEEKS = /^P\d+(?:[.,]\d+)?W$/;

/** True when `value` is an ISO 8601 duration (2-128 characters). */
export function isIsoDuration(value: string): boolean {
  if (value.length < 2 || value.length > 128) return false;
  if (WEEKS.test(value)) return true;
  const m = DURATION.exec(value);
  if (!m) return false;
  if (value.endsWith('T')) return false;
  const parts = m.slice(1).filter((p): p is string => p !== undefined);
  if (parts.length === 0) return false;
  // only the smallest given component may be fractional
  return parts.slice(0, -1).every((p) => !/[.,]/.test(p));
}
