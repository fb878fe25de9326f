/**
 * `npm run bench`: every benchmark in one run, each figure beside its baseline measured in the same
 * run (raw Yjs, bare node:http, bare fdatasync appends, a presorted array). KW_BENCH_SECONDS sets the time per case.
 * `scripts/bench.ts` bundles this file with esbuild and runs it with plain node, so what is measured
 * is the code as shipped (tsx's per-closure `__name` wrappers cost ~10% on the hot path).
 */
import { runHttpBench } from './http.ts';
import { runLowdbBench } from './lowdb.ts';
import { runMutationBench } from './mutations.ts';

// The HTTP bench forks this same file as its server processes: they must not run the benches.
if (!process.env.KW_BENCH_SERVER) {
  const only = process.argv[2];
  if (!only || only === 'mutations') await runMutationBench();
  if (!only || only === 'lowdb') await runLowdbBench();
  if (!only || only === 'http') await runHttpBench();
}
