/**
 * PostgreSQL text cannot hold U+0000, and the engine's keys and topics do (`scopedKey`,
 * `recordTopic`). Text columns store an order-preserving escape instead.
 * @module
 */

const NEEDS_ESCAPE = /[\u0000\u0001]/;
const ESCAPED = /\u0001[\u0001\u0002]/g;

/**
 * Escapes U+0000 as U+0001 U+0001 and U+0001 as U+0001 U+0002; every other character stays.
 * @remarks The code is prefix-free and keeps the order of code units (`\0` < `\1` < everything
 * else, and 01 01 < 01 02 < 02), so `COLLATE "C"` comparisons, `ORDER BY` and prefix matches on the
 * escaped text give what they would on the original.
 */
export function escapeText(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return text;
  return text.replace(/[\u0000\u0001]/g, (c) => (c === '\u0000' ? '\u0001\u0001' : '\u0001\u0002'));
}

/** The inverse of {@link escapeText}. */
export function unescapeText(text: string): string {
  if (!text.includes('\u0001')) return text;
  return text.replace(ESCAPED, (pair) => (pair === '\u0001\u0001' ? '\u0000' : '\u0001'));
}
