#!/usr/bin/env node
/**
 * The `kw` command line (docs/http-api.md):
 *
 * ```
 * kw mcp --data DIR --token TOKEN (the API as an MCP server over stdio)
 * kw serve [--host 127.0.0.1] [--port 8787] [--data DIR] [--storage lowdb|memory|postgres]
 *          [--database-url URL] [--seed demo|none]
 *          [--operator-key KEY] [--capture-allow-private] [--budget-window DURATION]
 *          [--dev-open-document-pages] [--json] [--log text|json] [--quiet]
 * kw token create --url URL --operator-key KEY --scopes a,b [--account A] [--document REF]
 *          [--budget N] [--expires-in-days D] [--label TEXT] [--json]
 * kw sign-in [--data DIR] [--url URL --operator-key KEY]
 * kw reset --data DIR [--yes]
 * kw bench [WORKLOAD] [--url URL --token TOKEN | --storage memory|lowdb|postgres] [options] (docs/bench.md)
 * kw bench compare A.json B.json
 * kw help | kw --help | kw <command> --help | kw --version
 * ```
 *
 * Runs through tsx in the repository (`npm start`, `tsx app/cli.ts serve`) and, installed, as the
 * single bundled file `dist/kw.mjs` (`npx kw serve`). Exit codes: 0 success, 1 failure, 2 usage error.
 * @module
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { isExtractWorker, serveExtractions } from '../adapters/capture/extract-thread.ts';
import { MCP_HELP, runMcpCommand } from './mcp-command.ts';
import { startServe, stopOnSignals, type CliIO } from './serve-command.ts';
import { runTokenCreate } from './token-command.ts';
import { runReset } from './reset-command.ts';
import { runBenchCommand } from './bench/command.ts';
import { runSignIn } from './sign-in-command.ts';
import { RESET_HELP, SERVE_HELP, SIGN_IN_HELP, TOKEN_GROUP_HELP, TOKEN_HELP, USAGE, UsageError } from './usage.ts';
import { VERSION } from './version.ts';

export type { CliIO } from './serve-command.ts';
export { parseDuration, USAGE } from './usage.ts';
export { startServe } from './serve-command.ts';

const processIO: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

const wantsHelp = (args: string[]) => args.includes('--help') || args.includes('-h');

/**
 * Run the CLI. Resolves with the exit code for commands that finish, or null for `serve`, which
 * keeps running until SIGINT/SIGTERM.
 * @remarks A usage error prints exactly one line on stderr: what is wrong and how to see help.
 */
export async function main(argv: string[], io: CliIO = processIO): Promise<number | null> {
  const [command, ...rest] = argv;
  try {
    if (command === '--version' || command === '-v' || command === 'version') {
      io.out(VERSION);
      return 0;
    }
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      if (command === undefined) throw new UsageError('no command given');
      io.out(USAGE);
      return 0;
    }
    if (command === 'serve') {
      if (wantsHelp(rest)) {
        io.out(SERVE_HELP);
        return 0;
      }
      const server = await startServe(rest, io);
      stopOnSignals(server, io);
      return null;
    }
    if (command === 'mcp') {
      if (wantsHelp(rest)) {
        io.out(MCP_HELP);
        return 0;
      }
      return await runMcpCommand(rest, io);
    }
    if (command === 'token') {
      if (rest[0] !== 'create' && wantsHelp(rest.slice(0, 1))) {
        io.out(TOKEN_GROUP_HELP);
        return 0;
      }
      if (rest[0] !== 'create') throw new UsageError(rest[0] === undefined ? 'token needs a subcommand: token create' : `unknown command: token ${rest[0]}`);
      if (wantsHelp(rest)) {
        io.out(TOKEN_HELP);
        return 0;
      }
      return await runTokenCreate(rest.slice(1), io);
    }
    if (command === 'bench') return await runBenchCommand(rest, io);
    if (command === 'sign-in') {
      if (wantsHelp(rest)) {
        io.out(SIGN_IN_HELP);
        return 0;
      }
      return await runSignIn(rest, io);
    }
    if (command === 'reset') {
      if (wantsHelp(rest)) {
        io.out(RESET_HELP);
        return 0;
      }
      return await runReset(rest, io);
    }
    throw new UsageError(`unknown command: ${command}`);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`kw: ${error.message} (see ${error.helpCommand})`);
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

// The bundled kw.mjs is also the entry of its own capture extraction threads (adapters/capture/extract-pool.ts).
if (isExtractWorker()) serveExtractions();
else if (isEntryPoint()) {
  const code = await main(process.argv.slice(2));
  if (code !== null) process.exitCode = code;
}
