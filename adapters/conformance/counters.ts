/**
 * Conformance tests: the optional windowed counter (`takeCount`), for adapters that offer it.
 * @module
 */
import * as assert from 'uvu/assert';
import type { Storage } from '../../src/ports.ts';
import type { RegisterTest } from './harness.ts';
import { put } from './fixtures.ts';

/** The adapter's `takeCount`, or null (the test then says it is skipped). */
function takeOf(storage: Storage, name: string): NonNullable<Storage['takeCount']> | null {
  if (storage.takeCount === undefined) {
    console.log(`  (skipped for ${name}: the adapter offers no takeCount)`);
    return null;
  }
  return storage.takeCount.bind(storage);
}

/** Registers the tests of `takeCount`. */
export function counterTests(it: RegisterTest, name: string): void {
  it('takeCount counts up to the limit per window, restarts in a later window, and keeps counting in a later stored one', async ({ storage }) => {
    const take = takeOf(storage, name);
    if (take === null) return;
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await take('budgets', 'cred', 1_000, 3));
    assert.equal(results, [
      { taken: true, used: 1 },
      { taken: true, used: 2 },
      { taken: true, used: 3 },
      { taken: false, used: 3 },
    ]);
    assert.equal(await storage.getRecord('budgets', 'cred'), { key: 'cred', value: { v: 1, windowStart: 1_000, used: 3 }, revision: 3 }, 'a refused take changes nothing');
    assert.equal(await take('budgets', 'cred', 2_000, 3), { taken: true, used: 1 }, 'a later window starts at 0');
    assert.equal(await take('budgets', 'cred', 1_000, 3), { taken: true, used: 2 }, 'an earlier window counts in the stored later one');
    assert.equal((await storage.getRecord('budgets', 'cred'))?.value, { v: 1, windowStart: 2_000, used: 2 });
    assert.equal(await take('budgets', 'zero', 1_000, 0), { taken: false, used: 0 });
    assert.is(await storage.getRecord('budgets', 'zero'), null, 'a refused first take writes nothing');
    await storage.commit([put('budgets', 'old', { v: 1, windowStart: 5, used: 9 })]);
    assert.equal(await take('budgets', 'old', 10, 9), { taken: true, used: 1 }, 'a stored counter of an earlier window restarts');
  });

  it('takeCount racing from many callers: never more than the limit succeed', async ({ storage }) => {
    const take = takeOf(storage, name);
    if (take === null) return;
    const results = await Promise.all(Array.from({ length: 25 }, () => take('budgets', 'race', 7, 10)));
    assert.is(results.filter((r) => r.taken).length, 10);
    assert.equal(
      results.filter((r) => r.taken).map((r) => r.used).sort((a, b) => a - b),
      Array.from({ length: 10 }, (_, i) => i + 1),
      'each success saw its own count',
    );
    assert.equal((await storage.getRecord('budgets', 'race'))?.value, { v: 1, windowStart: 7, used: 10 });
  });
}
