/**
 * Small file-system helpers for durability.
 * @module
 */
import { chmod, mkdir, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Mode of a storage folder: only its owner may list or enter it. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of every file in a storage folder (document text, token hashes): owner read/write only. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` (mode 0700) when missing, and brings an existing one and the files in it to 0700 and
 * 0600 (folders written by earlier versions were 0755/0644).
 * @remarks A chmod the file system refuses (a folder owned by someone else, a file system without
 * modes) is skipped: the folder still works, only less private.
 */
export async function makePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await chmod(dir, PRIVATE_DIR_MODE).catch(() => {});
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isFile()) await chmod(join(dir, entry.name), PRIVATE_FILE_MODE).catch(() => {});
  }
}

/** True when `error` is a Node system error with the given `code` (ENOENT, EEXIST, …). */
export function hasErrorCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/** True for the errors of a file system that has no room left (ENOSPC, EDQUOT): writing may work again later. */
export function isDiskFull(error: unknown): boolean {
  return hasErrorCode(error, 'ENOSPC') || hasErrorCode(error, 'EDQUOT');
}

/**
 * fsyncs a directory so that files created, renamed or removed in it survive a crash.
 * @remarks Needed after creating a journal and after renaming a checkpoint into place: fsync of a
 * file does not persist its directory entry. Platforms that cannot open a directory (Windows)
 * are skipped silently.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
  } catch (error) {
    if (hasErrorCode(error, 'EISDIR') || hasErrorCode(error, 'EPERM') || hasErrorCode(error, 'EACCES')) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!hasErrorCode(error, 'EINVAL') && !hasErrorCode(error, 'EBADF')) throw error;
  } finally {
    await handle.close();
  }
}
