import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeBase64, encodeBase64 } from './base64.ts';

test('bytes survive a round trip, across slice boundaries', () => {
  const bytes = Uint8Array.from({ length: 100_003 }, (_, i) => (i * 31 + 7) & 0xff);
  const b64 = encodeBase64(bytes);
  assert.is(b64, Buffer.from(bytes).toString('base64'));
  assert.equal(decodeBase64(b64), bytes);
});

test('a prefix decodes only the bytes asked for', () => {
  const bytes = Uint8Array.from({ length: 1000 }, (_, i) => i & 0xff);
  const b64 = encodeBase64(bytes);
  for (const limit of [0, 1, 2, 3, 4, 5, 64, 999, 1000, 5000]) {
    assert.equal(decodeBase64(b64, limit), bytes.subarray(0, Math.min(limit, 1000)), String(limit));
  }
});

test.run();
