/**
 * The storage proxy conforms to the storage port: the adapters' conformance suite runs over
 * `remoteStorage(serveStorage(memoryStorage()).connect())`, and over lowdb with reopen. And two
 * engines on two connections to one owner share request budgets exactly.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiHandler } from '../../src/api/handler.ts';
import { createEngine } from '../../src/engine.ts';
import { storageConformance } from '../conformance/index.ts';
import { lowdbStorage } from '../lowdb/index.ts';
import { memoryStorage } from '../memory/index.ts';
import type { Storage } from '../../src/ports.ts';
import { remoteStorage, serveStorage } from './storage-proxy.ts';

storageConformance('memory behind the thread proxy', async () => {
  const owned = memoryStorage();
  const server = serveStorage(owned);
  const storage = remoteStorage(server.connect());
  return {
    storage,
    teardown: async () => {
      await storage.close();
      server.close();
      await owned.close().catch(() => undefined);
    },
  };
});

storageConformance('lowdb behind the thread proxy', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-proxy-'));
  const owners: Storage[] = [];
  const servers: ReturnType<typeof serveStorage>[] = [];
  const open = async (): Promise<Storage> => {
    const owned = await lowdbStorage({ dir, fsync: false });
    owners.push(owned);
    const server = serveStorage(owned);
    servers.push(server);
    const remote = remoteStorage(server.connect());
    // closing the remote closes the owner too, as closing a local lowdb would
    const close = remote.close.bind(remote);
    remote.close = async () => {
      await close();
      await owned.close().catch(() => undefined);
    };
    return remote;
  };
  const storage = await open();
  return {
    storage,
    reopen: open,
    teardown: async () => {
      for (const s of servers) s.close();
      for (const o of owners) await o.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
});

test('two engines on two connections to one lowdb owner: a budget of 7 gives exactly 7 successes in total', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-proxy-budget-'));
  const owned = await lowdbStorage({ dir, fsync: false });
  const server = serveStorage(owned);
  const remotes = [remoteStorage(server.connect()), remoteStorage(server.connect())];
  const engines = remotes.map((storage) => createEngine({ storage }));
  try {
    assert.ok(remotes.every((r) => r.sharedByProcesses === true && typeof r.takeCount === 'function'), 'a remote storage says it is shared and counts through the owner');
    const { token } = await engines[0]!.credentials.create({ accountId: 'acct', label: 'budget', scopes: ['document:read'], requestBudget: 7 });
    const handlers = engines.map((engine) => createApiHandler({ engine, operatorKey: 'k'.repeat(32) }));
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => handlers[i % 2]!({ method: 'GET', url: '/api/v1/documents?limit=1', headers: { authorization: `Bearer ${token}` }, body: null })),
    );
    const statuses = answers.map((a) => a.status);
    assert.is(statuses.filter((status) => status === 200).length, 7, statuses.join(' '));
    assert.is(statuses.filter((status) => status === 429).length, 9);
  } finally {
    for (const engine of engines) await engine.close();
    server.close();
    await owned.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
