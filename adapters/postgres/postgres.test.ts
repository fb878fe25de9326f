/**
 * The PostgreSQL adapter runs the storage conformance suite unchanged: on a fresh database of the
 * server at 127.0.0.1:5432 when one answers, else on PGlite (printed).
 */
import { suite } from 'uvu';
import { storageConformance } from '../conformance/index.ts';
import type { PostgresStorage } from './postgres-storage.ts';
import { storageHome } from './postgres-kit.ts';

const home = await storageHome();
console.log(
  home.kind === 'server'
    ? `  postgres conformance on a fresh database of the server (${home.url?.replace(/\/\/[^@]*@/, '//')})`
    : `  postgres conformance on PGlite (in-process; races between processes not covered): ${home.reason}`,
);

storageConformance(`postgres (${home.kind})`, async () => {
  await home.empty();
  const opened: PostgresStorage[] = [];
  const open = async () => {
    const s = await home.open();
    opened.push(s);
    return s;
  };
  const storage = await open();
  return {
    storage,
    reopen: open,
    teardown: async () => {
      for (const s of opened) await s.close().catch(() => {});
    },
  };
});

const end = suite('postgres conformance: cleanup');
end('drop the test database', async () => {
  await home.dispose();
});
end.run();
