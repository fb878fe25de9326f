/**
 * `kw serve`: flags → {@link serve}, then the `--json` line or the banner, and a graceful stop on
 * SIGINT/SIGTERM.
 * @module
 */
import { KW, oneOf, parseDuration, parseFlags, parseInteger, UsageError } from './usage.ts';
import { serve, type DevServer, type ServeOptions } from './serve.ts';

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
    ...(values.quiet ? {} : { requestLog: { write: (line: string) => io.err(line), format } }),
    notice: (line: string) => io.err(line),
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

function printBanner(server: DevServer, pagesOpen: boolean, io: CliIO): void {
  const where =
    server.storageKind === 'lowdb'
      ? `lowdb storage in ${server.dataDir}`
      : server.storageKind === 'postgres'
        ? 'postgres storage, shared with every process on the database'
        : 'memory storage (nothing is kept)';
  io.out(`kw: listening on ${server.url} (${where})`);
  io.out(`kw: operator key: ${server.operatorKey}${server.operatorKeyGenerated ? '  (generated; pass --operator-key or set KW_OPERATOR_KEY to choose one)' : ''}`);
  io.out(`kw: local person's account: ${server.localAccount} (tokens made without --account belong to it)`);
  if (server.demo) {
    io.out(`kw: demo token (account demo, every scope)${server.demoSeededNow ? '' : `, reused from the ${server.storageKind === 'postgres' ? 'database' : 'data folder'}`}:`);
    io.out(`    ${server.demo.token}`);
    io.out(`kw: demo document: ${server.demo.documentRef}`);
    io.out('kw: try it:');
    io.out(`    export TOKEN=${server.demo.token}`);
    io.out(`    curl -H "Authorization: Bearer $TOKEN" ${server.url}/api/v1/auth`);
    io.out(`    curl -H "Authorization: Bearer $TOKEN" "${server.url}/api/v1/documents/${server.demo.documentRef}?format=markdown"`);
  } else {
    io.out('kw: create a token (in another terminal, from this folder):');
    io.out(`    ${KW} token create --url ${server.url} --operator-key ${server.operatorKey} --scopes document:create,document:read,document:write${server.researchRunner === 'fixture' ? ',inquiry:create,knowledge:propose,research:run,research:read' : ''}`);
    io.out('kw: then try it:');
    io.out(`    curl -H "Authorization: Bearer $TOKEN" ${server.url}/api/v1/auth`);
  }
  if (server.signInUrl) io.out(`kw: sign in to the console (one use, 15 minutes; account ${server.localAccount}): ${server.signInUrl}`);
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
  io.out('kw: research runner: fixture (scripted; each phase ~200 ms; a question with the word "fail" fails in phase retrieving)');
  io.out(`    curl ${auth} -H "Idempotency-Key: $(uuidgen)" -H "Content-Type: application/json" -d '${spec}' ${server.url}/api/v1/research-jobs`);
  io.out(`    curl -N ${auth} ${server.url}/api/v1/research-jobs/$JOB/events   (SSE; the job waits in requesting-review with artifacts.review)`);
  io.out(`    curl -H "Authorization: Bearer ${server.operatorKey}" -H "Content-Type: application/json" -d '{"decision":"accept","person":"Me"}' ${server.url}/operator/v1/reviews/$REVIEW/decisions   (accept → succeeded; reject → failed)`);
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
