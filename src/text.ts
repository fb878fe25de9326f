/**
 * Text helpers shared by the domain and the edge: UTF-8 sizes without encoding, flat strings.
 * @module
 */

/** UTF-8 byte length of a string without encoding it (a lone surrogate counts 3 bytes, as encoded). */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a surrogate pair: 4 bytes for 2 code units
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/**
 * The same string, made one flat sequence in V8 now (ToNumber must read it whole), so that later
 * joins, hashes, comparisons and writes copy it instead of walking its concatenation tree each time.
 */
export function flatString(text: string): string {
  void Number(text);
  return text;
}
