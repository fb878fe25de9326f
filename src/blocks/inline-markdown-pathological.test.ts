import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseInline, parseInlineUncached, type InlineContent } from './inline-markdown.ts';

const N = 41_000;
const fill = (unit: string) => unit.repeat(Math.ceil(N / unit.length)).slice(0, N);
const textOf = (content: readonly InlineContent[]) => content.map((c) => (c.type === 'link' ? c.content.map((t) => t.text).join('') : c.text)).join('');

test('text without "]" parses the same without the link, image and reference rules', () => {
  const alphabet = fc.constantFrom('[', '!', '(', ')', 'a', ' ', '*', '_', '`', '<', '>', ':', '\\', '\n', 'h', '&');
  fc.assert(
    fc.property(fc.array(alphabet, { maxLength: 24 }).map((cs) => cs.join('')), (s) => {
      assert.equal(parseInlineUncached(s, false), parseInlineUncached(s, false, true), JSON.stringify(s));
    }),
    { numRuns: 5000, seed: 11 },
  );
});

test('41,000-character paragraphs built to stress the parser read back correctly', () => {
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
  const lt = parseInline(fill('<'));
  assert.ok(lt.ok && textOf(lt.content) === fill('<'));
  const closers = parseInline(fill(']('));
  assert.ok(closers.ok && textOf(closers.content) === fill(']('));
  assert.is(parseInline(fill('`')).ok, false, 'a line of backticks only is a code fence, not inline content');
  assert.is(parseInline(fill('*')).ok, false, 'a line of stars only is a thematic break');
});

test.run();
