/**
 * Text built to stress the inline parser: what parseInline reads it as, against the stock markdown-it
 * parser of the dialect (`parseInlineUncached(s, false, true)`), which the fast paths must not differ
 * from — delimiters that cannot pair left as text, link rules skipped where no link can be, and
 * long text tokenized in windows (small windows here, so that every kind of window end is crossed).
 */
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseInline, parseInlineUncached, type InlineContent } from './inline-markdown.ts';

const N = 41_000;
const fill = (unit: string, length = N) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
const textOf = (content: readonly InlineContent[]) => content.map((c) => (c.type === 'link' ? c.content.map((t) => t.text).join('') : c.text)).join('');
const reference = (s: string) => parseInlineUncached(s, false, true);

/** Pieces of inline syntax, whole constructs among them, so that links, code spans and entities form often. */
const SYNTAX = ['*', '**', '_', '__', '~', '~~', '[', ']', '(', ')', '!', '`', '``', '<', '>', '&', '&amp;', '&#42;', '\\', '\\*', '[a](b)', '![a](b)', '<http://x>', '`c`', ':', '"'];
const TEXT = ['a', 'b', '1', ' ', '  ', '\n', '\t', '.', ',', ';', 'é', '中', '😀', '\u00a0', '\r', '#', '-'];
const pieces = (alphabet: readonly string[], maxLength: number) => fc.array(fc.constantFrom(...alphabet), { maxLength }).map((cs) => cs.join(''));

test('the fast paths read random text as the stock parser does, in windows of 1 to 8 characters', () => {
  fc.assert(
    fc.property(pieces([...SYNTAX, ...TEXT], 30), fc.integer({ min: 1, max: 8 }), (s, window) => {
      assert.equal(parseInlineUncached(s, true, false, window), reference(s), JSON.stringify(s));
    }),
    { numRuns: 12_000, seed: 21 },
  );
});

test('emphasis-heavy text: pruned delimiter runs and openers left unpaired across windows', () => {
  const alphabet = ['*', '**', '***', '_', '__', '~~', '~', 'a', 'b', ' ', ',', ';', ')', '(', '.', '&#42;', '\\*', '\n', 'é', '😀', '`', '[', ']'];
  fc.assert(
    fc.property(pieces(alphabet, 30), fc.integer({ min: 1, max: 6 }), (s, window) => {
      assert.equal(parseInlineUncached(s, true, false, window), reference(s), JSON.stringify(s));
    }),
    { numRuns: 12_000, seed: 22 },
  );
});

test('repeated units (the shape of pathological text) read as the stock parser does', () => {
  const unit = pieces([...SYNTAX, 'a', 'b', ' ', ',', ')'], 5).filter((u) => u !== '');
  fc.assert(
    fc.property(unit, fc.integer({ min: 40, max: 300 }), fc.integer({ min: 2, max: 24 }), fc.constantFrom('', 'x', 'xx '), (u, length, window, tail) => {
      const s = fill(u, length) + tail;
      assert.equal(parseInlineUncached(s, true, false, window), reference(s), JSON.stringify(s));
    }),
    { numRuns: 2_000, seed: 23 },
  );
});

test('repeated emphasis units: windows ended before openers left in reach, and openers out of reach inside matched spans', () => {
  const unit = pieces(['*', '**', '***', '_', '__', '~~', 'a', 'b', ' ', '.', '[a](b)'], 6).filter((u) => u !== '');
  fc.assert(
    fc.property(unit, fc.integer({ min: 60, max: 400 }), fc.integer({ min: 2, max: 32 }), fc.constantFrom('', '*', '**', 'a*', '_ '), (u, length, window, tail) => {
      const s = fill(u, length) + tail;
      assert.equal(parseInlineUncached(s, true, false, window), reference(s), `${JSON.stringify(s)} in windows of ${window}`);
    }),
    { numRuns: 3_000, seed: 24 },
  );
});

test('text without a backtick and without "]" or ")" parses the same without the link and image rules', () => {
  const alphabet = ['[', '!', '(', 'a', ' ', '*', '_', '<', '>', ':', '\\', '\n', 'h', '&', ']'];
  fc.assert(
    fc.property(pieces(alphabet, 24), (s) => {
      assert.equal(parseInlineUncached(s, false), reference(s), JSON.stringify(s));
    }),
    { numRuns: 5_000, seed: 11 },
  );
});

test('edge cases of the skipped link rule, the code-span cache and window ends read as the stock parser does', () => {
  const cases = ['[]()', '[a]()', '![]()', 'x[]()y', '[`[`[``', '[`[`[``x', '[``[`', '`[`]()', '[a](`)`', '![[a](b)](c)', '[a]', '[a] (b)', '*a [b*](c) d*', '**a\n**b', 'a  \nb', 'a \n b', 'a&amp', '&amp;a', '<a:b>c', 'a![b](c)', '![a', '~~a~~~', '~~~a~~', '_a_b_', '*a*b*', '***a**b*'];
  for (const s of cases) {
    for (let window = 1; window <= 6; window++) assert.equal(parseInlineUncached(s, true, false, window), reference(s), `${JSON.stringify(s)} in windows of ${window}`);
  }
});

/** The units of the pathological bench (bench/stress.ts) and a few more. */
const UNITS = ['**a**a', '*a', '_a', '***a', 'a*b', '_a_ ', '*a**', 'a**b*', '~~a', '*', '_', '[', '[a', '](', '[a](', '[[a]]', '[a](b)', '![', '![a](', '`a', '`', '<', '<a', '<http://a>', '\\*', '&amp;', '*_[`<](a', '~', 'a~', '**a', 'a**', '`a``', '&#42;a'];

test('41,000-character paragraphs built to stress the parser read as the stock parser reads them', () => {
  for (const unit of UNITS) {
    const text = fill(unit);
    assert.equal(parseInline(text), reference(text), JSON.stringify(unit));
    const edited = `${text.slice(0, -3)}xx*`;
    assert.equal(parseInline(edited), reference(edited), `${JSON.stringify(unit)} edited`);
  }
});

test('41,000-character paragraphs: what some of them read as', () => {
  const brackets = parseInline(fill('['));
  assert.ok(brackets.ok && textOf(brackets.content) === fill('['));
  const openLinks = parseInline(fill('[a'));
  assert.ok(openLinks.ok && textOf(openLinks.content) === fill('[a') && openLinks.citations.length === 0);
  const bold = parseInline(fill('**a**a'));
  if (!bold.ok) throw new Error(bold.message);
  assert.equal(bold.content.slice(0, 2), [
    { type: 'text', text: 'a', styles: { bold: true } },
    { type: 'text', text: 'a', styles: {} },
  ]);
  // 6,833 times "aa" read from "**a**a", then the cut-off tail "**" as literal text.
  assert.is(textOf(bold.content), 'aa'.repeat(Math.floor(N / 6)) + '**');
  const intraword = parseInline(fill('_a'));
  assert.equal(intraword, { ok: true, content: [{ type: 'text', text: fill('_a'), styles: {} }], citations: [] }, 'intraword "_" never pairs');
  const run = parseInline(`${fill('*', N - 4)}x***`);
  if (!run.ok) throw new Error(run.message);
  assert.equal(run.content, [
    { type: 'text', text: fill('*', N - 7), styles: {} },
    { type: 'text', text: 'x', styles: { bold: true, italic: true } },
  ]);
  const links = parseInline(fill('[a](b)'));
  assert.ok(links.ok && links.content.filter((c) => c.type === 'link').length === Math.floor(N / 6), 'every whole "[a](b)" is a link');
  const lt = parseInline(fill('<'));
  assert.ok(lt.ok && textOf(lt.content) === fill('<'));
  const closers = parseInline(fill(']('));
  assert.ok(closers.ok && textOf(closers.content) === fill(']('));
  assert.is(parseInline(fill('`')).ok, false, 'a line of backticks only is a code fence, not inline content');
  assert.is(parseInline(fill('*')).ok, false, 'a line of stars only is a thematic break');
});

test.run();
