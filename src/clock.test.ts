/**
 * isoTimestamp's day cache gives exactly what Date#toISOString gives.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isoTimestamp } from './clock.ts';

test('isoTimestamp equals toISOString across days, years, negative and fractional times', () => {
  const samples = [0, -1, 1, 86_399_999, 86_400_000, -86_400_000, -86_400_001, Date.UTC(2026, 0, 1), 253402300799999, 253402300800000, -62167219200000, -62167219200001, 1.5, -0.5];
  let state = 7;
  for (let i = 0; i < 20_000; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    samples.push(Date.UTC(2026, 10, 25) + (state % (3 * 86_400_000)) - 86_400_000);
    if (i % 10 === 0) samples.push((state / 2 ** 32 - 0.4) * 8e12);
  }
  for (const ms of samples) assert.is(isoTimestamp(ms), new Date(ms).toISOString(), String(ms));
  assert.throws(() => isoTimestamp(Number.NaN), RangeError);
});

test.run();
