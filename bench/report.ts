/**
 * `npm run bench -- --report FILE.html`: every table the run prints, collected and written as one
 * self-contained HTML page (no scripts, no external files) with an SVG bar chart per table.
 */
import { writeFileSync } from 'node:fs';

/** One printed table: a header row, body rows, and the column the chart plots. */
interface ReportTable {
  title: string;
  rows: string[][];
  /** Index of the plotted column; its cells are read as numbers (a trailing % or text is ignored). */
  chart: number;
  /** Where a target line is drawn, in the plotted column's unit. */
  target?: number;
  /** The target is a ceiling (times), not a floor (ratios). */
  lower?: boolean;
}

const tables: ReportTable[] = [];

/** Keep a printed table (first row: the header) for the report. */
export function recordTable(title: string, rows: string[][], chart: number, target?: number, lower = false): void {
  tables.push({ title, rows: rows.map((r) => [...r]), chart, lower, ...(target === undefined ? {} : { target }) });
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const numberOf = (cell: string | undefined) => Number.parseFloat((cell ?? '').replace(/,/g, ''));

/** A horizontal bar chart of one column: one bar per row, scaled to the largest value (or the target). */
function chart(t: ReportTable): string {
  const body = t.rows.slice(1).filter((r) => Number.isFinite(numberOf(r[t.chart])));
  if (body.length === 0) return '';
  const values = body.map((r) => numberOf(r[t.chart]));
  const max = Math.max(...values, t.target ?? 0) || 1;
  const label = 300;
  const width = 420;
  const bar = 18;
  const height = body.length * (bar + 6) + 24;
  const x = (v: number) => label + (v / max) * width;
  const bars = body
    .map((r, i) => {
      const y = i * (bar + 6) + 4;
      const v = values[i]!;
      const ok = t.target === undefined ? null : t.lower ? v <= t.target : v >= t.target;
      const met = ok === null ? '#4a7bd0' : ok ? '#3a9a5b' : '#c8553d';
      return (
        `<text x="${label - 8}" y="${y + bar - 5}" text-anchor="end">${esc(r.slice(0, t.chart).filter((c, j) => j < 2 && c).join(' · '))}</text>` +
        `<rect x="${label}" y="${y}" width="${Math.max(1, x(v) - label).toFixed(1)}" height="${bar}" fill="${met}"/>` +
        `<text x="${(x(v) + 6).toFixed(1)}" y="${y + bar - 5}">${esc(r[t.chart]!)}</text>`
      );
    })
    .join('');
  const targetLine =
    t.target === undefined
      ? ''
      : `<line x1="${x(t.target).toFixed(1)}" x2="${x(t.target).toFixed(1)}" y1="0" y2="${height - 18}" stroke="#222" stroke-dasharray="4 3"/>` +
        `<text x="${x(t.target).toFixed(1)}" y="${height - 4}" text-anchor="middle">target ${t.target}</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${label + width + 140}" height="${height}" font-size="12" font-family="sans-serif">${bars}${targetLine}</svg>`;
}

function tableHtml(t: ReportTable): string {
  const [header, ...body] = t.rows;
  const row = (cells: string[], tag: string) => `<tr>${cells.map((c) => `<${tag}>${esc(c)}</${tag}>`).join('')}</tr>`;
  return `<table>${row(header ?? [], 'th')}${body.map((r) => row(r, 'td')).join('')}</table>`;
}

/** Write the collected tables to `file` as one HTML page. */
export function writeReport(file: string): void {
  const sections = tables.map((t) => `<section><h2>${esc(t.title)}</h2>${chart(t)}${tableHtml(t)}</section>`).join('\n');
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>knowledge-workspace benchmarks</title><style>
body{font:14px/1.4 sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 2em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}h2{font-size:16px;margin-top:1.5em}</style></head><body>
<h1>knowledge-workspace benchmarks</h1><p>${esc(new Date().toISOString())} · node ${esc(process.version)} · each figure beside its baseline from the same run</p>
${sections}</body></html>`;
  writeFileSync(file, html);
}
