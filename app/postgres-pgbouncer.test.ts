/**
 * Several `kw serve --storage postgres` processes reaching one database through PgBouncer in
 * transaction pooling mode (`--database-url` pooled, `--database-listen-url` direct): they start at
 * once without hanging and print one demo token, a process started later does not hang either, one
 * document stays linear, an idempotency key applies once, a budget is exact, and a revocation on one
 * process is refused on every other at once (LISTEN over the direct URL, not the 5 s poll).
 * Skipped (with the reason printed) where PgBouncer or the server is absent.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freshDatabase, type FreshDatabase } from '../adapters/postgres/postgres-kit.ts';
import { pgbouncerUnavailableReason, startPgBouncer, type PgBouncer } from '../adapters/postgres/pgbouncer-kit.ts';
import { call, createDocument, editOnce, idemKey, appendParagraph, startProcesses, type ServerProcess } from './postgres-cluster-kit.ts';

const WRITERS = 8;
const EDITS = 20;

const test = suite('postgres through PgBouncer: several processes');
const reason = await pgbouncerUnavailableReason();
let db: FreshDatabase | null = null;
let bouncer: PgBouncer | null = null;
let procs: ServerProcess[] = [];
const startedLater: ServerProcess[] = [];

/** `kw serve` through the pooler, LISTENing direct. */
const start = (n: number) => startProcesses(n, bouncer!.pooled(db!.url), { extra: ['--database-listen-url', db!.url] });

if (reason !== null) {
  test('several processes through PgBouncer (skipped)', () => {
    console.log(`  (skipped: ${reason})`);
  });
} else {
  test.before(async () => {
    db = await freshDatabase();
    bouncer = await startPgBouncer();
    try {
      procs = await start(3);
    } catch (error) {
      console.error(`  starting the kw serve processes failed: ${(error as Error).message}`);
    }
  });
  test.before.each(() => {
    assert.is(procs.length, 3, 'the three kw serve processes started');
  });
  test.after(async () => {
    await Promise.all([...procs, ...startedLater].map((p) => p.stop('SIGKILL')));
    await bouncer?.stop();
    await db?.drop();
  });

  test('three processes started at once through the pooler print the same demo token; a fourth started later does not hang', async () => {
    const tokens = new Set(procs.map((p) => p.demoToken));
    assert.is(tokens.size, 1, [...tokens].join(' '));
    assert.ok(procs[0]!.demoToken);
    const t0 = performance.now();
    const [late] = await start(1);
    startedLater.push(late!);
    assert.ok(performance.now() - t0 < 60_000);
    assert.is(late!.demoToken, procs[0]!.demoToken, 'the later process reuses the seed');
    for (const p of [...procs, late!]) assert.is((await call(p.url, 'GET', '/api/v1/auth', p.demoToken!)).status, 200);
    const listed = await call(procs[2]!.url, 'GET', '/api/v1/documents?limit=50', procs[0]!.demoToken!);
    assert.is(listed.json.data.items.length, 2, 'seeded once');
  });

  test(`${WRITERS} writers × ${EDITS} edits on one document over three processes through the pooler: versions 2..N without gap or duplicate`, async () => {
    const token = procs[0]!.demoToken!;
    const ref = await createDocument(procs[0]!.url, token, 'Hot through the pooler');
    const bases = () => procs.map((p) => p.url);
    const results = await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        const out = [];
        for (let e = 0; e < EDITS; e++) out.push(await editOnce(bases, w + e, token, ref, `w${w}-e${e}`));
        return out;
      }),
    );
    const all = results.flat();
    assert.ok(all.every((r) => r.status === 200), JSON.stringify(all.filter((r) => r.status !== 200).slice(0, 3)));
    assert.equal(all.map((r) => r.resultingVersion!).sort((a, b) => a - b), Array.from({ length: WRITERS * EDITS }, (_, i) => i + 2));
    for (const p of procs) assert.is((await call(p.url, 'GET', `/api/v1/documents/${ref}`, token)).json.data.version, WRITERS * EDITS + 1);
  });

  test('50 concurrent requests with one idempotency key through the pooler: one application, 49 replays', async () => {
    const token = procs[0]!.demoToken!;
    const ref = await createDocument(procs[1]!.url, token, 'Once');
    const head = await fetch(`${procs[2]!.url}/api/v1/documents/${ref}`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
    const key = idemKey();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(procs[i % 3]!.url, 'POST', `/api/v1/documents/${ref}/mutations`, token, {
          headers: { 'idempotency-key': key, 'service-if-revision': head.headers.get('service-revision')! },
          body: appendParagraph('exactly once'),
        }),
      ),
    );
    assert.equal(answers.map((a) => a.status), Array(50).fill(200));
    assert.is(answers.filter((a) => a.json.receipt.idempotency === 'replayed').length, 49);
    assert.is((await call(procs[0]!.url, 'GET', `/api/v1/documents/${ref}`, token)).json.data.version, 2);
  });

  test('a budget of 60 spent from three processes at once through the pooler: exactly 60 successes', async () => {
    const created = await call(procs[0]!.url, 'POST', '/operator/v1/credentials', procs[0]!.operatorKey, { body: { label: 'budget', scopes: ['document:read'], requestBudget: 60 } });
    assert.is(created.status, 201, JSON.stringify(created.json));
    const token = created.json.data.token as string;
    const statuses = (await Promise.all(Array.from({ length: 90 }, (_, i) => call(procs[i % 3]!.url, 'GET', '/api/v1/documents?limit=1', token)))).map((a) => a.status);
    assert.is(statuses.filter((s) => s === 200).length, 60);
    assert.is(statuses.filter((s) => s === 429).length, 30);
  });

  test('a token revoked on one process is refused by every other within 1 s (LISTEN over --database-listen-url; the poll takes 5 s)', async () => {
    const [a, b, c] = procs as [ServerProcess, ServerProcess, ServerProcess];
    const created = await call(a.url, 'POST', '/operator/v1/credentials', a.operatorKey, { body: { label: 'to revoke', scopes: ['document:read'] } });
    assert.is(created.status, 201, JSON.stringify(created.json));
    const token = created.json.data.token as string;
    // Every process has verified (and cached) it.
    for (const p of procs) assert.is((await call(p.url, 'GET', '/api/v1/auth', token)).status, 200);
    const credentialRef = (await call(a.url, 'GET', '/api/v1/auth', token)).json.data.credentialRef as string;
    const link = await call(a.url, 'POST', '/operator/v1/sign-in-links', a.operatorKey, { body: {} });
    assert.is(link.status, 201, JSON.stringify(link.json));
    const signedIn = await fetch(link.json.data.url as string, { redirect: 'manual' });
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fetch(`${a.url}/settings/api`, { headers: { cookie } })).text())![1]!;
    const revoked = await fetch(`${a.url}/settings/api/tokens/${credentialRef}/revoke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf }).toString(),
    });
    assert.is(revoked.status, 303);
    const t0 = performance.now();
    for (const p of [b, c]) {
      for (;;) {
        const status = (await call(p.url, 'GET', '/api/v1/auth', token)).status;
        if (status === 401) break;
        assert.ok(performance.now() - t0 < 1_000, `${p.url} still accepts the revoked token after ${Math.round(performance.now() - t0)} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }
  });
}

test.run();
