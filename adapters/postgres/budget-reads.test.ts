/**
 * Reads and the request budget on a storage shared by processes (PostgreSQL), over HTTP: a GET runs
 * beside its budget charge (one round trip, not two), yet a spent budget still answers 429
 * RATE_LIMITED with Retry-After in place of the read, and once this process has seen the budget
 * spent, a GET does no read work at all before its 429 (the budget is what refuses it).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startServer } from '../../fixtures/http-kit.ts';
import { storageHome, suiteStorages } from './postgres-kit.ts';

const home = await storageHome();
const { open } = suiteStorages(home, test);

test('a spent budget answers 429 to a GET in place of the document, and the read is not done', async () => {
  const storage = await open({ pollMs: 60_000 });
  let reads = 0;
  const counted = storage as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ['getDocumentHead', 'loadDocument', 'loadHeadAndUpdates', 'loadUpdates']) {
    const original = counted[name]!.bind(storage);
    counted[name] = (...args: unknown[]) => {
      reads++;
      return original(...args);
    };
  }
  const s = await startServer({ storage });
  try {
    const writer = await s.credential({ scopes: ['document:create', 'document:read'] });
    const created = await s.req('/api/v1/documents', { method: 'POST', token: writer.token, headers: { 'idempotency-key': 'budget-reads-0001' }, body: { v: 1, title: 'Budget' } });
    assert.is(created.status, 201, created.text);
    const ref = created.json.data.documentRef as string;
    const reader = await s.credential({ scopes: ['document:read'], requestBudget: 3 });
    for (let i = 0; i < 3; i++) assert.is((await s.req(`/api/v1/documents/${ref}`, { token: reader.token })).status, 200);
    for (let i = 0; i < 2; i++) {
      reads = 0;
      const spent = await s.req(`/api/v1/documents/${ref}`, { token: reader.token });
      assert.is(spent.status, 429, spent.text);
      assert.is(spent.json.error.code, 'RATE_LIMITED');
      assert.ok(Number(spent.headers['retry-after']) >= 1, 'Retry-After');
      assert.not.ok('data' in spent.json, 'no document in the answer');
      assert.is(reads, 0, 'the spent credential made the server read nothing');
    }
  } finally {
    await s.close();
  }
});

test.run();
