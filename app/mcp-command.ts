/**
 * `kw mcp`: the engine as a Model Context Protocol server over stdio, for an MCP client that starts
 * it as a child process. stdout carries only JSON-RPC; notices go to stderr.
 * @module
 */
import { contentExtractor, nodeFetcher } from '../adapters/capture/index.ts';
import { lowdbStorage } from '../adapters/lowdb/index.ts';
import { createApiHandler } from '../src/api/handler.ts';
import { createEngine } from '../src/engine.ts';
import { runMcpStdio } from '../transports/mcp/index.ts';
import { prepareDataDir } from './data-dir.ts';
import type { CliIO } from './serve-command.ts';
import { KW, parseFlags, UsageError } from './usage.ts';

const HELP = `${KW} mcp --help`;

/** `kw mcp --help`. */
export const MCP_HELP = `Usage: ${KW} mcp --data DIR --token TOKEN [options]

Serve the API to an MCP client over stdio (the client starts this command). Every tool call goes
through the same handler as HTTP, with the token's scopes and request budget.

Options:
  --data DIR                  data folder of the lowdb storage (required; not while a kw serve uses it)
  --token TOKEN               the bearer token the tools act with (or the KW_TOKEN environment variable)
  --capture-allow-private     let library capture fetch private and loopback addresses
  -h, --help                  show this text
`;

/** Run `kw mcp` until the client closes stdin; resolves with the exit code. */
export async function runMcpCommand(args: string[], io: CliIO): Promise<number> {
  const { values } = parseFlags(args, { data: { type: 'string' }, token: { type: 'string' }, 'capture-allow-private': { type: 'boolean' } }, HELP);
  const token = values.token ?? process.env.KW_TOKEN;
  if (!values.data) throw new UsageError('--data is required: the folder kw serve keeps its state in', HELP);
  if (!token) throw new UsageError('--token (or KW_TOKEN) is required: the bearer token the tools act with', HELP);
  await prepareDataDir(values.data);
  const storage = await lowdbStorage({ dir: values.data });
  const engine = createEngine({
    storage,
    fetcher: nodeFetcher(),
    extractor: contentExtractor(),
    captureAllowPrivate: values['capture-allow-private'] ?? false,
    onError: (error, source) => io.err(`kw mcp: ${source} failed: ${(error as Error)?.message ?? String(error)}`),
  });
  try {
    const mcp = await runMcpStdio({ handler: createApiHandler({ engine }), token });
    await mcp.closed;
    return 0;
  } finally {
    await engine.close();
  }
}
