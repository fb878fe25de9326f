/**
 * The result of a `kw bench` run: the JSON (decisions.md, "kw bench": `v`, `workload`, `target`,
 * `model`, `clients`, `rate`, `durationS`, `throughput`, `latencyMs`, `operations`, `errors`,
 * `stale`, `requestsPerSuccess`, `baseline`, then more fields), the table on stdout, and the HTML page.
 * @module
 */
import { cpus, loadavg } from 'node:os';
import { VERSION } from '../version.ts';
import type { Measured, RunSettings } from './runner.ts';
import type { Percentiles, Sample } from './seconds.ts';

/** The same-run baseline's figures and the target's ratio to it. */
export interface BaselineResult {
  kind: 'raw-yjs' | 'bare-http';
  label: string;
  throughput: number;
  latencyMs: Percentiles;
  operations: Record<string, { throughput: number; latencyMs: Percentiles }>;
  /** Target throughput / baseline throughput. */
  ratio: number;
  samples: Sample[];
}

/** The JSON result (version 1). */
export interface BenchResult {
  v: 1;
  workload: string;
  target: string;
  model: 'closed' | 'open';
  clients: number;
  rate: number | null;
  durationS: number;
  throughput: number;
  latencyMs: Percentiles;
  operations: Measured['operations'];
  errors: Record<string, number>;
  stale: number;
  requestsPerSuccess: number;
  baseline: BaselineResult | null;
  // More fields (decisions.md allows them):
  tool: { name: 'kw bench'; version: string; node: string };
  startedAt: string;
  targetKind: string;
  warmupS: number;
  documents: number;
  blocks: number;
  distribution: string;
  /** coedit: the editors over /documents/{ref}/sync (`clients` are its agents); absent for the other workloads. */
  editors?: number;
  mix: Record<string, number>;
  requests: number;
  successes: number;
  scheduleLagMs: { mean: number; max: number } | null;
  serverRequestsRemaining: number | null;
  /** Per-second figures of the measured window, from which `kw bench compare` estimates the noise. */
  samples: Sample[];
  machine: { cpus: number; loadavg: number[] };
  notes: string[];
}

export function resultOf(settings: RunSettings, target: { label: string; kind: string }, measured: Measured, baseline: BaselineResult | null, startedAt: Date): BenchResult {
  return {
    v: 1,
    workload: settings.workload.name,
    target: target.label,
    model: settings.rate === null ? 'closed' : 'open',
    clients: settings.clients,
    rate: settings.rate,
    durationS: measured.durationS,
    throughput: measured.throughput,
    latencyMs: measured.latencyMs,
    operations: measured.operations,
    errors: measured.errors,
    stale: measured.stale,
    requestsPerSuccess: measured.requestsPerSuccess,
    baseline,
    tool: { name: 'kw bench', version: VERSION, node: process.version },
    startedAt: startedAt.toISOString(),
    targetKind: target.kind,
    warmupS: settings.warmupS,
    documents: settings.documents,
    blocks: settings.blocks,
    distribution: settings.distribution,
    ...(settings.editors === undefined ? {} : { editors: settings.editors }),
    mix: Object.fromEntries(Object.entries(settings.workload.mix).filter(([, w]) => (w ?? 0) > 0)) as Record<string, number>,
    requests: measured.requests,
    successes: measured.successes,
    scheduleLagMs: measured.scheduleLagMs,
    serverRequestsRemaining: measured.serverRequestsRemaining,
    samples: measured.samples,
    machine: { cpus: cpus().length, loadavg: loadavg().map((l) => Math.round(l * 100) / 100) },
    notes: measured.notes,
  };
}

/** A rate: thousands separators from 100 up, one decimal below. */
export const fmtRate = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
const fmtMs = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));

/** Print rows as a text table (first row: the header; first column left-aligned). */
export function textTable(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd());
}

/** The table `kw bench` prints on stdout. */
export function resultTable(r: BenchResult): string[] {
  const model = r.model === 'closed' ? `closed model, ${r.clients} clients` : `open model, ${fmtRate(r.rate!)} ops/s on ${r.clients} connections`;
  const lines = [
    r.editors === undefined
      ? `kw bench ${r.workload}: ${r.target}; ${model}; ${r.durationS} s after ${r.warmupS} s warm-up; ${r.documents} documents of ${r.blocks} blocks, ${r.distribution}`
      : `kw bench ${r.workload}: ${r.target}; ${r.clients} agent${r.clients === 1 ? '' : 's'} on the API and ${r.editors} editor${r.editors === 1 ? '' : 's'} over /sync; ${r.durationS} s after ${r.warmupS} s warm-up; one document of ${r.blocks} blocks (and one per agent and editor)`,
    '',
  ];
  const rows = [['operation', 'count', 'ops/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'errors']];
  const pct = (l: Percentiles) => [fmtMs(l.p50), fmtMs(l.p90), fmtMs(l.p99), fmtMs(l.p999), fmtMs(l.max)];
  for (const [op, o] of Object.entries(r.operations)) rows.push([op, String(o.count), fmtRate(o.throughput), ...pct(o.latencyMs), String(o.errors)]);
  const failed = Object.values(r.errors).reduce((s, n) => s + n, 0);
  // coedit's figures are not operations of one kind: no "all" row (its top-level figures are the agents' edits).
  if (r.editors === undefined) rows.push(['all', String(r.successes + failed), fmtRate(r.throughput), ...pct(r.latencyMs), String(failed)]);
  if (r.baseline) rows.push([`baseline: ${r.baseline.kind}`, '', fmtRate(r.baseline.throughput), ...pct(r.baseline.latencyMs), '']);
  lines.push(...textTable(rows), '');
  lines.push(`throughput ${fmtRate(r.throughput)} successful ops/s; stale (412) ${r.stale}; requests per success ${r.requestsPerSuccess.toFixed(2)}`);
  const errs = Object.entries(r.errors);
  lines.push(`errors: ${errs.length === 0 ? 'none' : errs.map(([k, n]) => `${k} × ${n}`).join(', ')}`);
  if (r.scheduleLagMs) lines.push(`schedule lag (send behind schedule): mean ${fmtMs(r.scheduleLagMs.mean)} ms, max ${fmtMs(r.scheduleLagMs.max)} ms${r.scheduleLagMs.mean > 5 ? ' — the target (or this machine) does not keep up with --rate' : ''}`);
  if (r.baseline) lines.push(`baseline (${r.baseline.label}): ${fmtRate(r.baseline.throughput)} ops/s; target/baseline ${(r.baseline.ratio * 100).toFixed(1)}%`);
  if (r.serverRequestsRemaining !== null) lines.push(`server: ${r.serverRequestsRemaining} requests left in the token's budget window`);
  lines.push(`machine: ${r.machine.cpus} cpus, load ${r.machine.loadavg.join(' ')}`);
  for (const note of r.notes) lines.push(`note: ${note}`);
  return lines;
}

// ---------------------------------------------------------------------------------------------
// The HTML page: hand-made SVG (three small charts need no charting library, and the page must load
// nothing), no scripts.

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const COLORS = ['#2f6fd0', '#c8553d', '#3a9a5b', '#8a5cc2', '#c99a2e', '#4aa3a3'];

/** A line chart of series over the seconds of the run. */
function lineChart(title: string, unit: string, series: { name: string; points: [number, number][] }[]): string {
  const W = 640;
  const H = 220;
  const left = 56;
  const bottom = 28;
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) return '';
  const maxX = Math.max(1, ...all.map((p) => p[0]));
  const maxY = Math.max(1e-9, ...all.map((p) => p[1])) * 1.1;
  const x = (v: number) => left + (v / maxX) * (W - left - 12);
  const y = (v: number) => H - bottom - (v / maxY) * (H - bottom - 12);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const v = maxY * f;
    return `<line x1="${left}" x2="${W - 12}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eee"/><text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${esc(fmtRate(v))}</text>`;
  });
  const lines = series.map((s, i) => {
    const pts = s.points.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ');
    return `<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2" points="${pts}"/>`;
  });
  const legend = series.map((s, i) => `<tspan fill="${COLORS[i % COLORS.length]}">■ ${esc(s.name)}</tspan>`).join(' ');
  return `<figure><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H + 20}" font-size="11" font-family="sans-serif" role="img" aria-label="${esc(title)}">
${ticks.join('')}<line x1="${left}" x2="${left}" y1="4" y2="${H - bottom}" stroke="#999"/><line x1="${left}" x2="${W - 12}" y1="${H - bottom}" y2="${H - bottom}" stroke="#999"/>
<text x="${(W + left) / 2}" y="${H - 6}" text-anchor="middle">seconds (${esc(unit)})</text>${lines.join('')}<text x="${left}" y="${H + 14}">${legend}</text></svg></figure>`;
}

/** Grouped horizontal bars: latency percentiles per operation. */
function percentileChart(groups: { name: string; l: Percentiles }[]): string {
  const keys: (keyof Percentiles)[] = ['p50', 'p90', 'p99', 'p999', 'max'];
  const bar = 12;
  const label = 170;
  const width = 400;
  const max = Math.max(1e-9, ...groups.flatMap((g) => keys.map((k) => g.l[k])));
  let yPos = 4;
  const parts: string[] = [];
  for (const g of groups) {
    parts.push(`<text x="0" y="${yPos + 11}" font-weight="bold">${esc(g.name)}</text>`);
    yPos += 16;
    keys.forEach((k, i) => {
      const w = Math.max(1, (g.l[k] / max) * width);
      parts.push(
        `<text x="${label - 6}" y="${yPos + bar - 2}" text-anchor="end">${k === 'p999' ? 'p99.9' : k}</text><rect x="${label}" y="${yPos}" width="${w.toFixed(1)}" height="${bar}" fill="${COLORS[i]}"/><text x="${(label + w + 4).toFixed(1)}" y="${yPos + bar - 2}">${esc(fmtMs(g.l[k]))} ms</text>`,
      );
      yPos += bar + 3;
    });
    yPos += 8;
  }
  return `<figure><figcaption>Latency percentiles per operation (ms)</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${label + width + 90}" height="${yPos}" font-size="11" font-family="sans-serif" role="img" aria-label="latency percentiles">${parts.join('')}</svg></figure>`;
}

/** One self-contained HTML page (inline CSS and SVG, no scripts, nothing from the network). */
export function resultHtml(r: BenchResult): string {
  const tput = [{ name: 'target ops/s', points: r.samples.map((s) => [s.t, s.throughput] as [number, number]) }];
  if (r.baseline) tput.push({ name: `baseline (${r.baseline.kind}) ops/s`, points: r.baseline.samples.map((s) => [s.t, s.throughput] as [number, number]) });
  const lat = [
    { name: 'p50 ms', points: r.samples.map((s) => [s.t, s.p50] as [number, number]) },
    { name: 'p99 ms', points: r.samples.map((s) => [s.t, s.p99] as [number, number]) },
  ];
  const errs = r.samples.some((s) => s.errors > 0) ? lineChart('Errors per second', 'errors', [{ name: 'errors', points: r.samples.map((s) => [s.t, s.errors] as [number, number]) }]) : '';
  const groups = [...Object.entries(r.operations).map(([name, o]) => ({ name, l: o.latencyMs })), { name: 'all operations', l: r.latencyMs }];
  if (r.baseline) groups.push({ name: `baseline (${r.baseline.kind})`, l: r.baseline.latencyMs });
  const table = resultTable(r);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>kw bench ${esc(r.workload)}: ${esc(r.target)}</title>
<style>body{font:14px/1.4 sans-serif;margin:2em;color:#222;max-width:60em}pre{background:#f6f6f6;padding:1em;overflow:auto}figure{margin:1.5em 0}figcaption{font-weight:bold;margin-bottom:.3em}dt{font-weight:bold;float:left;clear:left;width:12em}dd{margin-left:12em}</style></head><body>
<h1>kw bench ${esc(r.workload)}</h1>
<dl><dt>target</dt><dd>${esc(r.target)}</dd><dt>model</dt><dd>${esc(r.model)}, ${r.clients} clients${r.rate === null ? '' : `, ${esc(fmtRate(r.rate))} ops/s scheduled`}</dd>
<dt>throughput</dt><dd>${esc(fmtRate(r.throughput))} successful operations/s${r.baseline ? ` (${(r.baseline.ratio * 100).toFixed(1)}% of the ${esc(r.baseline.kind)} baseline, ${esc(fmtRate(r.baseline.throughput))} ops/s)` : ''}</dd>
<dt>latency</dt><dd>p50 ${r.latencyMs.p50} ms · p99 ${r.latencyMs.p99} ms · max ${r.latencyMs.max} ms</dd>
<dt>started</dt><dd>${esc(r.startedAt)} · ${esc(r.tool.name)} ${esc(r.tool.version)} · node ${esc(r.tool.node)} · load ${esc(r.machine.loadavg.join(' '))} on ${r.machine.cpus} cpus</dd></dl>
${lineChart('Throughput over time (successful operations per second)', 'ops/s', tput)}
${lineChart('Latency over time (per second)', 'ms', lat)}
${errs}
${percentileChart(groups)}
<h2>Table</h2><pre>${esc(table.join('\n'))}</pre>
</body></html>
`;
}
