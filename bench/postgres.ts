/**
 * `npm run bench -- postgres`: `kw serve --storage postgres` processes on the server at
 * 127.0.0.1:5432 against pgbench's single-row update rate measured in the same run.
 * - baseline: `pgbench -N` (8 clients, 2 threads) on a scratch database (`pgbench -i`);
 * - edits/s (200 answers) on 1 and 3 processes, 8 writers on 8 different documents, and 8 writers on
 *   one hot document (a stale revision is read again and retried, as an agent would), the same on
 *   memory storage (the engine's ceiling), and 1 and 3 processes through PgBouncer in transaction
 *   pooling mode (skipped without /usr/sbin/pgbouncer); each row with p50/p99, requests per edit,
 *   database transactions per edit (`pg_stat_database.xact_commit` delta) and the server processes'
 *   CPU per edit;
 * - `KW_BENCH_PG_BEFORE=DIR`: every `kw serve` case also with the processes of the checkout DIR
 *   ("before"), in the same run;
 * - the full-size linearity run: 32 writers × 200 edits on one document over 3 processes
 *   (KW_BENCH_PG_FULL=1, or `only` for just this run; minutes on a busy machine), checked for versions 2..N without gap or duplicate;
 * - the adapter alone (KW_BENCH_PG=adapter for just these, `all` to add them): commits/s of
 *   edit-shaped batches on 1-3 storages, different documents and one hot document, each committer
 *   on one storage, serialised per document within a storage as the engine's keyed lock does
 *   (requests per edit: commit attempts per success).
 * KW_BENCH_SECONDS sets the time per case (default 8), KW_BENCH_PG_WRITERS the writers (default 8); KW_BENCH_PG_CASES=REGEX runs only the `kw serve`
 * cases whose name matches (e.g. `3 processes, different`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { adminQuery, ADMIN_URL, freshDatabase, serverUnavailableReason } from '../adapters/postgres/postgres-kit.ts';
import { postgresStorage } from '../adapters/postgres/index.ts';
import { pgbouncerUnavailableReason, startPgBouncer, type PgBouncer } from '../adapters/postgres/pgbouncer-kit.ts';
import { isStorageConflict } from '../src/ports.ts';
import { call, createDocument, editOnce, idemKey, startProcesses } from '../app/postgres-cluster-kit.ts';
import { recordTable } from './report.ts';

const SECONDS = Number(process.env.KW_BENCH_SECONDS ?? 8);
const WRITERS = Number(process.env.KW_BENCH_PG_WRITERS ?? 8);

function pct(sorted: number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** pgbench -N tps with 8 clients on a scratch database. */
function pgbenchTps(): { tps: number; latencyMs: number } | null {
  const name = `kw_bench_pgbench_${process.pid}`;
  const url = new URL(ADMIN_URL);
  const common = ['-h', url.hostname, '-p', url.port || '5432', '-U', decodeURIComponent(url.username || 'postgres')];
  spawnSync('dropdb', [...common, '--if-exists', name]);
  if (spawnSync('createdb', [...common, name]).status !== 0) return null;
  try {
    if (spawnSync('pgbench', ['-i', '-q', ...common, name], { stdio: 'ignore' }).status !== 0) return null;
    const run = spawnSync('pgbench', ['-N', '-c', '8', '-j', '2', '-T', String(SECONDS), ...common, name], { encoding: 'utf8' });
    const tps = /tps = ([\d.]+)/.exec(run.stdout ?? '');
    const latency = /latency average = ([\d.]+) ms/.exec(run.stdout ?? '');
    return tps ? { tps: Number(tps[1]), latencyMs: latency ? Number(latency[1]) : Number.NaN } : null;
  } finally {
    spawnSync('dropdb', [...common, '--if-exists', name]);
  }
}

interface CaseResult {
  edits: number;
  perSec: number;
  p50: number;
  p99: number;
  attempts: number;
  /** Database transactions committed (`pg_stat_database.xact_commit` delta) per successful edit. */
  xactPerEdit?: number;
  /** CPU time of the server processes (user + system) per successful edit, ms. */
  cpuMsPerEdit?: number;
}

/** Where a case's `kw serve` processes come from and how they reach the database. */
interface CaseSetup {
  /** The checkout whose `app/cli.ts` runs; default: this one. */
  root?: string;
  /** Through PgBouncer (transaction pooling): the pooled URL, and a direct listen URL when the checkout has the flag. */
  bouncer?: PgBouncer;
  listenDirect?: boolean;
}

/** The committed transactions of `db` so far (after stats of idle backends were flushed). */
async function xactCommits(name: string): Promise<number> {
  const { rows } = await adminQuery('SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [name]);
  return Number(rows[0]?.xact_commit ?? 0);
}

/** CPU time (user + system) of process `pid` so far, ms (Linux /proc; NaN elsewhere). */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Keep-alive connections for the load generator (undici's fetch costs the client more CPU than an edit costs the server). */
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request on a kept-alive connection; the body is read, not parsed. */
function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; revision: string | null; text: string }> {
  return new Promise((done, fail) => {
    const req = http.request(`${base}${path}`, { method, agent, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, revision: (res.headers['service-revision'] as string | undefined) ?? null, text }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}

const BLOCKS = 10;

/** A document of BLOCKS paragraphs; resolves with its ref, block ids and revision. */
async function tenBlockDocument(base: string, token: string, title: string): Promise<{ ref: string; blockIds: string[]; revision: string }> {
  const ref = await createDocument(base, token, title);
  const auth = { authorization: `Bearer ${token}` };
  const head = await send(base, 'HEAD', `/api/v1/documents/${ref}`, auth);
  const body = JSON.stringify({
    v: 1,
    intent: 'bench setup',
    mutation: { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: Array.from({ length: BLOCKS }, (_, i) => ({ type: 'paragraph', markdown: `Paragraph ${i}` })) },
  });
  const r = await send(base, 'POST', `/api/v1/documents/${ref}/mutations`, { ...auth, 'idempotency-key': idemKey(), 'service-if-revision': head.revision! }, body);
  if (r.status !== 200) throw new Error(`setup answered ${r.status}: ${r.text}`);
  return { ref, blockIds: (JSON.parse(r.text) as { data: { receipt: { affectedBlockIds: string[] } } }).data.receipt.affectedBlockIds, revision: r.revision! };
}

/** The body of a single-block edit (the document stays BLOCKS blocks long, as in bench/http.ts). */
const editBody = (blockId: string, text: string) => JSON.stringify({ v: 1, intent: 'bench edit', mutation: { kind: 'edit', blockId, block: { type: 'paragraph', markdown: text } } });

/**
 * `writers` writers editing for SECONDS over `n` processes, each on its own 10-block document or all
 * on one: each edit replaces one block's text (POST …/mutations with the revision of the writer's
 * last answer); a 412 (another writer moved the document) reads the revision again (HEAD) and
 * resends as a new intent, as an agent would.
 */
async function editCase(n: number, hot: boolean, memory = false, setup: CaseSetup = {}): Promise<CaseResult> {
  const db = memory ? null : await freshDatabase();
  // A short budget window: the demo token's 10,000 requests per window must not end the run (a quiet machine spent 10,000 in 2 s).
  const extra = ['--budget-window', '200ms'];
  if (db && setup.bouncer && setup.listenDirect) extra.push('--database-listen-url', db.url);
  const url = db === null ? null : setup.bouncer ? setup.bouncer.pooled(db.url) : db.url;
  const procs = await startProcesses(n, url, { extra, ...(setup.root === undefined ? {} : { root: setup.root }) });
  try {
    const token = procs[0]!.demoToken!;
    const auth = { authorization: `Bearer ${token}` };
    const bases = procs.map((p) => p.url);
    const hotDoc = hot ? await tenBlockDocument(bases[0]!, token, 'Hot') : null;
    const docs = await Promise.all(Array.from({ length: WRITERS }, (_, i) => hotDoc ?? tenBlockDocument(bases[i % n]!, token, `Doc ${i}`)));
    const latencies: number[] = [];
    let attempts = 0;
    await new Promise((r) => setTimeout(r, 1_200)); // idle backends flush their statistics
    const xact0 = db ? await xactCommits(db.name) : 0;
    const cpu0 = procs.reduce((t, p) => t + cpuMs(p.child.pid), 0);
    const until = performance.now() + SECONDS * 1000;
    await Promise.all(
      docs.map(async (doc, w) => {
        let revision: string | null = doc.revision;
        for (let e = 0; performance.now() < until; e++) {
          const began = performance.now();
          for (let a = 0; performance.now() < until; a++) {
            const base = bases[(w + e + a) % n]!;
            revision ??= (await send(base, 'HEAD', `/api/v1/documents/${doc.ref}`, auth)).revision;
            attempts++;
            const r = await send(base, 'POST', `/api/v1/documents/${doc.ref}/mutations`, { ...auth, 'idempotency-key': idemKey(), 'service-if-revision': revision! }, editBody(doc.blockIds[e % BLOCKS]!, `w${w}-e${e}`));
            if (r.status === 200) {
              revision = r.revision;
              latencies.push(performance.now() - began);
              break;
            }
            if (r.status !== 412 && r.status !== 409) throw new Error(`edit answered ${r.status}: ${r.text}`);
            revision = null;
          }
        }
      }),
    );
    const cpu = procs.reduce((t, p) => t + cpuMs(p.child.pid), 0) - cpu0;
    await new Promise((r) => setTimeout(r, 1_200));
    const xact = db ? (await xactCommits(db.name)) - xact0 : Number.NaN;
    latencies.sort((a, b) => a - b);
    const edits = latencies.length;
    return { edits, perSec: edits / SECONDS, p50: pct(latencies, 50), p99: pct(latencies, 99), attempts, xactPerEdit: xact / Math.max(1, edits), cpuMsPerEdit: cpu / Math.max(1, edits) };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await db?.drop();
  }
}

/**
 * The adapter alone (no HTTP, no engine): 8 committers for SECONDS on `n` storages (each its own
 * pool and LISTEN connection, as `n` processes would hold) in this process, each commit an append
 * with an idempotency-like record, like an edit's. Committer w commits through storage w % n (on
 * different documents each storage has documents of its own; on one hot document all storages
 * race). A lane remembers the version it committed and reads the head only after a conflict (the
 * row lock's loser, or another storage moved the document).
 * @remarks Earlier runs had a committer change storage with every commit: each storage's lane then
 * remembered a version the other storage had moved past, so on different documents every commit
 * conflicted once by construction (2.00 attempts per commit). The engine does not do that: it reads
 * the stored head before every mutation (src/documents/cache.ts), so a remembered version is never
 * stale unless a racing writer moved the document.
 */
async function storageCase(n: number, hot: boolean): Promise<CaseResult> {
  const db = await freshDatabase();
  const storages = await Promise.all(Array.from({ length: n }, () => postgresStorage({ url: db.url })));
  try {
    const head = (ref: string, version: number) => ({ documentRef: ref, spaceRef: 's', accountId: 'a', title: 't', version, snapshotVersion: 1, generation: 0, contentSha256: '', blockCount: 1, createdAt: 1, updatedAt: Date.now() });
    const refs = Array.from({ length: WRITERS }, (_, i) => (hot ? 'hot' : `doc-${i}`));
    for (const ref of new Set(refs)) await storages[0]!.commit([{ kind: 'document.create', head: head(ref, 1), snapshot: new Uint8Array(64) }]);
    const latencies: number[] = [];
    let attempts = 0;
    const update = new Uint8Array(60).fill(7);
    const until = performance.now() + SECONDS * 1000;
    // As the engine does: one lane per document and process (its keyed lock), which remembers the
    // version it committed (its cache) and reads the head again only after losing a race.
    const lanes = new Map<string, { tail: Promise<unknown>; version: number | null }>();
    const laneOf = (storage: number, ref: string) => {
      const id = `${storage}:${ref}`;
      let lane = lanes.get(id);
      if (!lane) lanes.set(id, (lane = { tail: Promise.resolve(), version: null }));
      return lane;
    };
    await Promise.all(
      refs.map(async (ref, w) => {
        for (let e = 0; performance.now() < until; e++) {
          const at = w % n;
          const storage = storages[at]!;
          const lane = laneOf(at, ref);
          const began = performance.now();
          const edit = lane.tail.then(async () => {
            for (;;) {
              attempts++;
              lane.version ??= (await storage.getDocumentHead(ref))!.version;
              try {
                await storage.commit([
                  { kind: 'document.append', head: head(ref, lane.version + 1), update },
                  { kind: 'record.put', collection: 'idempotency', key: `w${w}-${e}-${attempts}`, value: { n: e }, expectedRevision: null },
                ]);
                lane.version++;
                return;
              } catch (error) {
                if (!isStorageConflict(error)) throw error;
                lane.version = null;
              }
            }
          });
          lane.tail = edit.catch(() => {});
          await edit;
          latencies.push(performance.now() - began);
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    const sum = (k: 'conflicts' | 'retries' | 'connectionsOpened') => storages.reduce((t, s) => t + (s.stats()[k] ?? 0), 0);
    console.log(`  adapter, ${n} storage(s), ${hot ? 'hot' : 'different documents'}: ${latencies.length} commits, ${sum('conflicts')} conflicts, ${sum('retries')} retries, ${sum('connectionsOpened')} pool connections opened`);
    return { edits: latencies.length, perSec: latencies.length / SECONDS, p50: pct(latencies, 50), p99: pct(latencies, 99), attempts };
  } finally {
    await Promise.all(storages.map((s) => s.close()));
    await db.drop();
  }
}

/** 32 writers × 200 edits on one document over 3 processes; versions checked. */
async function fullLinearity(): Promise<{ edits: number; seconds: number; ok: boolean }> {
  const db = await freshDatabase();
  const procs = await startProcesses(3, db.url);
  try {
    const token = procs[0]!.demoToken!;
    const bases = () => procs.map((p) => p.url);
    const ref = await createDocument(procs[0]!.url, token, 'Full size');
    const began = performance.now();
    const results = await Promise.all(
      Array.from({ length: 32 }, async (_, w) => {
        const out = [];
        for (let e = 0; e < 200; e++) out.push(await editOnce(bases, w + e, token, ref, `w${w}-e${e}`));
        return out;
      }),
    );
    const seconds = (performance.now() - began) / 1000;
    const ok200 = results.flat().filter((r) => r.status === 200);
    const versions = ok200.map((r) => r.resultingVersion!).sort((a, b) => a - b);
    const contiguous = versions.every((v, i) => v === i + 2);
    const head = await call(procs[1]!.url, 'GET', `/api/v1/documents/${ref}`, token);
    return { edits: ok200.length, seconds, ok: contiguous && ok200.length === 6400 && head.json.data.version === 6401 };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await db.drop();
  }
}

/** One row of the table: the case, its checkout, and its figures against pgbench. */
function rowOf(name: string, checkout: string, r: CaseResult, base: { tps: number } | null): string[] {
  const fixed = (v: number | undefined, d: number) => (v === undefined || Number.isNaN(v) ? '' : v.toFixed(d));
  return [name, checkout, r.perSec.toFixed(0), base ? `${((r.perSec / base.tps) * 100).toFixed(0)}%` : '', r.p50.toFixed(1), r.p99.toFixed(1), (r.attempts / Math.max(1, r.edits)).toFixed(2), fixed(r.xactPerEdit, 2), fixed(r.cpuMsPerEdit, 2)];
}

/**
 * Runs the PostgreSQL benchmark and prints its tables.
 * @remarks `KW_BENCH_PG_BEFORE=/path/of/another/checkout` runs every `kw serve` case twice in the
 * same run, with that checkout's processes ("before") and this one's ("after"); through PgBouncer a
 * checkout without `--database-listen-url` LISTENs over the pooled URL.
 */
export async function runPostgresBench(): Promise<void> {
  const reason = await serverUnavailableReason();
  if (reason !== null) {
    console.log(`postgres bench skipped: ${reason}`);
    return;
  }
  await adminQuery('SELECT 1');
  if (process.env.KW_BENCH_PG_FULL === 'only') return printFull();
  const base = pgbenchTps();
  console.log(`\npgbench -N, 8 clients, ${SECONDS} s: ${base ? `${base.tps.toFixed(0)} tps (latency ${base.latencyMs.toFixed(2)} ms)` : 'not available'}`);
  const rows: string[][] = [['case', 'checkout', 'edits/s', 'vs pgbench', 'p50 ms', 'p99 ms', 'requests per edit', 'transactions per edit', 'server CPU ms per edit']];
  if (base) rows.push(['pgbench -N (8 clients)', '', base.tps.toFixed(0), 'baseline', base.latencyMs.toFixed(2), '', '', '1.00', '']);
  const only = process.env.KW_BENCH_PG_CASES === undefined ? null : new RegExp(process.env.KW_BENCH_PG_CASES);
  const wanted = (name: string) => only === null || only.test(name);
  const push = (row: string[]) => {
    rows.push(row);
    console.log(row.join(' | '));
  };
  const adapterOnly = process.env.KW_BENCH_PG === 'adapter';
  if (!adapterOnly) {
    const before = process.env.KW_BENCH_PG_BEFORE;
    const checkouts: { label: string; root?: string; listenFlag: boolean }[] = before ? [{ label: 'before', root: before, listenFlag: false }, { label: 'after', listenFlag: true }] : [{ label: 'this', listenFlag: true }];
    // The engine's own ceiling on this machine: the same loads on memory storage, no database.
    for (const c of checkouts) {
      const setup = c.root === undefined ? {} : { root: c.root };
      for (const hot of [false, true]) {
        const name = `1 process, memory storage, ${hot ? 'one hot document' : 'different documents'} (${WRITERS} writers)`;
        if (wanted(name)) push(rowOf(name, c.label, await editCase(1, hot, true, setup), base));
      }
    }
    for (const hot of [false, true]) {
      for (const n of [1, 3]) {
        for (const c of checkouts) {
          const name = `${n} process${n > 1 ? 'es' : ''}, ${hot ? 'one hot document' : 'different documents'} (${WRITERS} writers)`;
          if (wanted(name)) push(rowOf(name, c.label, await editCase(n, hot, false, c.root === undefined ? {} : { root: c.root }), base));
        }
      }
    }
    const noBouncer = await pgbouncerUnavailableReason();
    if (noBouncer !== null) console.log(`  through PgBouncer: skipped (${noBouncer})`);
    else {
      const bouncer = await startPgBouncer();
      try {
        for (const n of [1, 3]) {
          for (const c of checkouts) {
            const name = `${n} process${n > 1 ? 'es' : ''} through PgBouncer (transaction pooling), different documents (${WRITERS} writers)`;
            if (!wanted(name)) continue;
            try {
              push(rowOf(name, c.label, await editCase(n, false, false, { ...(c.root === undefined ? {} : { root: c.root }), bouncer, listenDirect: c.listenFlag }), base));
            } catch (error) {
              // Before the pooled-connection work a second process hung at start in pg_advisory_lock.
              push([name, c.label, `failed: ${(error as Error).message.split('\n')[0]!.slice(0, 80)}`, '', '', '', '', '', '']);
            }
          }
        }
      } finally {
        await bouncer.stop();
      }
    }
  }
  if (adapterOnly || process.env.KW_BENCH_PG === 'all') {
    for (const hot of [false, true]) {
      for (const n of [1, 2, 3]) {
        const r = await storageCase(n, hot);
        push(rowOf(`adapter only: ${n} storage${n > 1 ? 's' : ''}, ${hot ? 'one hot document' : 'different documents'} (${WRITERS} committers)`, 'this', r, base));
      }
    }
  }
  recordTable('PostgreSQL: edits/s through kw serve processes vs pgbench -N', rows, 2);
  console.log('\n' + rows.map((r) => `| ${r.join(' | ')} |`).join('\n'));
  if (process.env.KW_BENCH_PG_FULL === '1') await printFull();
}

async function printFull(): Promise<void> {
  const full = await fullLinearity();
  console.log(`\nfull size: 32 writers × 200 edits on one document over 3 processes: ${full.edits} edits in ${full.seconds.toFixed(1)} s (${(full.edits / full.seconds).toFixed(0)}/s), versions 2..6401 without gap or duplicate: ${full.ok ? 'yes' : 'NO'}`);
}
