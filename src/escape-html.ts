/**
 * HTML escaping of text, for every page the service renders (the browser app's, the public document
 * page): `& < > " '` become entities, the same escaping Eta applies to `<%= %>`.
 * @module
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML-escape text (for element content and quoted attribute values). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}
