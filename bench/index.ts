/**
 * `npm run bench`: every benchmark in one run, each figure beside its baseline measured in the same
 * run (raw Yjs, bare node:http, bare fdatasync appends, a presorted array). KW_BENCH_SECONDS sets the time per case.
 * `scripts/bench.ts` bundles this file with esbuild and runs it with plain node, so what is measured
 * is the code as shipped (tsx's per-closure `__name` wrappers cost ~10% on the hot path).
 */
import { runBundleBench } from './bundle.ts';
import { runHttpBench } from './http.ts';
import { runLowdbBench } from './lowdb.ts';
import { runMutationBench } from './mutations.ts';
import { runPeerBench } from './peer-bench.ts';
import { pathologicalEdits, versionOnlyScaling } from './stress.ts';
import { runProfileLoop } from './profile-loop.ts';
import { runSseBench } from './sse.ts';
import { runSoak } from './soak.ts';
import { runLibraryBench } from './library.ts';
import { runCaptureStallBench } from './capture-stall.ts';
import { runSearchBench } from './search.ts';
import { runPagesBench } from './pages.ts';
import { runPostgresBench } from './postgres.ts';
import { runFuzzBench } from './fuzz.ts';
import { runSyncBench } from './sync.ts';
import { runAgreementBench } from './agreement.ts';
import { recordTable, writeReport } from './report.ts';
import { runEngineStages, runHttpStages } from './stages.ts';

// The HTTP bench forks this same file as its server processes: they must not run the benches.
if (!process.env.KW_BENCH_SERVER) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--report');
  const reportFile = at >= 0 ? args.splice(at, 2)[1] : undefined;
  if (at >= 0 && !reportFile) throw new Error('--report needs a file name, e.g. --report bench.html');
  // `sync --storage postgres`: the co-editing bench across two kw serve processes on one database.
  const storageAt = args.indexOf('--storage');
  const storage = storageAt >= 0 ? args.splice(storageAt, 2)[1] : 'memory';
  if (storage !== 'memory' && storage !== 'postgres') throw new Error('--storage takes memory or postgres (the sync part)');
  const only = args[0];
  if (!only || only === 'bundle') await runBundleBench();
  if (!only || only === 'mutations') await runMutationBench();
  if (!only || only === 'mutations' || only === 'stages') await runEngineStages();
  if (!only || only === 'mutations' || only === 'scaling') await versionOnlyScaling();
  if (!only || only === 'mutations' || only === 'pathological') await pathologicalEdits();
  if (!only || only === 'peer') await runPeerBench();
  if (!only || only === 'lowdb') await runLowdbBench();
  if (!only || only === 'http') {
    const rows = await runHttpBench();
    const cells = rows.map((r) => [r.name, r.requestsPerSec.toFixed(0), r.mbPerSec.toFixed(1), r.ratio === null ? 'baseline' : `${(r.ratio * 100).toFixed(1)}%`]);
    recordTable('HTTP: API vs bare node:http (vs baseline, %)', [['case', 'req/s', 'MB/s', 'vs baseline'], ...cells], 3, 30);
  }
  if (!only || only === 'http' || only === 'stages') await runHttpStages();
  if (!only || only === 'sse') await runSseBench();
  if (only === 'soak') await runSoak();
  if (only === 'library') await runLibraryBench();
  if (only === 'capture-stall') await runCaptureStallBench();
  if (only === 'search') await runSearchBench();
  if (only === 'pages') await runPagesBench();
  if (only === 'postgres') await runPostgresBench();
  if (only === 'agreement') await runAgreementBench(Number(args[1] ?? 3));
  if (only === 'fuzz') await runFuzzBench(Number(args[1] ?? 3000), Number(args[2] ?? Math.floor(Math.random() * 2 ** 31)));
  if (!only || only === 'sync') await runSyncBench({ storage });
  if (only === 'profile') await runProfileLoop(Number(args[1] ?? 10), args[2] ?? 'edit', Number(args[3] ?? 3));
  if (reportFile) {
    writeReport(reportFile);
    console.log(`\nreport written to ${reportFile}`);
  }
}
