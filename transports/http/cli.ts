#!/usr/bin/env -S npx tsx
/**
 * The `kw` command line (decisions.md "The dev server and the operator"):
 *
 * ```
 * kw serve [--host 127.0.0.1] [--port 8787] [--data DIR] [--storage lowdb|memory] [--seed demo|none]
 *          [--operator-key KEY] [--capture-allow-private] [--budget-window DURATION] [--json]
 * kw token create --url URL --operator-key KEY --scopes a,b [--account A] [--document REF]
 *          [--budget N] [--expires-in-days D] [--label TEXT] [--json]
 * ```
 *
 * Runs through tsx (`tsx transports/http/cli.ts serve`) and as the single bundled file `dist/kw.mjs`.
 * Exit codes: 0 success, 1 failure, 2 usage error.
 * @module
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;
import { serve, type DevServer } from './serve.ts';

/** The usage text printed on `kw help` and, on stderr, after a usage error. */
export const USAGE = `Usage:
  kw serve [options]            run the API server (dev server)
    --host HOST                 interface to bind (default 127.0.0.1)
    --port PORT                 port, 0 picks a free one (default 8787)
    --data DIR                  data folder of the lowdb storage (default ./.kw-data)
    --storage lowdb|memory      where state lives (default lowdb)
    --seed demo|none            load the demo fixtures once into the data folder (default none)
    --operator-key KEY          operator key of /operator/v1 (default: generated and printed)
    --capture-allow-private     let library capture fetch private and loopback addresses
    --budget-window DURATION    request-budget window, e.g. 500ms, 30s, 10m, 24h, 7d (default 24h)
    --json                      print one JSON line {"url","operatorKey","demo"} first

  kw token create [options]     create a credential through the operator API
    --url URL                   server URL, e.g. http://127.0.0.1:8787 (required)
    --operator-key KEY          operator key (required)
    --scopes a,b                comma-separated scopes (required)
    --account A                 owning account (default owner)
    --document REF              bind the credential to one document (documentRef)
    --budget N                  request budget 1-10000 (default 10000)
    --expires-in-days D         lifetime 1-90 days (default 90)
    --label TEXT                label (default "kw token create")
    --json                      print the created credential as one JSON line

  kw help                       show this text
`;

class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Where the CLI writes; replaceable in tests. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
}

const processIO: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parse a duration such as `500ms`, `30s`, `10m`, `24h` or `7d` into milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) throw new UsageError(`--budget-window: "${text}" is not a duration like 500ms, 30s, 10m, 24h or 7d`);
  const ms = Number(m[1]) * DURATION_UNITS[m[2]!]!;
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new UsageError('--budget-window must be greater than zero');
  return ms;
}

function parseInteger(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} must be an integer from ${min} to ${max}`);
  const n = Number(text);
  if (n < min || n > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max}`);
  return n;
}

function oneOf<T extends string>(flag: string, text: string | undefined, values: readonly T[], fallback: T): T {
  if (text === undefined) return fallback;
  if (!(values as readonly string[]).includes(text)) throw new UsageError(`${flag} must be one of ${values.join(', ')}`);
  return text as T;
}

function parse<const O extends ParseArgsOptionsConfig>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

// ---------------------------------------------------------------------------------------------
// kw serve

function printServeBanner(server: DevServer, io: CliIO): void {
  const where = server.storageKind === 'lowdb' ? `lowdb storage in ${server.dataDir}` : 'memory storage (nothing is kept)';
  io.out(`kw: listening on ${server.url} (${where})`);
  io.out(`kw: operator key: ${server.operatorKey}${server.operatorKeyGenerated ? '  (generated; pass --operator-key to choose one)' : ''}`);
  if (server.demo) {
    io.out(`kw: demo token (account demo, every scope)${server.demoSeededNow ? '' : ', reused from the data folder'}:`);
    io.out(`    ${server.demo.token}`);
    io.out(`kw: demo document: ${server.demo.documentRef}`);
    io.out('kw: try it:');
    io.out(`    export TOKEN=${server.demo.token}`);
    io.out(`    curl -H "Authorization: Bearer $TOKEN" ${server.url}/api/v1/auth`);
    io.out(`    curl -H "Authorization: Bearer $TOKEN" "${server.url}/api/v1/documents/${server.demo.documentRef}?format=markdown"`);
  } else {
    io.out('kw: create a token:');
    io.out(`    kw token create --url ${server.url} --operator-key ${server.operatorKey} --scopes document:create,document:read,document:write`);
    io.out('kw: then try it:');
    io.out(`    curl -H "Authorization: Bearer $TOKEN" ${server.url}/api/v1/auth`);
  }
  io.out(`kw: OpenAPI document: ${server.url}/openapi.json`);
  io.out('kw: press Ctrl-C to stop');
}

/**
 * `kw serve` without the signal handling: parse the flags, start the server, print the `--json` line
 * or the banner. The caller owns the returned server.
 */
export async function startServe(args: string[], io: CliIO = processIO): Promise<DevServer> {
  const { values } = parse(args, {
    host: { type: 'string' },
    port: { type: 'string' },
    data: { type: 'string' },
    storage: { type: 'string' },
    seed: { type: 'string' },
    'operator-key': { type: 'string' },
    'capture-allow-private': { type: 'boolean' },
    'budget-window': { type: 'string' },
    json: { type: 'boolean' },
  });
  const port = values.port === undefined ? 8787 : parseInteger('--port', values.port, 0, 65_535);
  const storage = oneOf('--storage', values.storage, ['lowdb', 'memory'] as const, 'lowdb');
  const seed = oneOf('--seed', values.seed, ['demo', 'none'] as const, 'none');
  if (values['operator-key'] !== undefined && values['operator-key'].length < 16) {
    throw new UsageError('--operator-key must be at least 16 characters');
  }
  if (values.host === '') throw new UsageError('--host must not be empty');
  const server = await serve({
    host: values.host ?? '127.0.0.1',
    port,
    storage,
    ...(values.data === undefined ? {} : { data: values.data }),
    seed,
    ...(values['operator-key'] === undefined ? {} : { operatorKey: values['operator-key'] }),
    captureAllowPrivate: values['capture-allow-private'] ?? false,
    ...(values['budget-window'] === undefined ? {} : { budgetWindowMs: parseDuration(values['budget-window']) }),
  });
  if (values.json) {
    io.out(JSON.stringify({ url: server.url, operatorKey: server.operatorKey, demo: server.demo ? { token: server.demo.token } : null }));
  } else {
    printServeBanner(server, io);
  }
  return server;
}

/** Stop on SIGINT/SIGTERM: finish in-flight requests, close the engine, exit 0. A second signal exits 1 at once. */
function stopOnSignals(server: DevServer, io: CliIO): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      io.err(`kw: ${signal} again, exiting now`);
      process.exit(1);
    }
    stopping = true;
    io.err(`kw: ${signal}: finishing in-flight requests and closing storage`);
    const force = setTimeout(() => {
      io.err('kw: could not stop within 15 s, exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    server.close().then(
      () => {
        io.err('kw: stopped');
        process.exit(0);
      },
      (error: unknown) => {
        io.err(`kw: error while stopping: ${(error as Error)?.message ?? String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

// ---------------------------------------------------------------------------------------------
// kw token create

async function runTokenCreate(args: string[], io: CliIO): Promise<number> {
  const { values } = parse(args, {
    url: { type: 'string' },
    'operator-key': { type: 'string' },
    scopes: { type: 'string' },
    account: { type: 'string' },
    document: { type: 'string' },
    budget: { type: 'string' },
    'expires-in-days': { type: 'string' },
    label: { type: 'string' },
    json: { type: 'boolean' },
  });
  for (const flag of ['url', 'operator-key', 'scopes'] as const) {
    if (!values[flag]) throw new UsageError(`--${flag} is required`);
  }
  let base: URL;
  try {
    base = new URL(values.url!);
  } catch {
    throw new UsageError('--url must be an absolute URL such as http://127.0.0.1:8787');
  }
  const scopes = values.scopes!.split(',').map((s) => s.trim()).filter(Boolean);
  if (!scopes.length) throw new UsageError('--scopes must list at least one scope');
  const body: Record<string, unknown> = { label: values.label ?? 'kw token create', scopes };
  if (values.account !== undefined) body.account = values.account;
  if (values.document !== undefined) body.documentRef = values.document;
  if (values.budget !== undefined) body.requestBudget = parseInteger('--budget', values.budget, 1, 10_000);
  if (values['expires-in-days'] !== undefined) body.expiresInDays = parseInteger('--expires-in-days', values['expires-in-days'], 1, 90);

  const endpoint = new URL('operator/v1/credentials', base.href.endsWith('/') ? base.href : `${base.href}/`);
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: { authorization: `Bearer ${values['operator-key']}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    io.err(`kw: could not reach ${endpoint.href}: ${(error as Error).cause ?? (error as Error).message}`);
    return 1;
  }
  const text = await response.text();
  let json: { data?: Record<string, unknown>; error?: { code?: string; message?: string; fieldErrors?: { field: string; message: string }[] } };
  try {
    json = JSON.parse(text);
  } catch {
    io.err(`kw: ${response.status} from ${endpoint.href}: not JSON`);
    return 1;
  }
  if (!response.ok || !json.data) {
    const e = json.error;
    io.err(`kw: ${response.status} ${e?.code ?? ''}: ${e?.message ?? 'request failed'}`);
    for (const f of e?.fieldErrors ?? []) io.err(`    ${f.field}: ${f.message}`);
    return 1;
  }
  const data = json.data;
  if (values.json) {
    io.out(JSON.stringify(data));
  } else {
    io.out(`token: ${String(data.token)}`);
    for (const key of ['credentialRef', 'displayPrefix', 'label', 'scopes', 'documentRef', 'requestBudget', 'expiresAt']) {
      if (data[key] !== undefined && data[key] !== null) io.out(`${key}: ${Array.isArray(data[key]) ? (data[key] as unknown[]).join(',') : String(data[key])}`);
    }
    io.out('The token is shown once: store it now.');
    io.out(`Try: curl -H "Authorization: Bearer ${String(data.token)}" ${base.origin}${base.pathname.replace(/\/$/, '')}/api/v1/auth`);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------

/**
 * Run the CLI. Resolves with the exit code for commands that finish, or null for `serve`, which
 * keeps running until SIGINT/SIGTERM.
 */
export async function main(argv: string[], io: CliIO = processIO): Promise<number | null> {
  const [command, ...rest] = argv;
  try {
    if (command === 'serve') {
      const server = await startServe(rest, io);
      stopOnSignals(server, io);
      return null;
    }
    if (command === 'token' && rest[0] === 'create') return await runTokenCreate(rest.slice(1), io);
    if (command === 'help' || command === '--help' || command === '-h') {
      io.out(USAGE);
      return 0;
    }
    throw new UsageError(command === undefined ? 'no command given' : `unknown command: ${[command, ...rest.slice(0, 1)].join(' ')}`);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`kw: ${error.message}`);
      io.err(USAGE);
      return 2;
    }
    io.err(`kw: ${(error as Error)?.message ?? String(error)}`);
    return 1;
  }
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return pathToFileURL(realpathSync(entry)).href === import.meta.url;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const code = await main(process.argv.slice(2));
  if (code !== null) process.exitCode = code;
}
