/**
 * Budgets over a storage shared by processes: two engines (two processes' worth of in-memory
 * state) on one storage that says it is shared charge through its atomic `takeCount`, so a budget
 * is exact in total; and `kw serve` takes DATABASE_URL and KW_OPERATOR_KEY from the environment.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../adapters/memory/index.ts';
import { createApiHandler } from '../src/api/handler.ts';
import { createEngine } from '../src/engine.ts';
import type { Storage } from '../src/ports.ts';
import { serveOptionsFrom } from './serve-command.ts';

test('two engines on one shared storage: a budget of 7 gives exactly 7 successes in total, and the rest 429', async () => {
  const inner = memoryStorage();
  const shared: Storage = Object.assign(Object.create(inner) as Storage, { sharedByProcesses: true, close: () => Promise.resolve() });
  const engines = [createEngine({ storage: shared }), createEngine({ storage: shared })];
  const { token } = await engines[0]!.credentials.create({ accountId: 'acct', label: 'budget', scopes: ['document:read'], requestBudget: 7 });
  const handlers = engines.map((engine) => createApiHandler({ engine, operatorKey: 'k'.repeat(32) }));
  const answers = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      handlers[i % 2]!({ method: 'GET', url: '/api/v1/documents?limit=1', headers: { authorization: `Bearer ${token}` }, body: null }),
    ),
  );
  const statuses = answers.map((a) => a.status);
  assert.is(statuses.filter((s) => s === 200).length, 7, statuses.join(' '));
  assert.is(statuses.filter((s) => s === 429).length, 9);
  assert.equal((await inner.getRecord<{ used: number }>('credential-budgets', (await engines[1]!.credentials.authenticate(token)).credentialRef))?.value.used, 7);
  for (const engine of engines) await engine.close();
  await inner.close();
});

test('kw serve --storage postgres takes DATABASE_URL and KW_OPERATOR_KEY from the environment; flags win', () => {
  const io = { out: () => {}, err: () => {} };
  const env = { DATABASE_URL: 'postgres://127.0.0.1/a', KW_OPERATOR_KEY: 'env-key-0123456789' };
  const fromEnv = serveOptionsFrom(['--storage', 'postgres'], io, env);
  assert.is(fromEnv.databaseUrl, 'postgres://127.0.0.1/a');
  assert.is(fromEnv.operatorKey, 'env-key-0123456789');
  const fromFlags = serveOptionsFrom(['--storage', 'postgres', '--database-url', 'postgres://127.0.0.1/b', '--operator-key', 'flag-key-0123456789'], io, env);
  assert.is(fromFlags.databaseUrl, 'postgres://127.0.0.1/b');
  assert.is(fromFlags.operatorKey, 'flag-key-0123456789');
  assert.throws(() => serveOptionsFrom(['--storage', 'postgres'], io, {}), /--storage postgres needs --database-url/);
  assert.is(fromEnv.databaseListenUrl, undefined, 'without it LISTEN goes over --database-url');
  const listenEnv = serveOptionsFrom(['--storage', 'postgres'], io, { ...env, DATABASE_LISTEN_URL: 'postgres://127.0.0.1:5432/a' });
  assert.is(listenEnv.databaseListenUrl, 'postgres://127.0.0.1:5432/a');
  const listenFlag = serveOptionsFrom(['--storage', 'postgres', '--database-listen-url', 'postgres://127.0.0.1:5433/a'], io, { ...env, DATABASE_LISTEN_URL: 'postgres://x/a' });
  assert.is(listenFlag.databaseListenUrl, 'postgres://127.0.0.1:5433/a', 'the flag wins');
  assert.throws(() => serveOptionsFrom(['--database-listen-url', 'postgres://127.0.0.1/a'], io, {}), /--database-listen-url needs --storage postgres/);
  assert.throws(() => serveOptionsFrom([], io, { KW_OPERATOR_KEY: 'short' }), /KW_OPERATOR_KEY must be at least 16 characters/);
  assert.is(serveOptionsFrom([], io, { KW_OPERATOR_KEY: 'lowdb-key-0123456789' }).operatorKey, 'lowdb-key-0123456789', 'with every storage');
});

test.run();
