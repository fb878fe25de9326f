/**
 * `npm run bench`: every benchmark in one run, each figure beside its baseline measured in the same
 * run (raw Yjs, bare node:http, bare fdatasync appends). BENCH_SECONDS sets the time per case.
 */
import { runHttpBench } from './http.ts';
import { runMutationBench } from './mutations.ts';

const only = process.argv[2];
if (!only || only === 'mutations') await runMutationBench();
if (!only || only === 'http') await runHttpBench();
