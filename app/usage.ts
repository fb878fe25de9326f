/**
 * The help texts of `kw`, the usage error and the small flag parsers the commands share.
 * @module
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * How the user reaches this command from the folder they are in: `npx kw` where the package is
 * installed (the bundled dist/kw.mjs), `npm run kw --` in a clone of the repository (running from
 * source), where `npx kw` would look for an unrelated package of that name on the registry.
 */
export const KW = import.meta.url.endsWith('.ts') ? 'npm run kw --' : 'npx kw';

/** {@link KW} printing only the command's own output (npm's `-s`), for `$(…)` in printed commands. */
export const KW_QUIET = import.meta.url.endsWith('.ts') ? 'npm run -s kw --' : 'npx kw';

/** `kw serve --help`. */
export const SERVE_HELP = `Usage: ${KW} serve [options]

Run the API server for local development (the dev server), with the browser app: it prints a
one-time sign-in link (15 minutes) for the console, agent tokens and reviews (docs/browser-app.md).

Options:
  --host HOST                 interface to bind (default 127.0.0.1)
  --port PORT                 port, 0 picks a free one (default 8787)
  --data DIR                  data folder of the lowdb storage (default ./.kw-data)
  --storage lowdb|memory|postgres
                              where state lives (default lowdb); postgres: several processes
                              on one database share everything (docs/postgres.md)
  --database-url URL          the PostgreSQL database of --storage postgres
                              (default: the environment variable DATABASE_URL); may be a
                              pooler in transaction mode (PgBouncer pool_mode = transaction)
  --database-listen-url URL   a direct connection to the same database used only to LISTEN
                              for other processes' changes, when --database-url is pooled
                              (default: DATABASE_LISTEN_URL, else --database-url)
  --seed demo|none            load the demo fixtures once into the data folder, or once per
                              database with postgres (default none)
  --operator-key KEY          operator key of /operator/v1, at least 16 characters
                              (default: KW_OPERATOR_KEY, else generated and printed, and with
                              lowdb kept in the data folder (0600) for the next start; give
                              the same one to every process on one database)
  --capture-allow-private     let library capture fetch private and loopback addresses
  --budget-window DURATION    request-budget window, e.g. 500ms, 30s, 10m, 24h, 7d (default 1m,
                              so a benchmark cannot lock a token out for a day)
  --accept-data-loss          open a data folder whose journal lost acknowledged writes (cut short or
                              damaged), keeping what is intact; without it such a folder is refused
                              with what was lost (a torn last write after a crash never needs it)
  --research-runner none|fixture
                              fixture: a scripted research runner for building agents
                              against (each job plans, retrieves, extracts, proposes,
                              synthesizes a report, then waits for the person's review;
                              a question with the word "fail" fails); default none
                              (fresh research-job starts answer 410)
  --dev-open-document-pages   serve /documents/{documentRef} pages WITHOUT sign-in: anyone who can
                              reach the server reads every private document shown there (default:
                              signed out, those pages answer 401 and say how to sign in)
  --mcp-allowed-hosts LIST    Host names /mcp answers, e.g. kw.lan,kw.lan:8787 (default: localhost,
                              127.0.0.1, [::1] and the --host address, on the port); others get 403
  --json                      print one JSON line {"url","operatorKey","demo","signInUrl"} first
                              on stdout
  --log text|json             request log format on stderr, one line per request (default text)
  --quiet                     no request log
  -h, --help                  show this text
`;

/** `kw token create --help`. */
export const TOKEN_HELP = `Usage: ${KW} token create [options]

Create a credential through the operator API of a running server.

Options:
  --url URL                   server URL, e.g. http://127.0.0.1:8787 (required)
  --operator-key KEY          operator key (required unless KW_OPERATOR_KEY is set)
  --scopes a,b                comma-separated scopes (required)
  --account A                 owning account (default: the local person's, demo when
                              the server's data were seeded with --seed demo, else owner)
  --document REF              bind the credential to one document (documentRef)
  --budget N                  request budget 1-10000 (default 10000)
  --expires-in-days D         lifetime 1-90 days (default 90)
  --label TEXT                label (default "kw token create")
  --json                      print the created credential as one JSON line
  -h, --help                  show this text
`;

/** `kw token --help`: the token commands. */
export const TOKEN_GROUP_HELP = `Usage: ${KW} token <subcommand> [options]

Subcommands:
  create                      create a credential through the operator API of a running server

Run "${KW} token create --help" for its options.
`;

/** `kw sign-in --help`. */
export const SIGN_IN_HELP = `Usage: ${KW} sign-in [--data DIR] [--url URL --operator-key KEY]

Print a fresh one-time sign-in link (15 minutes) to the browser app of a running dev server: by
default the server holding ./.kw-data, found through its data folder (its lock and the url it
records there), with the operator key it keeps there; or the server at --url.

Options:
  --data DIR                  the data folder of the running server (default ./.kw-data)
  --url URL                   the server's URL instead, e.g. http://127.0.0.1:8787
  --operator-key KEY          operator key (default: KW_OPERATOR_KEY, else the key kept in the
                              data folder)
  --account A                 sign into this account (default: the local person's)
  -h, --help                  show this text
`;

/** `kw reset --help`. */
export const RESET_HELP = `Usage: ${KW} reset --data DIR [--yes]

Empty a data folder of the dev server: every document, credential, research job and the demo seed
go, so the next "${KW} serve --data DIR" starts empty (and --seed demo seeds again). Refused while a
server holds the folder (its pid is named), and for a folder holding files kw serve does not write.

Options:
  --data DIR                  the data folder (required)
  -y, --yes                   do not ask for confirmation
  -h, --help                  show this text
`;

/** `kw help`: every command. */
export const USAGE = `Usage: ${KW} <command> [options]

Commands:
  serve                       run the API server for local development (MCP at /mcp too)
  mcp                         serve the API to an MCP client over stdio
  token create                create a credential through the operator API
  sign-in                     print a fresh sign-in link to the browser app of a running server
  reset                       empty a data folder
  bench                       benchmark mutation throughput of the engine or of a running service
  help                        show this text

Options:
  -h, --help                  show help (also after a command: ${KW} serve --help)
  -v, --version               print the version

Run "${KW} <command> --help" for the options of a command.
`;

/** A wrong command line: printed as one line naming what is wrong and where help is; exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** The help command that explains the failing command, e.g. `npx kw serve --help`. */
  readonly helpCommand: string;
  constructor(message: string, helpCommand = `${KW} --help`) {
    super(message);
    this.helpCommand = helpCommand;
  }
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parse a duration such as `500ms`, `30s`, `10m`, `24h` or `7d` into milliseconds. */
export function parseDuration(text: string, helpCommand?: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) throw new UsageError(`--budget-window: "${text}" is not a duration like 500ms, 30s, 10m, 24h or 7d`, helpCommand);
  const ms = Number(m[1]) * DURATION_UNITS[m[2]!]!;
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new UsageError('--budget-window must be greater than zero', helpCommand);
  return ms;
}

/** An integer flag within [min, max]. */
export function parseInteger(flag: string, text: string, min: number, max: number, helpCommand?: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) {
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, not "${text}"`, helpCommand);
  }
  return n;
}

/** One of a fixed set of values, or the fallback when the flag is absent. */
export function oneOf<T extends string>(flag: string, text: string | undefined, values: readonly T[], fallback: T, helpCommand?: string): T {
  if (text === undefined) return fallback;
  if (!(values as readonly string[]).includes(text)) {
    throw new UsageError(`${flag} must be one of ${values.join(', ')}, not "${text}"`, helpCommand);
  }
  return text as T;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** `parseArgs` in strict mode without positionals; its errors become one-line {@link UsageError}s. */
export function parseFlags<const O extends Options>(args: string[], options: O, helpCommand: string) {
  try {
    return parseArgs({ args: joinDashValues(args, options), options, strict: true, allowPositionals: false });
  } catch (error) {
    // node's messages can go on with a second sentence (about `--` separators); the first says it all.
    const first = (error as Error).message.split(/\.\s/)[0]!;
    throw new UsageError(first.replace(/^Unknown option '(.+)'$/, 'unknown option $1').replace(/^Unexpected argument/, 'unexpected argument'), helpCommand);
  }
}

/**
 * A string option's value may begin with `-` (a random key such as `-Qx3…` does one time in 64):
 * `--operator-key -Qx3…` becomes `--operator-key=-Qx3…` unless that next word is itself one of the
 * command's options, so parseArgs reads it as the value rather than calling it ambiguous.
 */
function joinDashValues(args: string[], options: Options): string[] {
  const known = new Set<string>();
  for (const [name, option] of Object.entries(options)) {
    known.add(`--${name}`);
    if (option.short !== undefined) known.add(`-${option.short}`);
  }
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    const next = args[i + 1];
    const name = word.startsWith('--') && !word.includes('=') ? word.slice(2) : null;
    if (name !== null && options[name]?.type === 'string' && next !== undefined && next.startsWith('-') && next !== '--' && !known.has(next.split('=')[0]!)) {
      out.push(`${word}=${next}`);
      i++;
    } else {
      out.push(word);
    }
  }
  return out;
}
