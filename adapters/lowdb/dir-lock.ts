/**
 * The `LOCK` file that keeps a second process (or a second open in this one) out of a folder.
 * @module
 */
import { link, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hasErrorCode } from './durable-fs.ts';

/** True when a process with this pid exists (signal 0 checks without signalling). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return !hasErrorCode(error, 'ESRCH');
  }
}

async function readHolder(path: string): Promise<number | null | undefined> {
  try {
    const pid = Number.parseInt(await readFile(path, 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/**
 * A held lock on a folder; {@link release} gives it up.
 * @remarks The lock is advisory: it only keeps out openers that check it (every `lowdbStorage`).
 */
export interface DirLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * Takes `dir/LOCK`, holding this process's pid.
 * @throws Error naming the holder when a live process holds the lock (this one included).
 * @remarks
 * The file is written under a temporary name and hard-linked into place, which fails if `LOCK`
 * exists (the O_EXCL of links) and never exposes an empty lock file. A lock whose pid is not alive
 * (a process that crashed without closing) is removed and taken over. Two processes taking over the
 * same stale lock at the same instant are not fully excluded; the lock is meant for crash recovery
 * and for catching a second server on the same folder, not as a distributed mutex.
 */
export async function acquireDirLock(dir: string): Promise<DirLock> {
  const path = join(dir, 'LOCK');
  const temp = join(dir, `LOCK.${process.pid}.${Date.now()}.tmp`);
  await writeFile(temp, `${process.pid}\n`);
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await link(temp, path);
        return { path, release: () => releaseLock(path) };
      } catch (error) {
        if (!hasErrorCode(error, 'EEXIST')) throw error;
      }
      const holder = await readHolder(path);
      if (holder === undefined) continue;
      if (holder !== null && isAlive(holder)) {
        const who = holder === process.pid ? 'this process' : `process ${holder}`;
        throw new Error(`lowdb storage: ${dir} is locked by ${who} (${path}); close that storage first, only one may have the folder open`);
      }
      // Stale: the holder is gone. Remove it only if it is still the same stale lock.
      if ((await readHolder(path)) !== holder) continue;
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

async function releaseLock(path: string): Promise<void> {
  if ((await readHolder(path)) === process.pid) await rm(path, { force: true });
}
