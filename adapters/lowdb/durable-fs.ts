/**
 * Small file-system helpers for durability.
 * @module
 */
import { open } from 'node:fs/promises';

/** True when `error` is a Node system error with the given `code` (ENOENT, EEXIST, …). */
export function hasErrorCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
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
