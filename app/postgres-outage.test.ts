/**
 * Connection loss: while the database refuses connections (its backends terminated, new ones not
 * allowed), requests answer 503 TEMPORARILY_UNAVAILABLE with Retry-After; once it is back the server
 * recovers by itself, and every acknowledged write is there. Skipped (printed) without a server.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { adminQuery, freshDatabase, serverUnavailableReason } from '../adapters/postgres/postgres-kit.ts';
import { appendParagraph, call, createDocument, idemKey } from './postgres-cluster-kit.ts';
import { serve } from './serve.ts';

const reason = await serverUnavailableReason();

test('the database going away and coming back: 503 with Retry-After meanwhile, then recovery, nothing acknowledged lost', async () => {
  if (reason !== null) {
    console.log(`  (skipped: ${reason})`);
    return;
  }
  const db = await freshDatabase();
  const logs: { level?: string; msg?: string }[] = [];
  const server = await serve({ port: 0, storage: 'postgres', databaseUrl: db.url, seed: 'demo', log: (line) => logs.push(line) });
  try {
    const token = server.demo!.token;
    const refs = await Promise.all([0, 1, 2, 3].map((i) => createDocument(server.url, token, `Outage ${i}`)));
    let stop = false;
    const unavailable: { retryAfter: string | null; code: string }[] = [];
    const writers = refs.map(async (ref, w) => {
      const acked: string[] = [];
      let revision = (await fetch(`${server.url}/api/v1/documents/${ref}`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } })).headers.get('service-revision')!;
      for (let e = 0; !stop || e < 5; e++) {
        const key = idemKey();
        const text = `o${w}-e${e}`;
        for (;;) {
          const r = await call(server.url, 'POST', `/api/v1/documents/${ref}/mutations`, token, { headers: { 'idempotency-key': key, 'service-if-revision': revision }, body: appendParagraph(text) });
          if (r.status === 200) {
            acked.push(text);
            revision = r.headers.get('service-revision')!;
            break;
          }
          assert.is(r.status, 503, JSON.stringify(r.json));
          unavailable.push({ retryAfter: r.headers.get('retry-after'), code: r.json.error.code });
          await new Promise((done) => setTimeout(done, 50));
        }
      }
      return { ref, acked };
    });
    await new Promise((done) => setTimeout(done, 300));
    await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
    await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db.name]);
    await new Promise((done) => setTimeout(done, 1_000));
    await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    stop = true;
    const results = await Promise.all(writers);
    assert.ok(unavailable.length > 0, 'some requests answered 503 while the database was away');
    // Each 503 is logged as a warning through the server's log (not printed by the test run).
    assert.ok(logs.length >= unavailable.length, `${logs.length} log lines for ${unavailable.length} answers 503`);
    for (const line of logs) assert.equal([line.level, line.msg], ['warn', 'storage unavailable']);
    for (const u of unavailable) {
      assert.is(u.code, 'TEMPORARILY_UNAVAILABLE');
      assert.ok(u.retryAfter !== null && Number(u.retryAfter) >= 1, `Retry-After: ${u.retryAfter}`);
    }
    for (const { ref, acked } of results) {
      const read = await call(server.url, 'GET', `/api/v1/documents/${ref}`, token);
      assert.is(read.status, 200);
      assert.is(read.json.data.version, 1 + acked.length, 'one version per acknowledged write, none lost');
      const markdown = await fetch(`${server.url}/api/v1/documents/${ref}?format=markdown`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.text());
      for (const text of acked) assert.ok(markdown.includes(text), `${text} is there`);
    }
  } finally {
    await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => {});
    await server.close().catch(() => {});
    await db.drop();
  }
});

test.run();
