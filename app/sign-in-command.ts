/**
 * `kw sign-in [--data DIR] [--url URL --operator-key KEY]`: a fresh one-time sign-in link for a running
 * dev server, by default the one holding `./.kw-data` (decisions.md, "The dev server and the operator").
 * @remarks How the server is found from its data folder: the folder's `LOCK` names the process that
 * holds it (pid, start time, boot id), and the server records its url and pid in `server.json` beside
 * it; the record counts only while that very process still holds the lock. The operator key is
 * `--operator-key`, else `KW_OPERATOR_KEY`, else the key the server generated and kept in the folder
 * (`operator-key`, 0600). The link comes from `POST /operator/v1/sign-in-links`.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isRunning, parseIdentity } from '../adapters/lowdb/process-identity.ts';
import { readKeptOperatorKey, readServerRecord } from './data-dir.ts';
import type { CliIO } from './serve-command.ts';
import { KW, parseFlags, UsageError } from './usage.ts';

const HELP = `${KW} sign-in --help`;

/** The url of the server running on `dir`, or a sentence saying why there is none. */
async function runningServerOf(dir: string): Promise<{ url: string } | { problem: string }> {
  const start = `start one: ${KW} serve --data ${dir}`;
  let lockText: string;
  try {
    lockText = await readFile(join(dir, 'LOCK'), 'utf8');
  } catch {
    return { problem: `no server is running on ${dir} (${start}), or pass --url and --operator-key` };
  }
  const holder = parseIdentity(lockText);
  const record = await readServerRecord(dir);
  if (!holder || !isRunning(holder)) return { problem: `no server is running on ${dir} (its lock is stale; ${start})` };
  if (!record || record.pid !== holder.pid) {
    return { problem: `${dir} is held by process ${holder.pid}, which records no server url there (still starting, or not kw serve); pass --url and --operator-key` };
  }
  return { url: record.url };
}

/** Run `kw sign-in`; resolves with the exit code (0 printed a link, 1 no server or refused). */
export async function runSignIn(args: string[], io: CliIO, env: Record<string, string | undefined> = process.env): Promise<number> {
  const { values } = parseFlags(args, { data: { type: 'string' }, url: { type: 'string' }, 'operator-key': { type: 'string' }, account: { type: 'string' } }, HELP);
  if (values.data === '') throw new UsageError('--data must not be empty', HELP);
  if (values.url !== undefined && values.data !== undefined) throw new UsageError('--url and --data exclude each other (--data finds the url of the server holding that folder)', HELP);
  let base: URL | null = null;
  if (values.url !== undefined) {
    try {
      base = new URL(values.url);
    } catch {
      throw new UsageError(`--url must be an absolute URL such as http://127.0.0.1:8787, not "${values.url}"`, HELP);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UsageError('--url must be an http: or https: URL', HELP);
  }
  let operatorKey = values['operator-key'] || env.KW_OPERATOR_KEY || null;
  if (base === null) {
    const dir = resolve(values.data ?? '.kw-data');
    const found = await runningServerOf(dir);
    if ('problem' in found) {
      io.err(`kw: ${found.problem}`);
      return 1;
    }
    base = new URL(found.url);
    operatorKey ??= await readKeptOperatorKey(dir);
    if (operatorKey === null) {
      io.err(`kw: the server on ${dir} was started with an operator key it does not keep; pass --operator-key KEY or set KW_OPERATOR_KEY`);
      return 1;
    }
  }
  if (operatorKey === null) throw new UsageError('--url needs --operator-key KEY (or the environment variable KW_OPERATOR_KEY)', HELP);

  const endpoint = new URL('operator/v1/sign-in-links', base.href.endsWith('/') ? base.href : `${base.href}/`);
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(values.account === undefined ? {} : { account: values.account }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    io.err(`kw: could not reach ${endpoint.href}: ${String((error as Error).cause ?? (error as Error).message)} (is "${KW} serve" running there?)`);
    return 1;
  }
  let json: { data?: { url?: string; expiresAt?: string }; error?: { code?: string; message?: string } } = {};
  try {
    json = JSON.parse(await response.text());
  } catch {
    /* reported below */
  }
  if (response.status !== 201 || typeof json.data?.url !== 'string') {
    io.err(`kw: ${response.status} ${json.error?.code ?? ''}: ${json.error?.message ?? 'no sign-in link in the answer'}`);
    return 1;
  }
  io.out(json.data.url);
  io.err(`kw: a one-time sign-in link, valid until ${json.data.expiresAt ?? '15 minutes from now'}; open it in the browser`);
  return 0;
}
