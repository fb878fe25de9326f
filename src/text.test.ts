import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { utf8Length } from './text.ts';

test('utf8Length equals the encoded length, surrogate pairs and lone surrogates included', () => {
  const encoder = new TextEncoder();
  for (const s of ['', 'abc', 'é', '€', '😀', 'a😀b€é', '\ud800', '\udc00x', 'x\ud83d', 'a'.repeat(100), 'a'.repeat(100) + 'é', '\u007f'.repeat(70)]) {
    assert.is(utf8Length(s), encoder.encode(s).byteLength, JSON.stringify(s));
  }
});

test.run();
