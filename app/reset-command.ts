/**
 * `kw reset --data DIR [--yes]`: empty a dev server's data folder (every document, credential, job
 * and the demo-seed record), so the next `kw serve --seed demo` starts fresh.
 * @remarks The folder's lock is taken first, so a running server's folder is refused (naming the
 * holder's pid) and no server can open it while it is being emptied. Only a folder holding nothing
 * but what the dev server writes (checkpoint, journals, the demo-seed record, the lock) is emptied:
 * a `--data` that points at something else changes nothing.
 * @module
 */
import { readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { acquireDirLock, type DirLock } from '../adapters/lowdb/dir-lock.ts';
import { DEMO_RECORD_FILE, OPERATOR_KEY_FILE, SERVER_RECORD_FILE } from './data-dir.ts';
import type { CliIO } from './serve-command.ts';
import { KW, parseFlags, UsageError } from './usage.ts';

const HELP = `${KW} reset --help`;

/** Names the dev server writes into its data folder. */
const OWN_FILES = [/^checkpoint\.json(\.tmp)?$/, /^journal-\d+\.log$/, /^LOCK(\..*\.tmp)?$/, /^ACKED(\.tmp)?$/, /^uploads$/, ...[DEMO_RECORD_FILE, OPERATOR_KEY_FILE, SERVER_RECORD_FILE].map((name) => new RegExp(`^${name.replace('.', '\\.')}$`))];

/** Asks the person at a terminal; false when nobody is there to answer. */
export type Confirm = (question: string) => Promise<boolean>;

/** Ask on the terminal (stdin and stderr); no terminal: false. */
export const terminalConfirm: Confirm = async (question) => {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
};

/** Run `kw reset`; resolves with the exit code (0 emptied, 1 refused). */
export async function runReset(args: string[], io: CliIO, confirm: Confirm = terminalConfirm): Promise<number> {
  const { values } = parseFlags(args, { data: { type: 'string' }, yes: { type: 'boolean', short: 'y' } }, HELP);
  if (!values.data) throw new UsageError('--data is required (the folder a server was started with)', HELP);
  const dir = resolve(values.data);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      io.out(`kw: ${dir} does not exist; nothing to reset`);
      return 0;
    }
    io.err(`kw: cannot read ${dir}: ${code === 'ENOTDIR' ? 'it is a file, not a folder' : (error as Error).message}`);
    return 1;
  }
  const foreign = names.filter((n) => !OWN_FILES.some((p) => p.test(n)));
  if (foreign.length) {
    const shown = foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? ', …' : '');
    io.err(`kw: ${dir} is not a kw data folder (it holds ${shown}, which kw serve does not write); nothing was removed`);
    return 1;
  }
  let lock: DirLock;
  try {
    lock = await acquireDirLock(dir);
  } catch (error) {
    const m = /locked by (?:process (\d+)|this process)/.exec((error as Error).message);
    const pid = m ? (m[1] ?? String(process.pid)) : undefined;
    io.err(pid ? `kw: ${dir} is in use by a running server (pid ${pid}); stop it first (kill ${pid}), then reset` : `kw: cannot lock ${dir}: ${(error as Error).message}`);
    return 1;
  }
  try {
    if (!values.yes && !(await confirm(`Remove every document, credential and job in ${dir}?`))) {
      io.err(`kw: not reset; to empty ${dir} without a question, add --yes`);
      return 1;
    }
    const removed = (await readdir(dir)).filter((n) => n !== 'LOCK' && OWN_FILES.some((p) => p.test(n)));
    for (const name of removed) await rm(join(dir, name), { force: true, recursive: true });
    io.out(`kw: reset ${dir} (${removed.length} file${removed.length === 1 ? '' : 's'} removed); the next "${KW} serve --data ${values.data}" starts empty`);
    return 0;
  } finally {
    await lock.release();
  }
}
