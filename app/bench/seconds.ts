/**
 * The per-second view of a bench run, for every workload: each second's successes, errors and
 * latencies, its phase (warm-up, measuring, finishing), the progress line's figures and the samples
 * of the measured window.
 * @module
 */
import * as hdr from 'hdr-histogram-js';

/** A latency histogram in microseconds (1 µs to one hour, 3 significant digits, growing as needed). */
export const newHistogram = () => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3, autoResize: true });
export type Histogram = ReturnType<typeof newHistogram>;

/** Latency percentiles in milliseconds. */
export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

/** One second of the measured window. */
export interface Sample {
  /** Seconds since the measured window began (end of this sample). */
  t: number;
  /** Successful operations per second in this sample. */
  throughput: number;
  errors: number;
  p50: number;
  p99: number;
}

const ms = (us: number) => Math.round(us) / 1000;

/** The percentiles of a histogram of microseconds, in milliseconds. */
export function percentilesOf(h: Histogram): Percentiles {
  if (h.totalCount === 0) return { p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
  // A percentile is its bucket's highest equivalent value, which can pass the largest value recorded.
  const at = (p: number) => ms(Math.min(h.getValueAtPercentile(p), h.maxValue));
  return { p50: at(50), p90: at(90), p99: at(99), p999: at(99.9), max: ms(h.maxValue) };
}

/** One operation's (or figure's) line of a result. */
export interface OperationFigures {
  count: number;
  errors: number;
  /** Successes per second of the measured window. */
  throughput: number;
  latencyMs: Percentiles;
  meanMs: number;
  meanBytes: number;
}

/** What is counted per operation while a run measures. */
export interface OperationCounts {
  h: Histogram;
  count: number;
  errors: number;
  /** Answer bytes and answers counted for them (absent: no sizes, meanBytes 0). */
  bytes?: number;
  answers?: number;
}

/** Rounded to one decimal. */
export const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * The measured window's length in seconds: the whole duration, or, when the run was stopped early
 * (`signal` aborted at `stoppedAt`), the part of it that ran, which `notes` then says.
 */
export function measuredSeconds(settings: { durationS: number; signal?: AbortSignal | undefined }, measureFrom: number, stoppedAt: number, notes: string[]): number {
  if (!settings.signal?.aborted) return settings.durationS;
  const durationS = Math.max(0, Math.min(settings.durationS, Math.round(stoppedAt - measureFrom) / 1000));
  notes.push(durationS > 0 ? `stopped early: ${durationS} s of the ${settings.durationS} s measured` : 'stopped before the measured window began: nothing measured');
  return durationS;
}

/** Each counted operation's figures over a window of `durationS` seconds (operations never seen are left out). */
export function operationFigures(counts: Iterable<[string, OperationCounts]>, durationS: number): Record<string, OperationFigures> {
  const out: Record<string, OperationFigures> = {};
  for (const [name, e] of counts) {
    if (e.count === 0) continue;
    const throughput = durationS > 0 ? round1((e.count - e.errors) / durationS) : 0;
    out[name] = { count: e.count, errors: e.errors, throughput, latencyMs: percentilesOf(e.h), meanMs: Math.round(e.h.mean) / 1000, meanBytes: e.answers ? Math.round((e.bytes ?? 0) / e.answers) : 0 };
  }
  return out;
}

/** One second as it closed. */
export interface Second {
  /** Whole seconds since the run began. */
  elapsed: number;
  phase: 'warm-up' | 'measuring' | 'finishing';
  /** Its length in seconds (ticks run late on a busy machine). */
  span: number;
  /** Successes per second. */
  rate: number;
  errors: number;
  p50: number;
  p99: number;
}

/** Counts one second at a time and keeps the samples of the measured window (`measureFrom` to `measureTo`, ms of performance.now()). */
export class SecondTicker {
  /** The measured window's samples, one per second that began in it. */
  readonly samples: Sample[] = [];
  /** This second's latencies of successes (µs). */
  latencies: Histogram = newHistogram();
  ok = 0;
  errors = 0;
  /** When the last second closed (performance.now()). */
  last: number;

  constructor(
    private readonly t0: number,
    private readonly measureFrom: number,
    private readonly measureTo: number,
  ) {
    this.last = t0;
  }

  /** A success that took `latencyUs`. */
  success(latencyUs: number): void {
    this.latencies.recordValue(latencyUs);
    this.ok++;
  }

  /** Close this second: a sample when it began inside the measured window; then the next second starts. */
  tick(): Second {
    const now = performance.now();
    const span = (now - this.last) / 1000;
    const from = this.last;
    this.last = now;
    const pct = percentilesOf(this.latencies);
    const rate = this.ok / span;
    // A sample belongs to the measured window when it began in it.
    const phase = from < this.measureFrom - 50 ? 'warm-up' : from < this.measureTo - 100 ? 'measuring' : 'finishing';
    if (phase === 'measuring') this.samples.push({ t: Math.round((now - this.measureFrom) / 100) / 10, throughput: Math.round(rate * 10) / 10, errors: this.errors, p50: pct.p50, p99: pct.p99 });
    const second: Second = { elapsed: Math.round((now - this.t0) / 1000), phase, span, rate, errors: this.errors, p50: pct.p50, p99: pct.p99 };
    this.latencies = newHistogram();
    this.ok = 0;
    this.errors = 0;
    return second;
  }

  /** The start of a progress line: elapsed seconds and phase. */
  static lead(s: Second): string {
    return `${String(s.elapsed).padStart(4)} s  ${s.phase.padEnd(9)}`;
  }
}
