/**
 * `kw bench`'s command line: the help text and the flags → {@link BenchOptions} (decisions.md, "kw bench").
 * Every wrong flag is a {@link UsageError} (exit 2) naming what is wrong.
 * @module
 */
import { KW, oneOf, parseFlags, UsageError } from '../usage.ts';
import { BUILT_IN, type Distribution } from './workloads.ts';

export const BENCH_HELP_COMMAND = `${KW} bench --help`;

/** `kw bench --help`. */
export const BENCH_HELP = `Usage: ${KW} bench [WORKLOAD] [options]
       ${KW} bench compare A.json B.json

Benchmark mutation throughput on the block tree: of the engine in this process (no HTTP), or of
any running service over HTTP (docs/bench.md). Prints progress each second on stderr and a table
on stdout.

Workloads (WORKLOAD, default edit):
${Object.values(BUILT_IN)
  .map((w) => `  ${w.name.padEnd(28)}${w.description}`)
  .join('\n')}
  FILE.json                   a workload file: {"v":1,"mix":{"read":80,"edit":20}, ...} (docs/bench.md)

Target:
  --url URL                   a running service, e.g. http://127.0.0.1:8787 (HTTP API)
  --token TOKEN               its bearer token (default: the environment variable KW_TOKEN); needs
                              document:create, document:read and, to write, document:write
  --storage memory|lowdb|postgres
                              in-process engine, no HTTP (default memory; not with --url)
  --data DIR                  data folder of --storage lowdb (default: a temporary folder)
  --database-url URL          database of --storage postgres (default: DATABASE_URL)

Load:
  --clients N                 concurrent clients (closed model: each sends its next operation when
                              the last one answered; with --rate, connections) (default 8)
  --rate R                    open model: R operations per second in all, on a fixed schedule;
                              latency counts from each operation's scheduled time
  --duration S                seconds measured (default 10)
  --warmup S                  seconds run first and not measured (default 2)
  --editors N                 coedit: editors typing over /documents/{ref}/sync (default 4; with
                              --url they share the token, which holds 32 connections by default);
                              the agents editing on the API are --clients; in-process targets are
                              served on loopback for it (docs/bench.md, "coedit")
  --documents N               documents made for the run (default: the workload's, else --clients)
  --blocks N                  paragraph blocks per document at the start (default 10)
  --distribution uniform|zipfian|partitioned
                              which document an operation picks: partitioned (default) each
                              client among its own documents, so clients never race for a
                              revision; uniform or zipfian among all (races answer 412: read, retry)

Output:
  --json FILE                 the result as JSON (fields in docs/bench.md)
  --html FILE                 one self-contained page with charts (loads nothing from the network)
  --baseline                  also run the same-run baseline: raw Yjs doing the same operations
                              (in-process), a bare node:http server answering the same sizes (--url)
  --keep                      keep the documents made (default: emptied, or the store dropped)
  --quiet                     no progress on stderr
  -h, --help                  show this text

Exit status: 0 the run completed; 1 the target refused the run or failed during it; 2 usage error.
`;

/** Editors of `coedit` without --editors. */
export const DEFAULT_EDITORS = 4;

/** Where the operations go. */
export type TargetSpec =
  | { kind: 'http'; url: string; token: string }
  | { kind: 'memory' }
  | { kind: 'lowdb'; data?: string }
  | { kind: 'postgres'; databaseUrl: string };

/** The parsed command line of a run. */
export interface BenchOptions {
  /** A built-in workload name or a workload file's path. */
  workload: string;
  target: TargetSpec;
  clients: number;
  /** Operations per second in all (open model), or null (closed model). */
  rate: number | null;
  durationS: number;
  warmupS: number;
  documents?: number;
  blocks?: number;
  distribution?: Distribution;
  /** coedit: editors over /documents/{ref}/sync (default {@link DEFAULT_EDITORS}). */
  editors?: number;
  json?: string;
  html?: string;
  baseline: boolean;
  keep: boolean;
  quiet: boolean;
}

/** A positive number flag (seconds, rates): finite, within [min, max]. */
function numberFlag(flag: string, text: string | undefined, min: number, max: number, integer: boolean): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  const ok = text.trim() !== '' && Number.isFinite(n) && n >= min && n <= max && (!integer || Number.isInteger(n));
  if (!ok) throw new UsageError(`${flag} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, not "${text}"`, BENCH_HELP_COMMAND);
  return n;
}

/** Flags of `kw bench` (and KW_TOKEN, DATABASE_URL of `env`) → {@link BenchOptions}. */
export function parseBenchArgs(args: string[], env: Record<string, string | undefined> = process.env): BenchOptions {
  const positional: string[] = [];
  const flags: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith('-')) {
      // A value flag takes the next word, even one starting with "-" (a negative number is then
      // reported as out of range, not as an unknown option).
      if (!a.includes('=') && VALUE_FLAGS.has(a) && i + 1 < args.length) flags.push(`${a}=${args[++i]!}`);
      else flags.push(a);
    } else positional.push(a);
  }
  if (positional.length > 1) throw new UsageError(`one workload at a time, not "${positional.join(' ')}"`, BENCH_HELP_COMMAND);
  const { values } = parseFlags(
    flags,
    {
      url: { type: 'string' },
      token: { type: 'string' },
      storage: { type: 'string' },
      data: { type: 'string' },
      'database-url': { type: 'string' },
      clients: { type: 'string' },
      rate: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      documents: { type: 'string' },
      editors: { type: 'string' },
      blocks: { type: 'string' },
      distribution: { type: 'string' },
      json: { type: 'string' },
      html: { type: 'string' },
      baseline: { type: 'boolean' },
      keep: { type: 'boolean' },
      quiet: { type: 'boolean' },
    },
    BENCH_HELP_COMMAND,
  );
  const workload = positional[0] ?? 'edit';
  if (!(workload in BUILT_IN) && !workload.endsWith('.json')) {
    throw new UsageError(`unknown workload "${workload}": one of ${Object.keys(BUILT_IN).join(', ')}, or a workload file (.json)`, BENCH_HELP_COMMAND);
  }
  let target: TargetSpec;
  if (values.url !== undefined) {
    if (values.storage !== undefined) throw new UsageError('--url and --storage exclude each other (a URL is benchmarked over HTTP, --storage in this process)', BENCH_HELP_COMMAND);
    if (values.data !== undefined || values['database-url'] !== undefined) throw new UsageError(`${values.data !== undefined ? '--data' : '--database-url'} is for an in-process target (--storage), not --url`, BENCH_HELP_COMMAND);
    let url: URL;
    try {
      url = new URL(values.url);
    } catch {
      throw new UsageError(`--url: "${values.url}" is not a URL like http://127.0.0.1:8787`, BENCH_HELP_COMMAND);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--url must be http:// or https://, not "${values.url}"`, BENCH_HELP_COMMAND);
    const token = values.token ?? (env.KW_TOKEN || undefined);
    if (!token) throw new UsageError('--url needs --token TOKEN (or the environment variable KW_TOKEN)', BENCH_HELP_COMMAND);
    target = { kind: 'http', url: url.href.replace(/\/$/, ''), token };
  } else {
    if (values.token !== undefined) throw new UsageError('--token needs --url (the in-process engine needs no token)', BENCH_HELP_COMMAND);
    const storage = oneOf('--storage', values.storage, ['memory', 'lowdb', 'postgres'] as const, 'memory', BENCH_HELP_COMMAND);
    if (values.data !== undefined && storage !== 'lowdb') throw new UsageError('--data needs --storage lowdb', BENCH_HELP_COMMAND);
    if (values.data === '') throw new UsageError('--data must not be empty', BENCH_HELP_COMMAND);
    if (values['database-url'] !== undefined && storage !== 'postgres') throw new UsageError('--database-url needs --storage postgres', BENCH_HELP_COMMAND);
    if (storage === 'postgres') {
      const databaseUrl = values['database-url'] ?? (env.DATABASE_URL || undefined);
      if (!databaseUrl) throw new UsageError('--storage postgres needs --database-url URL (or the environment variable DATABASE_URL)', BENCH_HELP_COMMAND);
      target = { kind: 'postgres', databaseUrl };
    } else if (storage === 'lowdb') target = { kind: 'lowdb', ...(values.data === undefined ? {} : { data: values.data }) };
    else target = { kind: 'memory' };
  }
  const distribution =
    values.distribution === undefined ? undefined : oneOf('--distribution', values.distribution, ['uniform', 'zipfian', 'partitioned'] as const, 'uniform', BENCH_HELP_COMMAND);
  const documents = numberFlag('--documents', values.documents, 1, 10_000, true);
  const editors = numberFlag('--editors', values.editors, 1, 100, true);
  if (workload === 'coedit') {
    const unfit = values.rate !== undefined ? '--rate' : values.baseline ? '--baseline' : values.distribution !== undefined ? '--distribution' : documents !== undefined && documents !== 1 ? '--documents' : null;
    if (unfit) {
      const why = { '--rate': 'its agents run closed: each waits until its edit reached every editor', '--baseline': 'it has no same-run baseline', '--distribution': 'everything happens on one document', '--documents': 'everything happens on one document' }[unfit];
      throw new UsageError(`${unfit} does not apply to coedit (${why})`, BENCH_HELP_COMMAND);
    }
  } else if (editors !== undefined) throw new UsageError('--editors is for the coedit workload', BENCH_HELP_COMMAND);
  const blocks = numberFlag('--blocks', values.blocks, 1, 10_000, true);
  for (const [flag, file] of [['--json', values.json], ['--html', values.html]] as const) {
    if (file === '') throw new UsageError(`${flag} needs a file name`, BENCH_HELP_COMMAND);
  }
  return {
    workload,
    target,
    clients: numberFlag('--clients', values.clients, 1, 1000, true) ?? 8,
    rate: numberFlag('--rate', values.rate, 0.1, 1_000_000, false) ?? null,
    durationS: numberFlag('--duration', values.duration, 0.1, 86_400, false) ?? 10,
    warmupS: numberFlag('--warmup', values.warmup, 0, 3600, false) ?? 2,
    ...(documents === undefined ? {} : { documents }),
    ...(blocks === undefined ? {} : { blocks }),
    ...(distribution === undefined ? {} : { distribution }),
    ...(workload === 'coedit' ? { editors: editors ?? DEFAULT_EDITORS } : {}),
    ...(values.json === undefined ? {} : { json: values.json }),
    ...(values.html === undefined ? {} : { html: values.html }),
    baseline: values.baseline ?? false,
    keep: values.keep ?? false,
    quiet: values.quiet ?? false,
  };
}

const VALUE_FLAGS = new Set(['--url', '--token', '--storage', '--data', '--database-url', '--clients', '--rate', '--duration', '--warmup', '--documents', '--editors', '--blocks', '--distribution', '--json', '--html']);
