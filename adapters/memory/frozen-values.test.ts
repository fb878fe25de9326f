/**
 * Record values handed over deeply frozen (freezeRecordValue) are kept by reference by the memory
 * adapter; the port's promises still hold: what you passed cannot change what is stored, and what
 * you read is yours to mutate.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freezeRecordValue, isFrozenRecordValue } from '../../src/ports.ts';
import { memoryStorage } from './index.ts';

test('a frozen value is stored, and reads return fresh mutable copies', async () => {
  const storage = memoryStorage();
  const value = freezeRecordValue({ a: 1, list: [1, { b: 'x' }], nested: { c: null, d: undefined } });
  assert.ok(Object.isFrozen(value) && Object.isFrozen(value.list) && Object.isFrozen(value.list[1]) && Object.isFrozen(value.nested));
  assert.ok(isFrozenRecordValue(value));
  await storage.commit([{ kind: 'record.put', collection: 'c', key: 'k', value, expectedRevision: null }]);
  const read = (await storage.getRecord<{ a: number; list: unknown[]; nested: Record<string, unknown> }>('c', 'k'))!;
  assert.equal(read, { key: 'k', value: { a: 1, list: [1, { b: 'x' }], nested: { c: null } }, revision: 1 }, 'JSON semantics (undefined dropped)');
  assert.is.not(read.value, value);
  read.value.list.push(2);
  read.value.a = 9;
  assert.equal((await storage.getRecord('c', 'k'))!.value, { a: 1, list: [1, { b: 'x' }], nested: { c: null } });
  assert.equal((await storage.listRecords('c')).map((r) => r.value), [{ a: 1, list: [1, { b: 'x' }], nested: { c: null } }]);
  // Preconditions apply as to any value.
  await storage.commit([{ kind: 'record.put', collection: 'c', key: 'k', value: freezeRecordValue({ a: 2 }), expectedRevision: 1 }]);
  assert.equal(await storage.getRecord('c', 'k'), { key: 'k', value: { a: 2 }, revision: 2 });
  await storage.close();
});

test('freezeRecordValue accepts plain JSON data only; a merely frozen value is copied as before', async () => {
  assert.throws(() => freezeRecordValue({ when: new Date(0) }), TypeError);
  assert.throws(() => freezeRecordValue({ n: 1n }), TypeError);
  assert.throws(() => freezeRecordValue([() => 1]), TypeError);
  assert.is(freezeRecordValue('text'), 'text');
  const frozenOnly = Object.freeze({ a: Object.freeze([1]) });
  assert.not.ok(isFrozenRecordValue(frozenOnly));
  const storage = memoryStorage();
  await storage.commit([{ kind: 'record.put', collection: 'c', key: 'k', value: frozenOnly, expectedRevision: null }]);
  assert.equal((await storage.getRecord('c', 'k'))!.value, { a: [1] });
  await assert.not.throws(() => storage.commit([{ kind: 'record.put', collection: 'c', key: 'j', value: { x: 1 }, expectedRevision: null }]));
  await storage.close();
});

test.run();
