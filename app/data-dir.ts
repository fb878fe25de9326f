/**
 * The dev server's data folder: created when missing, refused with a message naming it when it is a
 * file or cannot be written; and the demo-seed record kept inside it.
 * @remarks Because a bearer token is shown only once and only its hash is stored, the dev server keeps
 * the demo token in plain text in `<data>/demo-seed.json` (file mode 0600) so that a later start can
 * show it again. That is a convenience of the local dev server only: do not copy a seeded data folder
 * anywhere that matters. Delete the file to get a fresh demo credential on the next `--seed demo` start.
 * The folder itself is made 0700 and the storage keeps its files 0600 (docs/guarantees.md, "Files").
 * @module
 */
import { constants } from 'node:fs';
import { access, chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DemoSeed } from './demo-seed.ts';

/** Name of the dev server's demo-seed record inside the data folder. */
export const DEMO_RECORD_FILE = 'demo-seed.json';

/** A problem the person starting the server can fix; the CLI prints its message and exits 1. */
export class ServeError extends Error {
  override readonly name = 'ServeError';
}

/** The message for a data folder that cannot be used, naming the folder and what to do. */
export function dataDirProblem(dir: string, error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOTDIR':
    case 'EEXIST':
      return `the data folder ${dir} cannot be created: a file is in the way (choose another folder with --data)`;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return `the data folder ${dir} is not writable (${error.code}); fix its permissions or choose another folder with --data`;
    default:
      return `the data folder ${dir} cannot be used: ${error.message}`;
  }
}

/**
 * Make sure `dir` is a writable folder, creating it (and its parents) when missing.
 * @throws ServeError naming the folder when it is a file, cannot be created or is not writable.
 */
export async function prepareDataDir(dir: string): Promise<void> {
  try {
    const info = await stat(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (info && !info.isDirectory()) {
      throw new ServeError(`the data folder ${dir} is a file, not a folder (choose another folder with --data)`);
    }
    if (!info) await mkdir(dir, { recursive: true, mode: 0o700 });
    // Document text and token hashes live here: only the owner may enter (lowdb keeps its files 0600).
    await chmod(dir, 0o700).catch(() => {});
    await access(dir, constants.W_OK);
  } catch (error) {
    if (error instanceof ServeError) throw error;
    throw new ServeError(dataDirProblem(dir, error as NodeJS.ErrnoException), { cause: error });
  }
}

interface DemoRecord {
  v: 1;
  token: string;
  documentRef: string;
  seededAt: string;
}

/** The demo seed recorded in `dir`, or null when there is none (or it is unreadable). */
export async function readDemoRecord(dir: string): Promise<DemoSeed | null> {
  try {
    const value = JSON.parse(await readFile(join(dir, DEMO_RECORD_FILE), 'utf8')) as Partial<DemoRecord>;
    if (value.v !== 1 || typeof value.token !== 'string' || typeof value.documentRef !== 'string') return null;
    return { token: value.token, documentRef: value.documentRef };
  } catch {
    return null;
  }
}

/** Record the demo seed in `dir` (mode 0600). */
export async function writeDemoRecord(dir: string, demo: DemoSeed): Promise<void> {
  const record: DemoRecord = { v: 1, ...demo, seededAt: new Date().toISOString() };
  const path = join(dir, DEMO_RECORD_FILE);
  await writeFile(path, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await chmod(path, 0o600); // the mode above applies only when the file is created
}

/** Name of the generated operator key kept in the data folder (mode 0600). */
export const OPERATOR_KEY_FILE = 'operator-key';
/** Name of the running server's record in the data folder: its url and pid (mode 0600). */
export const SERVER_RECORD_FILE = 'server.json';

/**
 * The operator key kept in `dir`, or null when there is none (or it is unreadable or too short).
 * @remarks Kept only when the key was generated (decisions.md, "The dev server and the operator"): a
 * key given with `--operator-key` or `KW_OPERATOR_KEY` is never written anywhere.
 */
export async function readKeptOperatorKey(dir: string): Promise<string | null> {
  try {
    const key = (await readFile(join(dir, OPERATOR_KEY_FILE), 'utf8')).trim();
    return key.length >= 16 && !/\s/.test(key) ? key : null;
  } catch {
    return null;
  }
}

/** Keep a generated operator key in `dir` (mode 0600), so the next start on the folder reuses it. */
export async function keepOperatorKey(dir: string, key: string): Promise<void> {
  const path = join(dir, OPERATOR_KEY_FILE);
  await writeFile(path, `${key}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
}

/** What a running server records of itself in its data folder, for `kw sign-in`. */
export interface ServerRecord {
  v: 1;
  url: string;
  pid: number;
}

/** Record the running server in `dir` (mode 0600); removed again by {@link removeServerRecord}. */
export async function writeServerRecord(dir: string, url: string): Promise<void> {
  const path = join(dir, SERVER_RECORD_FILE);
  const record: ServerRecord = { v: 1, url, pid: process.pid };
  await writeFile(path, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
}

/** The server record of `dir`, or null when there is none or it is unreadable. */
export async function readServerRecord(dir: string): Promise<ServerRecord | null> {
  try {
    const value = JSON.parse(await readFile(join(dir, SERVER_RECORD_FILE), 'utf8')) as Partial<ServerRecord>;
    if (value.v !== 1 || typeof value.url !== 'string' || typeof value.pid !== 'number') return null;
    return { v: 1, url: value.url, pid: value.pid };
  } catch {
    return null;
  }
}

/** Remove this process's server record from `dir` (another process's record is left alone). */
export async function removeServerRecord(dir: string): Promise<void> {
  const record = await readServerRecord(dir);
  if (record && record.pid === process.pid) await rm(join(dir, SERVER_RECORD_FILE), { force: true });
}
