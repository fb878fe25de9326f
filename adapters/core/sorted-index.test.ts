/**
 * The chunked sorted index behind listPage agrees with a sorted array under random inserts,
 * removes and pages, across many chunk splits.
 */
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { comparePositions, SortedIndex, type IndexPosition } from './sorted-index.ts';

const position = fc.record({ sortKey: fc.constantFrom('', 'a', 'b', 'b0', 'c'), key: fc.string({ maxLength: 3 }) });

test('insert, remove and pageBefore match a sorted array model', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.boolean(), position), { maxLength: 400 }), fc.array(position, { maxLength: 5 }), (ops, bounds) => {
      const index = new SortedIndex();
      let model: IndexPosition[] = [];
      for (const [insert, p] of ops) {
        const present = model.some((m) => comparePositions(m, p) === 0);
        if (insert && !present) {
          index.insert(p);
          model.push(p);
        } else {
          assert.is(index.remove(p), present);
          model = model.filter((m) => comparePositions(m, p) !== 0);
        }
      }
      model.sort(comparePositions);
      assert.equal(index.toArray(), model);
      assert.is(index.size, model.length);
      const desc = [...model].reverse();
      assert.equal(index.pageBefore(null, 1000), desc);
      for (const b of bounds) assert.equal(index.pageBefore(b, 7), desc.filter((m) => comparePositions(m, b) < 0).slice(0, 7));
    }),
    { numRuns: 200 },
  );
});

test('20,000 positions in random order split into chunks and page back in order', () => {
  const index = new SortedIndex();
  const keys = Array.from({ length: 20_000 }, (_, i) => `k${String((i * 7_919) % 20_000).padStart(5, '0')}`);
  for (const key of keys) index.insert({ sortKey: key.slice(0, 3), key });
  const all: string[] = [];
  let before: IndexPosition | null = null;
  for (;;) {
    const page = index.pageBefore(before, 999);
    if (page.length === 0) break;
    all.push(...page.map((p) => p.key));
    before = page[page.length - 1];
  }
  assert.equal(all, [...keys].sort().reverse());
  for (const key of keys.slice(0, 10_000)) assert.ok(index.remove({ sortKey: key.slice(0, 3), key }));
  assert.is(index.size, 10_000);
  assert.equal(index.toArray().map((p) => p.key), keys.slice(10_000).sort());
});

test('ascending and descending runs (the end fast paths) page back like a sorted array', () => {
  const index = new SortedIndex();
  const down = Array.from({ length: 3_000 }, (_, i) => ({ sortKey: String(5_000 - i).padStart(5, '0'), key: 'd' }));
  const up = Array.from({ length: 3_000 }, (_, i) => ({ sortKey: String(6_000 + i).padStart(5, '0'), key: 'u' }));
  for (let i = 0; i < down.length; i++) {
    index.insert(down[i]!);
    index.insert(up[i]!);
  }
  const model = [...down, ...up].sort(comparePositions);
  assert.equal(index.toArray(), model);
  assert.equal(index.pageBefore(null, 10_000), [...model].reverse());
  for (const p of down.slice(0, 1_500)) assert.ok(index.remove(p));
  assert.equal(index.toArray(), model.filter((p) => p.key === 'u' || Number(p.sortKey) < 3_501));
});

test('many chunks: bursts of inserts (merged one by one or in bulk) between removes and pages match a sorted model', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(40), fc.nat(3)), { minLength: 50, maxLength: 120 }),
      fc.integer({ min: 1, max: 1_000_000 }),
      (bursts, seed) => {
        const index = new SortedIndex();
        const model = new Map<string, IndexPosition>();
        let x = seed;
        const next = () => (x = (x * 48_271) % 2_147_483_647);
        for (const [inserts, removes] of bursts) {
          for (let i = 0; i < inserts * 3; i++) {
            const p = { sortKey: String(next() % 5_000).padStart(4, '0'), key: `k${next() % 50}` };
            const id = `${p.sortKey}/${p.key}`;
            if (model.has(id)) continue;
            model.set(id, p);
            index.insert(p);
          }
          const present = [...model.keys()];
          for (let i = 0; i < removes && present.length; i++) {
            const id = present[next() % present.length]!;
            if (!model.has(id)) continue;
            assert.ok(index.remove(model.get(id)!));
            model.delete(id);
          }
          if (removes === 0) assert.is(index.pageBefore(null, 3).length, Math.min(3, model.size));
        }
        const sorted = [...model.values()].sort(comparePositions);
        assert.equal(index.toArray(), sorted);
        assert.is(index.size, sorted.length);
        assert.equal(index.pageBefore(sorted[sorted.length >> 1] ?? null, 20), sorted.slice(0, sorted.length >> 1).reverse().slice(0, 20));
      },
    ),
    { numRuns: 25, seed: 3 },
  );
});

test.run();
