import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { flatString, utf8Length } from './text.ts';

test('utf8Length equals the encoded length, surrogate pairs and lone surrogates included', () => {
  const encoder = new TextEncoder();
  for (const s of ['', 'abc', 'é', '€', '😀', 'a😀b€é', '\ud800', '\udc00x', 'x\ud83d']) {
    assert.is(utf8Length(s), encoder.encode(s).byteLength, JSON.stringify(s));
  }
});

test('flatString returns the same string', () => {
  const s = 'a'.repeat(10) + 'b'.repeat(10);
  assert.is(flatString(s), s);
});

test.run();
