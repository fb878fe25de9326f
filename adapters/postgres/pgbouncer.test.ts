/**
 * The PostgreSQL adapter through PgBouncer in `pool_mode = transaction` (how hosted PostgreSQL is
 * usually reached): the storage conformance suite with every statement pooled and LISTEN on a direct
 * connection (`listenUrl`), and what needs a session (the seed lock) holding up there. Skipped, with
 * the reason printed, where PgBouncer or the server is absent.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { storageConformance } from '../conformance/index.ts';
import { recordTopic } from '../../src/ports.ts';
import { freshDatabase } from './postgres-kit.ts';
import { pgbouncerUnavailableReason, startPgBouncer } from './pgbouncer-kit.ts';
import { postgresStorage, type PostgresStorage } from './postgres-storage.ts';

const reason = await pgbouncerUnavailableReason();
if (reason !== null) {
  console.log(`  postgres through PgBouncer: skipped (${reason})`);
} else {
  const bouncer = await startPgBouncer();
  const db = await freshDatabase();
  const pooled = bouncer.pooled(db.url);
  console.log(`  postgres conformance through PgBouncer (transaction pooling, 127.0.0.1:${bouncer.port}), LISTEN direct`);
  const opened: PostgresStorage[] = [];
  const open = async (options: { pollMs?: number; listen?: boolean } = {}) => {
    const s = await postgresStorage({ url: pooled, ...(options.listen === false ? {} : { listenUrl: db.url }), ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }) });
    opened.push(s);
    return s;
  };
  const empty = async () => {
    const s = await postgresStorage({ url: db.url });
    try {
      await s.sql.query('TRUNCATE kw_heads, kw_snapshots, kw_updates, kw_records, kw_streams, kw_uploads, kw_upload_chunks');
    } finally {
      await s.close();
    }
  };
  const closeAll = async () => {
    for (const s of opened.splice(0)) await s.close().catch(() => {});
  };

  storageConformance('postgres through PgBouncer', async () => {
    await closeAll();
    await open().then((s) => s.close());
    await empty();
    const storage = await open();
    return { storage, reopen: () => open(), teardown: closeAll };
  });

  const test = suite('postgres through PgBouncer: sessions');
  test.after.each(closeAll);
  test.after(async () => {
    await closeAll();
    await db.drop().catch(() => {});
    await bouncer.stop();
  });

  test('the seed lock through the pooler: sections of two storages take turns and none hangs after the other finished', async () => {
    const [a, b] = [await open(), await open()];
    let inside = 0;
    let most = 0;
    const section = (s: PostgresStorage, i: number) =>
      s.exclusive('demo-seed', async () => {
        inside++;
        most = Math.max(most, inside);
        await new Promise((r) => setTimeout(r, 30));
        inside--;
        return i;
      });
    const answers = await Promise.race([
      Promise.all(Array.from({ length: 8 }, (_, i) => section(i % 2 === 0 ? a : b, i))),
      new Promise<never>((_, fail) => setTimeout(() => fail(new Error('an exclusive section hung')), 20_000)),
    ]);
    assert.equal(answers, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.is(most, 1, 'one section at a time');
  });

  test('a commit on one storage reaches a listener of another at once over the direct LISTEN connection', async () => {
    const [a, b] = [await open({ pollMs: 60_000 }), await open({ pollMs: 60_000 })];
    const heard = new Promise<number>((done) => {
      const t0 = Date.now();
      b.subscribe(recordTopic('c', 'k'), () => done(Date.now() - t0));
    });
    await a.commit([{ kind: 'record.put', collection: 'c', key: 'k', value: 1 }]);
    const ms = await Promise.race([heard, new Promise<number>((r) => setTimeout(() => r(Infinity), 5_000))]);
    assert.ok(ms < 2_000, `heard after ${ms} ms (the poll is 60 s)`);
  });

  test('without listenUrl the pooled LISTEN delivers nothing, and the fallback poll still tells the other storage', async () => {
    const [a, b] = [await open({ listen: false, pollMs: 200 }), await open({ listen: false, pollMs: 200 })];
    const heard = new Promise<void>((done) => b.subscribe(recordTopic('c', 'k2'), done));
    await a.commit([{ kind: 'record.put', collection: 'c', key: 'k2', value: 1 }]);
    const ok = await Promise.race([heard.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))]);
    assert.ok(ok, 'the poll found the commit');
  });

  test.run();
}
