import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isoTimestamp, TIMESTAMP_PATTERN } from './clock.ts';
import { Patterns, refMinter, seededIds, randomIds } from './ids.ts';

test('minted refs match the contract patterns', () => {
  for (const ids of [seededIds(7), randomIds]) {
    const m = refMinter(ids);
    assert.match(m.documentRef(), Patterns.documentRef);
    assert.match(m.spaceRef(), Patterns.spaceRef);
    assert.match(m.operationRef(), Patterns.operationRef);
    assert.match(m.credentialRef(), Patterns.credentialRef);
    assert.match(m.jobId(), Patterns.jobId);
    assert.match(m.entityId(), Patterns.entityId);
    assert.match(m.inquiryId(), Patterns.inquiryId);
    assert.match(m.editionId(), Patterns.editionId);
    assert.match(m.blockId(), Patterns.blockId);
    assert.match(m.requestId(), Patterns.requestId);
  }
});

test('random hex ids of any length are lowercase hex, fresh across pool refills', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 3_000; i++) {
    const length = 1 + (i % 67);
    const id = randomIds.hex(length);
    assert.match(id, new RegExp(`^[0-9a-f]{${length}}$`));
    if (length >= 16) {
      assert.not.ok(seen.has(id), 'repeated id');
      seen.add(id);
    }
  }
  assert.match(randomIds.hex(20_000), /^[0-9a-f]{20000}$/);
});

test('timestamps have milliseconds', () => {
  assert.match(isoTimestamp(Date.UTC(2026, 0, 1)), TIMESTAMP_PATTERN);
});

test.run();
