/**
 * Checking a highlight's selections against the saved text. Pure functions.
 * @remarks Offsets count Unicode code points of one block's text (the W3C text-position convention),
 * so `start`/`end` mean the same in every client language. A selection matches when the block text
 * at `[start, end)` is exactly `exact`, the `prefix` ends exactly at `start` and the `suffix` starts
 * exactly at `end`. The first mismatch of each selection is reported with its field path.
 * @module
 */
import type { FieldError } from '../errors.ts';
import type { CaptureRecord } from './records.ts';
import type { Selection } from './schemas.ts';

/** A block's text as code points, computed once per block. */
function codePoints(text: string): string[] {
  return Array.from(text);
}

/**
 * Check every selection against `capture`.
 * @returns one fieldError per selection that does not match (field `selections.<i>.<name>`), empty when all match.
 */
export function checkSelections(selections: readonly Selection[], capture: CaptureRecord): FieldError[] {
  const errors: FieldError[] = [];
  const blocks = new Map(capture.blocks.map((b) => [b.blockId, b.text]));
  const cache = new Map<string, string[]>();
  selections.forEach((s, i) => {
    const at = (name: string, message: string) => errors.push({ field: `selections.${i}.${name}`, message });
    if (s.captureId !== capture.captureId) return at('captureId', `is not the current capture of this source (${capture.captureId}); read the reader page again`);
    if (s.representationId !== capture.representationId) return at('representationId', `is not a representation of capture ${capture.captureId}`);
    const text = blocks.get(s.blockId);
    if (text === undefined) return at('blockId', 'names no block of this capture');
    let cps = cache.get(s.blockId);
    if (!cps) cache.set(s.blockId, (cps = codePoints(text)));
    if (s.end <= s.start) return at('end', 'must be greater than start');
    if (s.end > cps.length) return at('end', `is past the end of the block (${cps.length} characters)`);
    const exact = cps.slice(s.start, s.end).join('');
    if (exact !== s.exact) return at('exact', `does not match the saved text at [${s.start}, ${s.end}) of block ${s.blockId}`);
    const prefixLength = codePoints(s.prefix).length;
    if (prefixLength > s.start || cps.slice(s.start - prefixLength, s.start).join('') !== s.prefix) {
      return at('prefix', 'does not match the saved text just before start');
    }
    const suffixLength = codePoints(s.suffix).length;
    if (s.end + suffixLength > cps.length || cps.slice(s.end, s.end + suffixLength).join('') !== s.suffix) {
      return at('suffix', 'does not match the saved text just after end');
    }
  });
  return errors;
}

/**
 * Build a selection of `exact` at its first occurrence in one block, with up to `context` code points
 * of prefix and suffix. A helper for clients and tests; returns null when the passage is not there.
 */
export function selectPassage(
  capture: CaptureRecord | { captureId: string; representationId: string; blocks: { blockId: string; text: string }[] },
  blockId: string,
  exact: string,
  context = 32,
): Selection | null {
  const block = capture.blocks.find((b) => b.blockId === blockId);
  if (!block) return null;
  const at = block.text.indexOf(exact);
  if (at < 0 || exact === '') return null;
  const before = codePoints(block.text.slice(0, at));
  const passage = codePoints(exact);
  const after = codePoints(block.text.slice(at + exact.length));
  return {
    captureId: capture.captureId,
    representationId: capture.representationId,
    blockId,
    start: before.length,
    end: before.length + passage.length,
    exact,
    prefix: before.slice(Math.max(0, before.length - context)).join(''),
    suffix: after.slice(0, context).join(''),
  };
}
