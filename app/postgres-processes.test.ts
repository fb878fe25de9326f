/**
 * Several `kw serve --storage postgres` processes on one fresh database behave as one service:
 * one document stays linear, an idempotency key applies once, an SSE stream on one process sees
 * what another emits, a budget is exact, and a process killed with SIGKILL loses no acknowledged
 * write. Skipped (with the reason printed) when no PostgreSQL server answers at 127.0.0.1:5432.
 * Scaled down for `npm test` (8 writers × 25 edits); `KW_BENCH_PG_FULL=only npm run bench -- postgres` runs 32 × 200.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freshDatabase, serverUnavailableReason, type FreshDatabase } from '../adapters/postgres/postgres-kit.ts';
import { call, createDocument, editOnce, idemKey, appendParagraph, startProcesses, type ServerProcess } from './postgres-cluster-kit.ts';

/** The document as Markdown text. */
const markdownOf = (base: string, token: string, ref: string) =>
  fetch(`${base}/api/v1/documents/${ref}?format=markdown`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.text());

const WRITERS = 8;
const EDITS = 25;

const test = suite('postgres: several processes on one database');
const reason = await serverUnavailableReason();
let db: FreshDatabase | null = null;
let procs: ServerProcess[] = [];

if (reason !== null) {
  test('several processes on one database (skipped)', () => {
    console.log(`  (skipped: ${reason})`);
  });
} else {
  test.before(async () => {
    db = await freshDatabase();
    try {
      procs = await startProcesses(3, db.url);
    } catch (error) {
      // uvu does not report a failing hook: say why, and every test fails on the empty list.
      console.error(`  starting the kw serve processes failed: ${(error as Error).message}`);
    }
  });
  test.before.each(() => {
    assert.is(procs.length, 3, 'the three kw serve processes started');
  });
  test.after(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    await db?.drop();
  });

  test('three processes started at once migrate once, seed once and print the same demo token', async () => {
    const tokens = new Set(procs.map((p) => p.demoToken));
    assert.is(tokens.size, 1, [...tokens].join(' '));
    assert.ok(procs[0]!.demoToken);
    for (const p of procs) assert.is((await call(p.url, 'GET', '/api/v1/auth', p.demoToken!)).status, 200);
    const listed = await call(procs[2]!.url, 'GET', '/api/v1/documents?limit=50', procs[0]!.demoToken!);
    assert.is(listed.json.data.items.length, 1 + 1, 'the example document and the report of the demo job, once');
  });

  test(`${WRITERS} writers × ${EDITS} edits on one document over three processes: versions 2..N without gap or duplicate`, async () => {
    const token = procs[0]!.demoToken!;
    const ref = await createDocument(procs[0]!.url, token, 'Hot document');
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
    const versions = all.map((r) => r.resultingVersion!).sort((a, b) => a - b);
    assert.equal(versions, Array.from({ length: WRITERS * EDITS }, (_, i) => i + 2), 'each 200 made its own next version');
    for (const p of procs) {
      const read = await call(p.url, 'GET', `/api/v1/documents/${ref}`, token);
      assert.is(read.json.data.version, WRITERS * EDITS + 1, `the version every process reads (${p.url})`);
    }
    const markdown = await markdownOf(procs[1]!.url, token, ref);
    for (let w = 0; w < WRITERS; w++) for (let e = 0; e < EDITS; e++) assert.ok(markdown.includes(`w${w}-e${e}`), `w${w}-e${e} is in the document`);
  });

  test('50 concurrent requests with one idempotency key over three processes: one application, 49 replays', async () => {
    const token = procs[0]!.demoToken!;
    const ref = await createDocument(procs[1]!.url, token, 'Once');
    const head = await fetch(`${procs[2]!.url}/api/v1/documents/${ref}`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
    const revision = head.headers.get('service-revision')!;
    const key = idemKey();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(procs[i % 3]!.url, 'POST', `/api/v1/documents/${ref}/mutations`, token, {
          headers: { 'idempotency-key': key, 'service-if-revision': revision },
          body: appendParagraph('exactly once'),
        }),
      ),
    );
    assert.equal(answers.map((a) => a.status), Array(50).fill(200), JSON.stringify(answers.find((a) => a.status !== 200)?.json));
    assert.is(answers.filter((a) => a.json.receipt.idempotency === 'created').length, 1);
    assert.is(answers.filter((a) => a.json.receipt.idempotency === 'replayed').length, 49);
    assert.is(new Set(answers.map((a) => a.json.data.receipt.operationRef)).size, 1, 'one receipt');
    assert.is((await call(procs[0]!.url, 'GET', `/api/v1/documents/${ref}`, token)).json.data.version, 2);
  });

  test('an SSE stream on process A receives the cancellation a job emits through process B within 1 s', async () => {
    const token = procs[0]!.demoToken!;
    const seed = await fetch(`${procs[0]!.url}/api/v1/research-jobs?limit=20`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
    const waiting = (seed.data.items as { jobId: string; state: string }[]).find((j) => j.state === 'waiting');
    assert.ok(waiting, 'the demo seed has a waiting (cancellable) job');
    const controller = new AbortController();
    const stream = await fetch(`${procs[0]!.url}/api/v1/research-jobs/${waiting.jobId}/events`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    assert.is(stream.status, 200);
    const reader = stream.body!.getReader();
    let text = '';
    let cancelledAt = 0;
    const seen = (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return 0;
        text += decoder.decode(value, { stream: true });
        if (cancelledAt > 0 && /"state":"cancelled"/.test(text)) return performance.now();
      }
    })();
    await new Promise((done) => setTimeout(done, 200)); // the stream has replayed what was there
    assert.not.match(text, /"state":"cancelled"/);
    const job = await call(procs[1]!.url, 'GET', `/api/v1/research-jobs/${waiting.jobId}`, token);
    cancelledAt = performance.now();
    const cancel = await call(procs[1]!.url, 'POST', `/api/v1/research-jobs/${waiting.jobId}/cancellations`, token, {
      headers: { 'idempotency-key': idemKey(), 'service-if-revision': job.headers.get('service-revision')! },
      body: { v: 1 },
    });
    assert.is(cancel.status, 200, JSON.stringify(cancel.json));
    const arrived = await Promise.race([seen, new Promise<number>((done) => setTimeout(() => done(-1), 1_000))]);
    controller.abort();
    assert.ok(arrived > 0, `the cancellation reached process A's stream within 1 s; it got: ${text.slice(-400)}`);
  });

  test('a file upload prepared on one process, PUT on a second and finished on a third: its bytes wait in the shared database', async () => {
    const token = procs[0]!.demoToken!;
    const bytes = new TextEncoder().encode(`<!doctype html><html><head><title>Spooled</title></head><body><p>${'shared bytes '.repeat(2000)}</p></body></html>`);
    const prepared = await call(procs[0]!.url, 'POST', '/api/v1/library', token, {
      body: { type: 'prepare-upload', fileName: 'spooled.html', contentType: 'text/html', byteLength: bytes.byteLength, idempotencyKey: idemKey() },
    });
    assert.is(prepared.status, 201, JSON.stringify(prepared.json));
    const put = await fetch(`${procs[1]!.url}${prepared.json.data.upload.path}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    assert.is(put.status, 200, await put.clone().text());
    const finished = await call(procs[2]!.url, 'POST', '/api/v1/library', token, {
      body: { type: 'finish-upload', uploadId: prepared.json.data.upload.uploadId, idempotencyKey: idemKey() },
    });
    assert.is(finished.status, 201, JSON.stringify(finished.json));
  });

  test('a budget of 100 spent from three processes at once: exactly 100 successes', async () => {
    const created = await call(procs[0]!.url, 'POST', '/operator/v1/credentials', procs[0]!.operatorKey, {
      body: { label: 'budget test', scopes: ['document:read'], requestBudget: 100 },
    });
    assert.is(created.status, 201, JSON.stringify(created.json));
    const token = created.json.data.token as string;
    const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => call(procs[i % 3]!.url, 'GET', '/api/v1/documents?limit=1', token)));
    const statuses = answers.map((a) => a.status);
    assert.is(statuses.filter((s) => s === 200).length, 100);
    assert.is(statuses.filter((s) => s === 429).length, 50);
  });

  test('kill -9 of one process during writes: no acknowledged write is lost, the others keep serving', async () => {
    const token = procs[0]!.demoToken!;
    const refs = await Promise.all(Array.from({ length: 6 }, (_, i) => createDocument(procs[i % 3]!.url, token, `Survivor ${i}`)));
    let live = procs.map((p) => p.url);
    const bases = () => live;
    let done = 0;
    const victim = procs[2]!;
    const writers = refs.map(async (ref, w) => {
      const acked: string[] = [];
      for (let e = 0; e < 15; e++) {
        const text = `s${w}-e${e}`;
        const r = await editOnce(bases, w + e, token, ref, text);
        if (r.status === 200) acked.push(text);
        done++;
      }
      return { ref, acked };
    });
    while (done < 25) await new Promise((r) => setTimeout(r, 10));
    await victim.stop('SIGKILL');
    live = procs.slice(0, 2).map((p) => p.url);
    const results = await Promise.all(writers);
    assert.is(results.reduce((n, r) => n + r.acked.length, 0), 6 * 15, 'every edit was acknowledged in the end');
    for (const { ref, acked } of results) {
      const read = await call(procs[0]!.url, 'GET', `/api/v1/documents/${ref}`, token);
      assert.is(read.json.data.version, 1 + acked.length, `${ref}: one version per acknowledged edit`);
      const markdown = await markdownOf(procs[0]!.url, token, ref);
      for (const text of acked) assert.ok(markdown.includes(text), `${text} survived`);
    }
    assert.is((await call(procs[1]!.url, 'GET', '/api/v1/auth', token)).status, 200);
  });
}

test.run();
