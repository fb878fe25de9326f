/**
 * The `LOCK` file that keeps a second process (or a second open in this one) out of a folder.
 * @module
 */
import { link, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hasErrorCode, PRIVATE_FILE_MODE } from './durable-fs.ts';
import { currentProcess, formatIdentity, isRunning, parseIdentity, type ProcessIdentity } from './process-identity.ts';

/** The holder named by the lock file: an identity, null for an unreadable file, undefined for none. */
async function readHolder(path: string): Promise<ProcessIdentity | null | undefined> {
  try {
    return parseIdentity(await readFile(path, 'utf8'));
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

const same = (a: ProcessIdentity | null | undefined, b: ProcessIdentity | null | undefined) =>
  a === b || (a != null && b != null && a.pid === b.pid && a.start === b.start && a.boot === b.boot);

/**
 * A held lock on a folder; {@link release} gives it up.
 * @remarks The lock is advisory: it only keeps out openers that check it (every `lowdbStorage`).
 */
export interface DirLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * Takes `dir/LOCK`, recording this process's pid, start time and boot id.
 * @throws Error naming the holder when a running process holds the lock (this one included).
 * @remarks
 * The file is written under a temporary name and hard-linked into place, which fails if `LOCK`
 * exists (the O_EXCL of links) and never exposes an empty lock file. A lock whose holder is not
 * running is stale and taken over: its pid is gone, or the pid now belongs to another process
 * (another start time or another boot; see {@link isRunning}). Two processes taking over the same
 * stale lock at the same instant are not fully excluded; the lock is meant for crash recovery and
 * for catching a second server on the same folder, not as a distributed mutex.
 */
export async function acquireDirLock(dir: string): Promise<DirLock> {
  const path = join(dir, 'LOCK');
  const me = currentProcess();
  const temp = join(dir, `LOCK.${process.pid}.${Date.now()}.tmp`);
  await writeFile(temp, formatIdentity(me), { mode: PRIVATE_FILE_MODE });
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await link(temp, path);
        return { path, release: () => releaseLock(path, me) };
      } catch (error) {
        if (!hasErrorCode(error, 'EEXIST')) throw error;
      }
      const holder = await readHolder(path);
      if (holder === undefined) continue;
      if (holder !== null && isRunning(holder)) {
        const who = holder.pid === process.pid ? 'this process' : `process ${holder.pid}`;
        throw new Error(`lowdb storage: ${dir} is locked by ${who} (${path}); close that storage first, only one may have the folder open`);
      }
      // Stale: the holder is gone. Remove it only if it is still the same stale lock.
      if (!same(await readHolder(path), holder)) continue;
      try {
        await unlink(path);
      } catch (error) {
        if (!hasErrorCode(error, 'ENOENT')) throw error;
      }
    }
    throw new Error(`lowdb storage: could not take ${path}: it keeps changing hands`);
  } finally {
    await rm(temp, { force: true });
  }
}

async function releaseLock(path: string, me: ProcessIdentity): Promise<void> {
  if (same(await readHolder(path), me)) await rm(path, { force: true });
}
