/**
 * lowdb durability and the storage port's listings, each beside its baseline measured in the same
 * run: bare 200-byte appends with fdatasync for commits, a sorted array for pages.
 * `npm run bench -- lowdb`, or `tsx bench/lowdb.ts`.
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lowdbStorage } from '../adapters/lowdb/index.ts';
import { memoryStorage } from '../adapters/memory/index.ts';
import { createEngine } from '../src/engine.ts';
import { sortKeyOfTime, type BatchOp, type Storage } from '../src/ports.ts';
import { buildDocument, engineOp, fmt, rate, table } from './mutations.ts';

const SECONDS = Number(process.env.KW_BENCH_SECONDS ?? 1);

/** Commits per second of `writers` concurrent loops, each awaiting its own commits, for about SECONDS. */
async function concurrentRate(writers: number, op: (writer: number) => () => Promise<unknown>): Promise<number> {
  const loops = Array.from({ length: writers }, (_, w) => op(w));
  const start = performance.now();
  let done = 0;
  await Promise.all(
    loops.map(async (run) => {
      while (performance.now() - start < SECONDS * 1000) {
        await run();
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

/** A storage-level commit like the engine's per edit: one ~200-byte Yjs update plus a small record. */
function commitOp(storage: Storage, writer: number): () => Promise<void> {
  let version = 1;
  const ref = `doc-${writer}`;
  const update = new Uint8Array(200).fill(7 + writer);
  const head = (v: number) => ({
    documentRef: ref, spaceRef: 'spc', accountId: 'acct', title: 'bench', version: v, snapshotVersion: 1,
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
  const bare = await rate(() => {
    writeSync(fd, line);
    fdatasyncSync(fd);
  });
  closeSync(fd);

  const raw = await lowdbStorage({ dir: join(dir, 'raw') });
  const rawSingle = await rate(commitOp(raw, 0));
  const rawConcurrent = await concurrentRate(64, (w) => commitOp(raw, w + 1));
  await raw.close();

  const storage = await lowdbStorage({ dir: join(dir, 'db') });
  const engine = createEngine({ storage });
  const one = await buildDocument(engine, 10);
  const single = await rate(engineOp(engine, one, 'edit'));
  const docs = await Promise.all(Array.from({ length: 64 }, () => buildDocument(engine, 10)));
  const concurrent = await concurrentRate(64, (w) => engineOp(engine, docs[w], 'edit'));
  const stats = storage.stats();
  await engine.close();

  console.log('\nlowdb durability (each commit fdatasync-ed before it is acknowledged)');
  const ofBare = (n: number) => `${((n / bare) * 100).toFixed(1)}% of bare (target ≥ 50%)`;
  table([
    ['case', 'ops/s', 'ratio'],
    ['bare 200-byte append + fdatasync', fmt(bare), '100%'],
    ['storage commit (200-byte update + record), 1 awaited writer', fmt(rawSingle), ofBare(rawSingle)],
    ['storage commit, 64 concurrent writers', fmt(rawConcurrent), `${(rawConcurrent / rawSingle).toFixed(1)}× single (target ≥ 5×)`],
    ['engine edit, 1 awaited writer', fmt(single), ofBare(single)],
    ['engine edit, 64 concurrent writers', fmt(concurrent), `${(concurrent / single).toFixed(1)}× single (target ≥ 5×)`],
  ]);
  console.log(`engine run: ${stats.commits} commits in ${stats.fsyncs} fdatasyncs (group commit)`);
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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await listing();
}

// Run directly (`tsx bench/lowdb.ts`); see the same guard in bench/mutations.ts.
if (import.meta.url === `file://${process.argv[1]}` && process.argv[1]?.endsWith('lowdb.ts')) await runLowdbBench();
