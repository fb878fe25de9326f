/**
 * lowdb durability and the storage port's listings, each beside its baseline measured in the same
 * run: bare 200-byte appends with fdatasync for commits, a sorted array for pages.
 * `npm run bench -- lowdb`, or `tsx bench/lowdb.ts`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lowdbStorage } from '../adapters/lowdb/index.ts';
import { memoryStorage } from '../adapters/memory/index.ts';
import { createApiHandler } from '../src/api/handler.ts';
import { createEngine } from '../src/engine.ts';
import { listen } from '../transports/http/index.ts';
import { sortKeyOfTime, type BatchOp, type Storage } from '../src/ports.ts';
import { buildDocument, engineOp, fmt, rate, table } from './mutations.ts';

const SECONDS = Number(process.env.KW_BENCH_SECONDS ?? 1);

/** A case measured in slices: `slice(ms)` runs for about `ms` and returns how many ops it did. */
type Slice = (ms: number) => Promise<number>;

/** One awaited writer: `op` in a loop. */
function serial(op: () => unknown): Slice {
  return async (ms) => {
    let done = 0;
    const until = performance.now() + ms;
    while (performance.now() < until) {
      await op();
      done++;
    }
    return done;
  };
}

/** `writers` concurrent loops, each awaiting its own ops. */
function concurrent(writers: number, op: (writer: number) => () => Promise<unknown>): Slice {
  const loops = Array.from({ length: writers }, (_, w) => op(w));
  return async (ms) => {
    let done = 0;
    const until = performance.now() + ms;
    await Promise.all(
      loops.map(async (run) => {
        while (performance.now() < until) {
          await run();
          done++;
        }
      }),
    );
    return done;
  };
}

/**
 * Ops per second of each case, measured in interleaved 100 ms slices for about SECONDS each: the
 * disk's speed drifts (a VM's fdatasync can vary several-fold within a minute), so a baseline
 * measured before its candidate would not be comparable.
 */
async function interleaved(cases: Slice[]): Promise<number[]> {
  for (const run of cases) await run(50); // warm-up
  const done = cases.map(() => 0);
  const spent = cases.map(() => 0);
  for (let round = 0; round < SECONDS * 10; round++) {
    for (let c = 0; c < cases.length; c++) {
      const start = performance.now();
      done[c] += await cases[c](100);
      spent[c] += performance.now() - start;
    }
  }
  return done.map((n, c) => n / (spent[c] / 1000));
}

/** A storage-level commit like the engine's per edit: one ~200-byte Yjs update plus a small record. */
function commitOp(storage: Storage, writer: number): () => Promise<void> {
  let version = 1;
  const ref = `doc-${writer}`;
  const update = new Uint8Array(200).fill(7 + writer);
  const head = (v: number) => ({
    documentRef: ref, spaceRef: 'spc', accountId: 'acct', title: 'bench', version: v, snapshotVersion: 1, generation: 0,
    contentSha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', blockCount: 10, createdAt: 1, updatedAt: v,
  });
  let created = false;
  return async () => {
    const ops: BatchOp[] = created ? [] : [{ kind: 'document.create', head: head(1), snapshot: new Uint8Array(64) }];
    created = true;
    version++;
    ops.push({ kind: 'document.append', head: head(version), update });
    ops.push({ kind: 'record.put', collection: 'idem', key: `${ref}:${version}`, value: { status: 200, revision: version, at: Date.now() } });
    await storage.commit(ops);
  };
}

async function durability(dir: string): Promise<void> {
  const fd = openSync(join(dir, 'bare.log'), 'a');
  const line = Buffer.alloc(200, 120);
  const bareAppend = () => {
    writeSync(fd, line);
    fdatasyncSync(fd);
  };
  const raw = await lowdbStorage({ dir: join(dir, 'raw') });
  const rawOnLoop = await lowdbStorage({ dir: join(dir, 'raw-on-loop'), fsyncOffThread: false });
  const storage = await lowdbStorage({ dir: join(dir, 'db') });
  const engine = createEngine({ storage });
  const one = await buildDocument(engine, 10);
  const docs = await Promise.all(Array.from({ length: 64 }, () => buildDocument(engine, 10)));
  const [bare, rawSingle, rawConcurrent, loopSingle, loopConcurrent, single, many] = await interleaved([
    serial(bareAppend),
    serial(commitOp(raw, 0)),
    concurrent(64, (w) => commitOp(raw, w + 1)),
    serial(commitOp(rawOnLoop, 0)),
    concurrent(64, (w) => commitOp(rawOnLoop, w + 1)),
    serial(engineOp(engine, one, 'edit')),
    concurrent(64, (w) => engineOp(engine, docs[w], 'edit')),
  ]);
  closeSync(fd);
  const rawStats = raw.stats();
  const stats = storage.stats();
  await raw.close();
  await rawOnLoop.close();
  await engine.close();

  console.log('\nlowdb durability (each commit fdatasync-ed before it is acknowledged; cases interleaved in 100 ms slices)');
  const ofBare = (n: number) => `${((n / bare) * 100).toFixed(1)}% of bare (target ≥ 50%)`;
  table([
    ['case', 'ops/s', 'ratio'],
    ['bare 200-byte append + fdatasync', fmt(bare), '100%'],
    ['storage commit (200-byte update + record), 1 awaited writer', fmt(rawSingle), ofBare(rawSingle)],
    ['storage commit, 64 concurrent writers', fmt(rawConcurrent), `${(rawConcurrent / rawSingle).toFixed(1)}× single (target ≥ 5×)`],
    ['  the same, fdatasync on the event loop: 1 writer', fmt(loopSingle), ofBare(loopSingle)],
    ['  the same, fdatasync on the event loop: 64 writers', fmt(loopConcurrent), `${(loopConcurrent / loopSingle).toFixed(1)}× single`],
    ['engine edit, 1 awaited writer', fmt(single), ofBare(single)],
    ['engine edit, 64 concurrent writers', fmt(many), `${(many / single).toFixed(1)}× single (target ≥ 5×)`],
  ]);
  console.log(`storage commits: ${rawStats.commits} in ${rawStats.fsyncs} fdatasyncs; engine: ${stats.commits} in ${stats.fsyncs} (group commit)`);
}

/** Percentile `p` (0-100) of `values`. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/**
 * A concurrent `dd` writer on the same file system, to stand in for a busy disk: 1 MiB writes with
 * O_DSYNC into `dir`, restarted while the case runs, at most 256 MiB per run; stopped and removed after.
 */
function contendDisk(dir: string): () => void {
  let child: ChildProcess | null = null;
  let stopped = false;
  const run = () => {
    if (stopped) return;
    child = spawn('dd', ['if=/dev/zero', `of=${join(dir, 'dd.bin')}`, 'bs=1M', 'count=256', 'oflag=dsync'], { stdio: 'ignore' });
    child.on('exit', () => setTimeout(run, 10));
    child.on('error', () => (stopped = true));
  };
  run();
  return () => {
    stopped = true;
    child?.kill('SIGKILL');
    rmSync(join(dir, 'dd.bin'), { force: true });
  };
}

/**
 * Document GET latency over a real socket while 8 writers commit paced engine edits, per storage and sync
 * mode, on an idle disk and on one a concurrent `dd` keeps busy. On-thread fdatasync stalls the
 * event loop, and with it every request, for the length of each sync.
 */
async function readsDuringWrites(dir: string): Promise<void> {
  const WRITES_PER_SECOND = 240;
  type Mode = { name: string; storage: () => Promise<Storage> | Storage };
  let n = 0;
  const modes: Mode[] = [
    { name: 'memory', storage: () => memoryStorage() },
    { name: 'lowdb, fdatasync on the event loop (fsyncOffThread: false)', storage: () => lowdbStorage({ dir: join(dir, `reads-${n++}`), fsyncOffThread: false }) },
    { name: 'lowdb, fdatasync off the event loop (default)', storage: () => lowdbStorage({ dir: join(dir, `reads-${n++}`), fsyncOffThread: true }) },
  ];
  const rows: string[][] = [['case', 'disk', 'GET p50 ms', 'GET p99 ms', 'GET max ms', 'edits/s']];
  for (const disk of ['idle', 'busy (dd)'] as const) {
    for (const mode of modes) {
      const storage = await mode.storage();
      const engine = createEngine({ storage });
      const operatorKey = randomBytes(24).toString('base64url');
      const listening = await listen(createApiHandler({ engine, operatorKey, log: () => undefined }), { port: 0 });
      const cred = await fetch(`${listening.url}/operator/v1/credentials`, {
        method: 'POST',
        headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'bench', scopes: ['document:create', 'document:read', 'document:write'] }),
      });
      const token = ((await cred.json()) as { data: { token: string } }).data.token;
      const created = await fetch(`${listening.url}/api/v1/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'bench-read-document-0001' },
        body: JSON.stringify({ v: 1, title: 'read me' }),
      });
      const ref = ((await created.json()) as { data: { documentRef: string } }).data.documentRef;
      const docs = await Promise.all(Array.from({ length: 8 }, () => buildDocument(engine, 10)));
      const stop = disk === 'busy (dd)' ? contendDisk(dir) : () => {};
      const latencies: number[] = [];
      let edits = 0;
      const until = performance.now() + SECONDS * 3000;
      try {
        await Promise.all([
          ...docs.map(async (doc, w) => {
            const op = engineOp(engine, doc, 'edit');
            // Paced: every mode does the same work (WRITES_PER_SECOND in all), so the read
            // latencies compare the sync modes, not how much CPU the writers got.
            let next = performance.now() + (w * 1000) / WRITES_PER_SECOND;
            while (performance.now() < until) {
              const wait = next - performance.now();
              await new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)));
              next += (docs.length * 1000) / WRITES_PER_SECOND;
              await op();
              edits++;
            }
          }),
          (async () => {
            while (performance.now() < until) {
              const start = performance.now();
              const res = await fetch(`${listening.url}/api/v1/documents/${ref}`, { headers: { authorization: `Bearer ${token}` } });
              await res.arrayBuffer();
              latencies.push(performance.now() - start);
            }
          })(),
        ]);
      } finally {
        stop();
      }
      rows.push([mode.name, disk, percentile(latencies, 50).toFixed(1), percentile(latencies, 99).toFixed(1), Math.max(...latencies).toFixed(1), fmt(edits / (SECONDS * 3))]);
      await listening.close();
      await engine.close();
    }
  }
  console.log(`\nreads during writes: document GET over HTTP (one awaited reader) while 8 writers commit ${WRITES_PER_SECOND} engine edits/s`);
  table(rows, 'lowdb: document GET latency during writes', 3, undefined, true);
}

/** listPage on one partition of 100,000 records vs slicing a presorted array of the same keys. */
async function listing(): Promise<void> {
  const storage = memoryStorage();
  const count = 100_000;
  const insertStart = performance.now();
  for (let from = 0; from < count; from += 1000) {
    const ops: BatchOp[] = [];
    for (let i = from; i < from + 1000; i++) {
      // Mostly ascending times with some out-of-order ones, as jobs created by several clients.
      const at = 1_700_000_000_000 + i * 10 - (i % 7 === 0 ? 5_000 : 0);
      ops.push({ kind: 'record.put', collection: 'jobs', key: `job_${i.toString(36).padStart(6, '0')}`, value: { i }, index: { partition: 'cred', sortKey: sortKeyOfTime(at) } });
    }
    await storage.commit(ops);
  }
  const insertRate = count / ((performance.now() - insertStart) / 1000);
  const first = await rate(() => storage.listPage('jobs', 'cred', 50));
  const middle = (await storage.listPage('jobs', 'cred', 1000)).next;
  let deep = middle;
  for (let i = 0; i < 49; i++) deep = (await storage.listPage('jobs', 'cred', 1000, deep)).next;
  const deepRate = await rate(() => storage.listPage('jobs', 'cred', 50, deep));
  const sorted = Array.from({ length: count }, (_, i) => ({ key: `job_${i}`, value: JSON.stringify({ i }) }));
  const baseline = await rate(() => sorted.slice(50_000, 50_050).map((r) => ({ key: r.key, value: JSON.parse(r.value) as unknown })));
  let moved = 0;
  const moveRate = await rate(async () => {
    moved++;
    await storage.commit([{ kind: 'record.put', collection: 'jobs', key: `job_${(moved * 7_919 % count).toString(36).padStart(6, '0')}`, value: { moved }, index: { partition: 'cred', sortKey: sortKeyOfTime(1_800_000_000_000 + moved) } }]);
  });
  console.log('\nlistPage, memory adapter, one partition of 100,000 records');
  table([
    ['case', 'ops/s', 'ratio'],
    ['baseline: slice 50 of a presorted array + JSON.parse', fmt(baseline), '100%'],
    ['listPage 50, first page', fmt(first), `${((first / baseline) * 100).toFixed(1)}% of baseline`],
    ['listPage 50, after 50,000 records', fmt(deepRate), `${((deepRate / baseline) * 100).toFixed(1)}% of baseline`],
    ['indexed put (insert), 1,000 per batch', fmt(insertRate), ''],
    ['indexed put moving a record to the front', fmt(moveRate), ''],
  ]);
  await storage.close();
}

/** Runs the lowdb and listing benchmarks and prints the tables. */
export async function runLowdbBench(): Promise<void> {
  console.log(`\nlowdb and listings, ${SECONDS}s per case (KW_BENCH_SECONDS to change)`);
  const dir = mkdtempSync(join(tmpdir(), 'kw-bench-lowdb-'));
  try {
    await durability(dir);
    await readsDuringWrites(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await listing();
}

// Run directly (`tsx bench/lowdb.ts`); see the same guard in bench/mutations.ts.
if (import.meta.url === `file://${process.argv[1]}` && process.argv[1]?.endsWith('lowdb.ts')) await runLowdbBench();
