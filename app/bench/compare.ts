/**
 * `kw bench compare A.json B.json`: each figure of two results side by side, with its change and
 * whether that change is outside the run-to-run noise estimated from the per-second samples the
 * results carry.
 *
 * The noise: a run's throughput is the mean of its per-second throughputs, so its standard error is
 * sd/√n of those samples; a change counts as outside the noise when it exceeds twice the standard
 * error of the difference, 2·√(seA² + seB²) (about 95% for independent samples). p50 uses the spread
 * of the per-second p50s, the tail figures (p90 … max) that of the per-second p99s; per-operation
 * figures take the relative noise of the whole run's figure of the same kind. Per-second samples of
 * one run are not fully independent and a shared machine adds noise between runs that one run
 * cannot see: treat "outside the noise" as a flag to look again, and repeat runs to be sure.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { UsageError } from '../usage.ts';
import { BENCH_HELP_COMMAND } from './options.ts';
import type { BenchResult } from './result.ts';
import { fmtRate, textTable } from './result.ts';
import type { Percentiles, Sample } from './seconds.ts';

/** One compared figure. */
export interface ComparedFigure {
  figure: string;
  a: number;
  b: number;
  /** (b − a) / a, or null when a is 0. */
  change: number | null;
  /** The smallest change (absolute, in the figure's unit) outside the noise; null when the files hold too few samples. */
  noise: number | null;
  /** |b − a| > noise; null when the noise is unknown. */
  outside: boolean | null;
  /** Whether a larger value is better (throughput) or worse (latency). */
  higherIsBetter: boolean;
}

function meanSd(values: number[]): { mean: number; sd: number; n: number } {
  const n = values.length;
  const mean = n ? values.reduce((s, v) => s + v, 0) / n : 0;
  const sd = n > 1 ? Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1)) : NaN;
  return { mean, sd, n };
}

/** Twice the standard error of the difference of two sample means (NaN with fewer than 2 samples in either). */
export function noiseOf(a: number[], b: number[]): number {
  const x = meanSd(a);
  const y = meanSd(b);
  if (x.n < 2 || y.n < 2) return NaN;
  return 2 * Math.sqrt(x.sd ** 2 / x.n + y.sd ** 2 / y.n);
}

/** Compare two results figure by figure. */
export function compareResults(a: BenchResult, b: BenchResult): ComparedFigure[] {
  const out: ComparedFigure[] = [];
  const add = (figure: string, va: number, vb: number, noise: number, higherIsBetter: boolean) => {
    const known = Number.isFinite(noise);
    out.push({ figure, a: va, b: vb, change: va === 0 ? null : (vb - va) / va, noise: known ? noise : null, outside: known ? Math.abs(vb - va) > noise : null, higherIsBetter });
  };
  const col = (s: Sample[], k: keyof Sample) => s.map((x) => x[k]);
  const tputNoise = noiseOf(col(a.samples, 'throughput'), col(b.samples, 'throughput'));
  const p50Noise = noiseOf(col(a.samples, 'p50'), col(b.samples, 'p50'));
  const p99Noise = noiseOf(col(a.samples, 'p99'), col(b.samples, 'p99'));
  // Relative noise, for figures measured on a scale other than the samples' (per operation, p999, max).
  const rel = (noise: number, va: number, vb: number) => (va + vb > 0 ? noise / ((va + vb) / 2) : NaN);
  const tputRel = rel(tputNoise, a.throughput, b.throughput);
  const p50Rel = rel(p50Noise, a.latencyMs.p50, b.latencyMs.p50);
  const p99Rel = rel(p99Noise, a.latencyMs.p99, b.latencyMs.p99);
  add('throughput (ops/s)', a.throughput, b.throughput, tputNoise, true);
  const lat = (prefix: string, la: Percentiles, lb: Percentiles) => {
    const keys: [keyof Percentiles, string, number][] = [
      ['p50', 'p50', p50Rel],
      ['p90', 'p90', p99Rel],
      ['p99', 'p99', p99Rel],
      ['p999', 'p99.9', p99Rel],
      ['max', 'max', p99Rel],
    ];
    for (const [k, name, r] of keys) add(`${prefix}${name} (ms)`, la[k], lb[k], r * ((la[k] + lb[k]) / 2), false);
  };
  lat('latency ', a.latencyMs, b.latencyMs);
  for (const op of Object.keys(a.operations).filter((k) => k in b.operations)) {
    const oa = a.operations[op]!;
    const ob = b.operations[op]!;
    add(`${op} ops/s`, oa.throughput, ob.throughput, tputRel * ((oa.throughput + ob.throughput) / 2), true);
    add(`${op} p50 (ms)`, oa.latencyMs.p50, ob.latencyMs.p50, p50Rel * ((oa.latencyMs.p50 + ob.latencyMs.p50) / 2), false);
    add(`${op} p99 (ms)`, oa.latencyMs.p99, ob.latencyMs.p99, p99Rel * ((oa.latencyMs.p99 + ob.latencyMs.p99) / 2), false);
  }
  add('stale (412)', a.stale, b.stale, NaN, false);
  add('requests per success', a.requestsPerSuccess, b.requestsPerSuccess, NaN, false);
  if (a.baseline && b.baseline) add('ratio to baseline', a.baseline.ratio, b.baseline.ratio, tputRel * ((a.baseline.ratio + b.baseline.ratio) / 2), true);
  return out;
}

/** Read and check a result file (a file that is not a kw bench result is a usage error). */
export async function readResult(file: string): Promise<BenchResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, BENCH_HELP_COMMAND);
  }
  let json: Partial<BenchResult>;
  try {
    json = JSON.parse(text) as Partial<BenchResult>;
  } catch {
    throw new UsageError(`${file} is not JSON (kw bench compare takes two files written by kw bench --json)`, BENCH_HELP_COMMAND);
  }
  if (json?.v !== 1 || typeof json.throughput !== 'number' || typeof json.latencyMs !== 'object' || typeof json.operations !== 'object') {
    throw new UsageError(`${file} is not a kw bench result (version 1, written by kw bench --json)`, BENCH_HELP_COMMAND);
  }
  return { ...json, samples: Array.isArray(json.samples) ? json.samples : [] } as BenchResult;
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? fmtRate(n) : Number.isInteger(n) ? String(n) : n.toFixed(n >= 10 ? 1 : 3));

/** The comparison as printed lines. */
export function compareTable(a: BenchResult, b: BenchResult, fileA: string, fileB: string): string[] {
  const rows = [['figure', 'A', 'B', 'change', 'noise ±', 'verdict']];
  for (const f of compareResults(a, b)) {
    const change = f.change === null ? '' : `${f.change >= 0 ? '+' : ''}${(f.change * 100).toFixed(1)}%`;
    const better = f.b > f.a === f.higherIsBetter;
    const verdict = f.outside === null ? 'noise unknown' : !f.outside ? 'within noise' : better ? 'better' : 'worse';
    rows.push([f.figure, fmt(f.a), fmt(f.b), change, f.noise === null ? '?' : fmt(f.noise), verdict]);
  }
  const lines = [`A: ${fileA} — ${a.workload} on ${a.target}, ${a.startedAt ?? '?'} (load ${a.machine?.loadavg?.join(' ') ?? '?'})`, `B: ${fileB} — ${b.workload} on ${b.target}, ${b.startedAt ?? '?'} (load ${b.machine?.loadavg?.join(' ') ?? '?'})`];
  if (a.workload !== b.workload || a.model !== b.model || a.clients !== b.clients || a.rate !== b.rate) lines.push('note: the runs differ in workload or load settings; their figures are not like for like');
  lines.push('', ...textTable(rows), '', `noise: twice the standard error of the difference, from the per-second samples (${a.samples.length} and ${b.samples.length}); repeat runs to be sure`);
  return lines;
}
