/**
 * The storage proxy conforms to the storage port: the adapters' conformance suite runs over
 * `remoteStorage(serveStorage(memoryStorage()).connect())`, and over lowdb with reopen.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
