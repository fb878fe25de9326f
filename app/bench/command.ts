/**
 * `kw bench [WORKLOAD] [options]` and `kw bench compare A.json B.json` (decisions.md, "kw bench";
 * the user's guide is docs/bench.md). Exit codes: 0 the run completed, 1 the target refused the run
 * or failed during it, 2 usage error.
 * @module
 */
import { writeFile } from 'node:fs/promises';
import type { CliIO } from '../serve-command.ts';
import { UsageError } from '../usage.ts';
import { compareTable, readResult } from './compare.ts';
import { BENCH_HELP, BENCH_HELP_COMMAND, parseBenchArgs, type BenchOptions } from './options.ts';
import { resultHtml, resultOf, resultTable, type BaselineResult, type BenchResult } from './result.ts';
import { runWorkload, SetupFailed, type Measured, type RunSettings } from './runner.ts';
import { bareHttpTarget, httpTarget, rawYjsTarget, targetOf, TargetRefused, type BenchTarget } from './targets.ts';
import { BUILT_IN, loadWorkload, type Workload } from './workloads.ts';
import { coeditWorld, runCoedit } from './coedit.ts';

/** Settings of a run from the command line and the workload's defaults. */
export function settingsOf(options: BenchOptions, workload: Workload): Omit<RunSettings, 'progress'> {
  if (workload.name === 'hot' && options.documents !== undefined && options.documents !== 1) {
    throw new UsageError('the hot workload puts every client on one document; --documents does not apply', BENCH_HELP_COMMAND);
  }
  return {
    workload,
    clients: options.clients,
    rate: options.rate,
    durationS: options.durationS,
    warmupS: options.warmupS,
    documents: options.documents ?? workload.documents ?? options.clients,
    blocks: options.blocks ?? workload.blocks ?? 10,
    distribution: options.distribution ?? workload.distribution ?? 'partitioned',
    keep: options.keep,
    ...(options.editors === undefined ? {} : { editors: options.editors }),
  };
}

/** Run the same workload against the same-run baseline: raw Yjs in-process, bare node:http for a URL. */
async function runBaseline(target: BenchTarget, settings: RunSettings, measured: Measured): Promise<BaselineResult> {
  const sizes = Object.fromEntries(Object.entries(measured.operations).map(([op, o]) => [op, o.meanBytes]));
  const baseline = target.kind === 'http' ? await bareHttpTarget(sizes, settings.clients) : rawYjsTarget();
  try {
    const m = await runWorkload(baseline, { ...settings, keep: false });
    return {
      kind: target.kind === 'http' ? 'bare-http' : 'raw-yjs',
      label: baseline.label,
      throughput: m.throughput,
      latencyMs: m.latencyMs,
      operations: Object.fromEntries(Object.entries(m.operations).map(([op, o]) => [op, { throughput: o.throughput, latencyMs: o.latencyMs }])),
      ratio: m.throughput > 0 ? Math.round((measured.throughput / m.throughput) * 10_000) / 10_000 : 0,
      samples: m.samples,
    };
  } finally {
    await baseline.close({ keep: false });
  }
}

/** Run one benchmark: what `kw bench` does after parsing (also the project's own benches' entry). */
export async function runBench(options: BenchOptions, io: CliIO): Promise<{ code: number; result: BenchResult | null }> {
  const workload = await loadWorkload(options.workload, BENCH_HELP_COMMAND);
  const base = settingsOf(options, workload);
  const progress = options.quiet ? undefined : (line: string) => io.err(`kw bench: ${line}`);
  // Ctrl-C stops the run: what was measured is reported and the documents are cleaned up; a second one quits at once.
  const stop = new AbortController();
  const onSigint = () => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort();
    io.err('kw bench: stopping: reporting what was measured and cleaning up (Ctrl-C again to quit at once)');
  };
  const settings: RunSettings = { ...base, signal: stop.signal, ...(progress ? { progress } : {}) };
  if (workload === BUILT_IN.coedit) return runCoeditBench(options, io, settings, onSigint);
  const write = Object.keys(workload.mix).some((op) => op !== 'read');
  let target: BenchTarget;
  try {
    target = await targetOf(options.target, settings.clients);
  } catch (error) {
    if (error instanceof TargetRefused) {
      io.err(`kw bench: ${error.message}`);
      return { code: 1, result: null };
    }
    throw error;
  }
  let measured: Measured;
  let baseline: BaselineResult | null = null;
  const startedAt = new Date();
  const notes: string[] = [];
  process.on('SIGINT', onSigint);
  try {
    const pre = await target.preflight({ write });
    for (const note of pre.notes) io.err(`kw bench: ${note}`);
    progress?.(`${workload.name} on ${target.label}: making ${settings.documents} documents of ${settings.blocks} blocks, then ${settings.warmupS} s warm-up and ${settings.durationS} s measured`);
    measured = await runWorkload(target, settings);
    if (options.baseline && !stop.signal.aborted) {
      progress?.(`baseline: the same workload on ${target.kind === 'http' ? 'a bare node:http server answering the same sizes' : 'raw Yjs'}`);
      baseline = await runBaseline(target, settings, measured);
    }
  } catch (error) {
    if (error instanceof TargetRefused || error instanceof SetupFailed) {
      io.err(`kw bench: ${error.message}`);
      notes.push(...(await target.close({ keep: options.keep })));
      return { code: 1, result: null };
    }
    await target.close({ keep: options.keep }).catch(() => []);
    throw error;
  } finally {
    process.off('SIGINT', onSigint);
  }
  notes.push(...(await target.close({ keep: options.keep })));
  measured.notes.push(...notes);
  return report(options, io, resultOf(settings, target, measured, baseline, startedAt));
}

/** Print and write a run's result; the exit code by its errors. */
async function report(options: BenchOptions, io: CliIO, result: BenchResult): Promise<{ code: number; result: BenchResult }> {
  for (const line of resultTable(result)) io.out(line);
  if (options.json) await writeFile(options.json, `${JSON.stringify(result, null, 2)}\n`);
  if (options.html) await writeFile(options.html, resultHtml(result));
  // The run failed when nothing succeeded, or more than 1% of the operations failed for another reason
  // than a lost race (412 after every retry, which is what `hot` measures); the errors are listed above.
  // coedit: an editor that lost its connection or ended unlike the API's document fails the run.
  const failed = Object.entries(result.errors).reduce((s, [k, n]) => s + (k.startsWith('412') ? 0 : n), 0);
  const diverged = Object.keys(result.errors).find((k) => k.startsWith('editor '));
  if (result.successes === 0 || failed > (result.successes + failed) / 100 || diverged) {
    io.err(`kw bench: ${result.successes === 0 ? 'no operation succeeded' : diverged ? `${diverged} (${result.errors[diverged]})` : `${failed} of ${result.successes + failed} operations failed`}: the target failed during the run`);
    return { code: 1, result };
  }
  return { code: 0, result };
}

/**
 * `kw bench coedit`: editors over /documents/{ref}/sync and agents on the API (./coedit.ts). A URL
 * is checked as for every workload (token, scopes) before anything is made; an in-process target is
 * served on loopback by the dev server of `kw serve`.
 */
async function runCoeditBench(options: BenchOptions, io: CliIO, settings: RunSettings, onSigint: () => void): Promise<{ code: number; result: BenchResult | null }> {
  const editors = settings.editors ?? 1;
  const progress = settings.progress;
  const startedAt = new Date();
  process.on('SIGINT', onSigint);
  try {
    if (options.target.kind === 'http') {
      const check = httpTarget(options.target.url, options.target.token, 1);
      try {
        const pre = await check.preflight({ write: true });
        for (const note of pre.notes) io.err(`kw bench: ${note}`);
      } finally {
        await check.close({ keep: true });
      }
    }
    const world = await coeditWorld(options.target, editors);
    let measured: Measured;
    try {
      progress?.(`coedit on ${world.label}: ${settings.clients} agent${settings.clients === 1 ? '' : 's'} and ${editors} editor${editors === 1 ? '' : 's'} on one document of ${settings.blocks} blocks (and one per agent and editor), then ${settings.warmupS} s warm-up and ${settings.durationS} s measured`);
      measured = await runCoedit(world, { ...settings, editors });
    } finally {
      const closing = await world.close(options.keep);
      closing.forEach((n) => io.err(`kw bench: ${n}`));
    }
    return await report(options, io, resultOf(settings, { label: world.label, kind: world.kind }, measured, null, startedAt));
  } catch (error) {
    if (error instanceof TargetRefused || error instanceof SetupFailed) {
      io.err(`kw bench: ${error.message}`);
      return { code: 1, result: null };
    }
    throw error;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** `kw bench …` from the command line (after `bench`). */
export async function runBenchCommand(args: string[], io: CliIO): Promise<number> {
  if (args[0] === 'compare') {
    const files = args.slice(1);
    if (files.includes('--help') || files.includes('-h')) {
      io.out(BENCH_HELP);
      return 0;
    }
    const flag = files.find((f) => f.startsWith('-'));
    if (flag) throw new UsageError(`unknown option ${flag} (compare takes two result files)`, BENCH_HELP_COMMAND);
    if (files.length !== 2) throw new UsageError('compare takes two result files: kw bench compare A.json B.json', BENCH_HELP_COMMAND);
    const [a, b] = await Promise.all(files.map(readResult));
    for (const line of compareTable(a!, b!, files[0]!, files[1]!)) io.out(line);
    return 0;
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.out(BENCH_HELP);
    return 0;
  }
  const options = parseBenchArgs(args);
  return (await runBench(options, io)).code;
}
