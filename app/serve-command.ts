/**
 * `kw serve`: flags → {@link serve}, then the `--json` line or the banner, and a graceful stop on
 * SIGINT/SIGTERM.
 * @module
 */
import { resolve } from 'node:path';
import { SCOPES } from '../src/auth/scopes.ts';
import { KW, KW_QUIET, oneOf, parseDuration, parseFlags, parseInteger, UsageError } from './usage.ts';
import { OPERATOR_KEY_FILE, serve, type DevServer, type ServeOptions } from './serve.ts';
import { lineBatcher } from './request-log.ts';

/** Where the CLI writes; replaceable in tests. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
}

const HELP = `${KW} serve --help`;

/** `--mcp-allowed-hosts a,b:8787` as a list; an empty entry is a usage error. */
function hostList(value: string): string[] {
  const hosts = value.split(',').map((h) => h.trim());
  if (hosts.some((h) => h === '' || /[\s/]/.test(h))) throw new UsageError('--mcp-allowed-hosts takes host or host:port names separated by commas', HELP);
  return hosts;
}

/** Flags of `kw serve` (and `KW_OPERATOR_KEY` of `env`) → options of {@link serve}; wrong flags throw a {@link UsageError}. */
export function serveOptionsFrom(args: string[], io: CliIO, env: Record<string, string | undefined> = process.env): ServeOptions & { json: boolean } {
  const { values } = parseFlags(
    args,
    {
      host: { type: 'string' },
      port: { type: 'string' },
      data: { type: 'string' },
      storage: { type: 'string' },
      'database-url': { type: 'string' },
      'database-listen-url': { type: 'string' },
      seed: { type: 'string' },
      'operator-key': { type: 'string' },
      'capture-allow-private': { type: 'boolean' },
      'budget-window': { type: 'string' },
      'accept-data-loss': { type: 'boolean' },
      'dev-open-document-pages': { type: 'boolean' },
      'mcp-allowed-hosts': { type: 'string' },
      'research-runner': { type: 'string' },
      json: { type: 'boolean' },
      log: { type: 'string' },
      quiet: { type: 'boolean' },
    },
    HELP,
  );
  const operatorKey = operatorKeyFrom(values['operator-key'], env, HELP);
  if (values.host === '') throw new UsageError('--host must not be empty', HELP);
  if (values.data === '') throw new UsageError('--data must not be empty', HELP);
  const storage = oneOf('--storage', values.storage, ['lowdb', 'memory', 'postgres'] as const, 'lowdb', HELP);
  if (values.data !== undefined && storage === 'memory') throw new UsageError('--data needs --storage lowdb (memory storage keeps nothing on disk)', HELP);
  if (values['accept-data-loss'] && storage === 'memory') throw new UsageError('--accept-data-loss needs --storage lowdb', HELP);
  if (values['accept-data-loss'] && storage === 'postgres') throw new UsageError('--accept-data-loss needs --storage lowdb', HELP);
  if (values.data !== undefined && storage === 'postgres') throw new UsageError('--data needs --storage lowdb (postgres keeps everything in the database)', HELP);
  const databaseUrl = values['database-url'] ?? (env.DATABASE_URL || undefined);
  // Request lines go out together, a write per turn of the event loop (see lineBatcher).
  const log = values.quiet ? null : lineBatcher((text) => io.err(text));
  if (storage === 'postgres' && databaseUrl === undefined) throw new UsageError('--storage postgres needs --database-url URL (or the environment variable DATABASE_URL)', HELP);
  if (values['database-url'] !== undefined && storage !== 'postgres') throw new UsageError('--database-url needs --storage postgres', HELP);
  if (values['database-listen-url'] === '') throw new UsageError('--database-listen-url must not be empty', HELP);
  if (values['database-listen-url'] !== undefined && storage !== 'postgres') throw new UsageError('--database-listen-url needs --storage postgres', HELP);
  const databaseListenUrl = values['database-listen-url'] ?? (env.DATABASE_LISTEN_URL || undefined);
  const format = oneOf('--log', values.log, ['text', 'json'] as const, 'text', HELP);
  if (values.quiet && values.log !== undefined) throw new UsageError('--quiet and --log exclude each other', HELP);
  return {
    host: values.host ?? '127.0.0.1',
    port: values.port === undefined ? 8787 : parseInteger('--port', values.port, 0, 65_535, HELP),
    storage,
    ...(values.data === undefined ? {} : { data: values.data }),
    ...(storage === 'postgres' && databaseUrl !== undefined ? { databaseUrl } : {}),
    ...(storage === 'postgres' && databaseListenUrl !== undefined ? { databaseListenUrl } : {}),
    seed: oneOf('--seed', values.seed, ['demo', 'none'] as const, 'none', HELP),
    ...(operatorKey === undefined ? {} : { operatorKey }),
    captureAllowPrivate: values['capture-allow-private'] ?? false,
    ...(values['accept-data-loss'] ? { acceptDataLoss: true } : {}),
    ...(values['budget-window'] === undefined ? {} : { budgetWindowMs: parseDuration(values['budget-window'], HELP) }),
    documentPages: values['dev-open-document-pages'] ? 'open' : 'sign-in-required',
    ...(values['mcp-allowed-hosts'] === undefined ? {} : { mcpAllowedHosts: hostList(values['mcp-allowed-hosts']) }),
    researchRunner: oneOf('--research-runner', values['research-runner'], ['none', 'fixture'] as const, 'none', HELP),
    ...(log === null ? {} : { requestLog: { write: log.line, format } }),
    notice: (line: string) => {
      log?.flush(); // the request lines before it stay before it
      io.err(line);
    },
    json: values.json ?? false,
  };
}

/**
 * The operator key: `--operator-key`, else the environment's `KW_OPERATOR_KEY`, else undefined (the
 * server makes one). Either must be at least 16 characters.
 */
export function operatorKeyFrom(flag: string | undefined, env: Record<string, string | undefined>, help: string): string | undefined {
  if (flag !== undefined) {
    if (flag.length < 16) throw new UsageError('--operator-key must be at least 16 characters', help);
    return flag;
  }
  const fromEnv = env.KW_OPERATOR_KEY;
  if (fromEnv === undefined || fromEnv === '') return undefined;
  if (fromEnv.length < 16) throw new UsageError('KW_OPERATOR_KEY must be at least 16 characters', help);
  return fromEnv;
}

/** A duration in the largest unit that divides it: `1m`, `24h`, `500ms`. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** The jq filter printing `path` of an answer, or failing with the answer's error (never a silent null). */
const jqOrError = (path: string) => `'${path} // error("\\(.error.code): \\(.error.message)")'`;

/**
 * The banner. Every line indented by four spaces is a command that runs verbatim in bash (with curl
 * and jq, from the folder the server was started in), in order: later ones use the variables earlier
 * ones set (app/banner.test.ts runs them).
 */
function printBanner(server: DevServer, pagesOpen: boolean, io: CliIO): void {
  const where =
    server.storageKind === 'lowdb'
      ? `lowdb storage in ${server.dataDir}`
      : server.storageKind === 'postgres'
        ? 'postgres storage, shared with every process on the database'
        : 'memory storage (nothing is kept)';
  const keyNote = !server.operatorKeyGenerated
    ? ''
    : server.storageKind === 'lowdb'
      ? `  (generated${server.operatorKeyReused ? ' earlier' : ''} and kept in ${server.dataDir}/${OPERATOR_KEY_FILE}; pass --operator-key or set KW_OPERATOR_KEY to choose one)`
      : '  (generated; pass --operator-key or set KW_OPERATOR_KEY to choose one)';
  const window = formatDuration(server.budgetWindowMs);
  io.out(`kw: listening on ${server.url} (${where})`);
  io.out(`kw: operator key: ${server.operatorKey}${keyNote}`);
  io.out(`kw: local person's account: ${server.localAccount} (tokens made without --account belong to it)`);
  io.out(`kw: request budgets renew every ${window} (--budget-window; a token a loop has spent is back within that)`);
  const fresh = (scopes: string) =>
    `export TOKEN=$(${KW_QUIET} token create --url ${server.url} --operator-key ${server.operatorKey} --scopes ${scopes} --json | jq -r .token)`;
  if (server.demo) {
    const spent = server.demoBudget !== null && server.demoBudget.remaining === 0;
    if (spent) {
      io.out(`kw: the demo token (account demo, every scope, reused from the ${server.storageKind === 'postgres' ? 'database' : 'data folder'}) has spent its request budget`);
      io.out(`kw: until ${server.demoBudget!.resetsAt}; wait until then, or make a fresh token of account ${server.localAccount} with every scope:`);
      io.out(`    ${fresh(SCOPES.join(','))}`);
    } else {
      io.out(`kw: demo token (account demo, every scope${server.demoSeededNow ? '' : `, reused from the ${server.storageKind === 'postgres' ? 'database' : 'data folder'}`}): ${server.demo.token}`);
    }
    io.out(`kw: demo document: ${server.demo.documentRef}`);
    io.out('kw: try it:');
    if (!spent) io.out(`    export TOKEN=${server.demo.token}`);
    io.out(`    curl -s -H "Authorization: Bearer $TOKEN" ${server.url}/api/v1/auth | jq -c '.error // .data.budgets'`);
    io.out(`    curl -s -H "Authorization: Bearer $TOKEN" "${server.url}/api/v1/documents/${server.demo.documentRef}?format=markdown"`);
  } else {
    io.out('kw: create a token (in another terminal, from this folder), then try it:');
    io.out(`    ${fresh(`document:create,document:read,document:write${server.researchRunner === 'fixture' ? ',inquiry:create,knowledge:propose,research:run,research:read' : ''}`)}`);
    io.out(`    curl -s -H "Authorization: Bearer $TOKEN" ${server.url}/api/v1/auth | jq -c '.error // .data.budgets'`);
  }
  if (server.signInUrl) {
    io.out(`kw: sign in to the console (one use, 15 minutes; account ${server.localAccount}): ${server.signInUrl}`);
    io.out('kw: a fresh sign-in link at any time:');
    const defaultDir = server.dataDir !== null && server.dataDir === resolve('.kw-data');
    io.out(
      server.dataDir !== null
        ? `    ${KW_QUIET} sign-in${defaultDir ? '' : ` --data ${server.dataDir}`}`
        : `    ${KW_QUIET} sign-in --url ${server.url} --operator-key ${server.operatorKey}`,
    );
  }
  if (server.researchRunner === 'fixture') printFixtureHelp(server, io);
  if (pagesOpen) io.out('kw: WARNING --dev-open-document-pages: /documents/{documentRef} pages show private documents to anyone who can reach this server');
  io.out(`kw: OpenAPI document: ${server.url}/openapi.json`);
  io.out(`kw: MCP (streamable HTTP): ${server.url}/mcp`);
  io.out('kw: press Ctrl-C to stop');
}

/** How to drive the fixture research runner: start a job, follow it, decide its review. */
function printFixtureHelp(server: DevServer, io: CliIO): void {
  const auth = '-H "Authorization: Bearer $TOKEN"';
  const spec = JSON.stringify({ v: 1, question: 'How do CRDTs converge?', profile: 'focused', visibilityIntent: 'private', deliverable: { kind: 'report', form: 'evidence-review', language: 'en' }, spaceRef: { kind: 'new-document', title: 'CRDTs' } });
  io.out('kw: research runner: fixture (scripted; each phase ~200 ms; a question with the word "fail" fails in phase retrieving):');
  io.out(`    JOB=$(curl -s ${auth} -H "Idempotency-Key: fixture-job-$(date +%s)-$RANDOM" -H "Content-Type: application/json" -d '${spec}' ${server.url}/api/v1/research-jobs | jq -r ${jqOrError('.data.jobId')})`);
  io.out('kw: follow its events for 5 seconds (it then waits in phase requesting-review, with artifacts.review):');
  io.out(`    curl -sN --max-time 5 ${auth} -H "Accept: text/event-stream" ${server.url}/api/v1/research-jobs/$JOB/events`);
  io.out('kw: decide its review as the person would (accept → succeeded; reject → failed):');
  io.out(`    REVIEW=$(curl -s ${auth} ${server.url}/api/v1/research-jobs/$JOB | jq -r ${jqOrError('.data.artifacts.review.reviewRef')})`);
  io.out(`    curl -s -H "Authorization: Bearer ${server.operatorKey}" -H "Content-Type: application/json" -d '{"decision":"accept","person":"Me"}' ${server.url}/operator/v1/reviews/$REVIEW/decisions | jq -c ${jqOrError('.data.state')}`);
}

/**
 * `kw serve` without the signal handling: parse the flags, start the server, print the `--json` line
 * or the banner. The caller owns the returned server.
 */
export async function startServe(args: string[], io: CliIO): Promise<DevServer> {
  const { json, ...options } = serveOptionsFrom(args, io);
  const server = await serve(options);
  if (json) {
    io.out(JSON.stringify({ url: server.url, operatorKey: server.operatorKey, demo: server.demo ? { token: server.demo.token } : null, signInUrl: server.signInUrl }));
  } else {
    printBanner(server, options.documentPages === 'open', io);
  }
  return server;
}

/** Stop on SIGINT/SIGTERM: finish in-flight requests, close the engine, exit 0. A second signal exits 1 at once. */
export function stopOnSignals(server: DevServer, io: CliIO): void {
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
  // Under `npm start` the parent is npm: when it is gone (killed without passing the signal on, e.g.
  // SIGKILL), stop too rather than keep holding the port and the data folder as an orphan.
  if (process.env.npm_lifecycle_event !== undefined) {
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid !== parent) {
        clearInterval(watch);
        stop('SIGHUP');
      }
    }, 1000);
    watch.unref();
  }
}
