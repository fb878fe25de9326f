/**
 * `npm run bench -- fuzz [requests] [seed]`: the contract fuzzer of app/fuzz-kit.ts, longer than the
 * bounded run in `npm test` (default 3000 requests, a random seed, printed so that a failure can be
 * replayed). Prints the answers per status, the requests per operation and every violation, grouped.
 */
import { runFuzz, summarize } from '../app/fuzz-kit.ts';

/** Runs the fuzzer; sets a failing exit code when it found violations. */
export async function runFuzzBench(requests: number, seed: number): Promise<void> {
  console.log(`\nfuzz: ${requests} requests, seed ${seed}`);
  const started = performance.now();
  const report = await runFuzz({
    seed,
    runs: requests,
    onRequest: (i) => {
      if ((i + 1) % 500 === 0) console.log(`  ${i + 1} requests`);
    },
  });
  const seconds = (performance.now() - started) / 1000;
  console.log(`fuzz: ${report.requests} requests in ${seconds.toFixed(1)} s (${(report.requests / seconds).toFixed(0)} req/s)`);
  console.log(`statuses: ${JSON.stringify(report.statuses)}`);
  console.log(`operations: ${JSON.stringify(report.operations)}`);
  if (report.violations.length) {
    console.log(`${report.violations.length} violations:\n${summarize(report.violations)}`);
    process.exitCode = 1;
  } else console.log('no violations');
}
