/**
 * The shortcuts of parseInline that skip markdown-it (plain text, simple `**bold**` / `*italic*`)
 * against markdown-it itself, over random text built from the characters that matter to emphasis.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseInline, parseInlineUncached } from './inline-markdown.ts';
import { seededRandom } from '../../fixtures/engine-kit.ts';

const prng = seededRandom;

const PIECES = ['a', 'Z', '7', ' ', '  ', '*', '**', '***', '.', ',', '(', ')', '"', "'", 'é', '\u00a0', '\t', '_', '-', '1.', '2)', '#', '!', '?', ':', '$', '{', 'text', 'bold', '**x**', '*y*', ' **b c** ', '\n', '    ', 'ß', '😀'];

test('simple emphasis and plain text parse exactly as markdown-it parses them', () => {
  const random = prng(7);
  let shortcutHits = 0;
  for (let n = 0; n < 40_000; n++) {
    let s = '';
    const len = 1 + Math.floor(random() * 9);
    for (let i = 0; i < len; i++) s += PIECES[Math.floor(random() * PIECES.length)];
    const fast = parseInlineUncached(s);
    const slow = parseInlineUncached(s, false);
    assert.equal(fast, slow, JSON.stringify(s));
    if (JSON.stringify(fast).includes('"bold":true') || JSON.stringify(fast).includes('"italic":true')) shortcutHits++;
  }
  assert.ok(shortcutHits > 1000, `the random text exercises emphasis (${shortcutHits})`);
});

test('typical styled sentences take the shortcut and give BlockNote runs', () => {
  assert.equal(parseInline('Edited 12 with some **text**.'), {
    ok: true,
    content: [
      { type: 'text', text: 'Edited 12 with some ', styles: {} },
      { type: 'text', text: 'text', styles: { bold: true } },
      { type: 'text', text: '.', styles: {} },
    ],
    citations: [],
  });
  assert.equal(parseInline('*Note:* see (**p 4**)'), parseInlineUncached('*Note:* see (**p 4**)', false));
  assert.equal(parseInline('a**b**'), parseInlineUncached('a**b**', false));
});

test.run();
