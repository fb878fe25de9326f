/**
 * Who a process is beyond its pid, so a lock can tell its holder from a later process that got
 * the same pid: the process's start time and the machine's boot id (Linux `/proc`).
 * @module
 */
import { readFileSync } from 'node:fs';
import { hasErrorCode } from './durable-fs.ts';

/** A process as a lock file records it. `start` and `boot` are null where `/proc` is not available. */
export interface ProcessIdentity {
  pid: number;
  /** Start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`). */
  start: string | null;
  /** `/proc/sys/kernel/random/boot_id`: changes on every boot. */
  boot: string | null;
}

function readProc(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The start time of process `pid`, or null when it cannot be read (no such process, no `/proc`). */
export function processStartTime(pid: number): string | null {
  const stat = readProc(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  return start !== undefined && /^\d+$/.test(start) ? start : null;
}

/** This boot's id, or null where the platform has none. */
export function bootId(): string | null {
  return readProc('/proc/sys/kernel/random/boot_id')?.trim() || null;
}

/** The identity of this process. */
export function currentProcess(): ProcessIdentity {
  return { pid: process.pid, start: processStartTime(process.pid), boot: bootId() };
}

/** True when a process with this pid exists (signal 0 checks without signalling). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return !hasErrorCode(error, 'ESRCH');
  }
}

/**
 * True when the process `holder` describes is still running: its pid is alive and, where the
 * record and the platform allow the check, it is the same boot and the same start time.
 * @remarks A pid reused after a crash (common in containers, where the server is often pid 1 or
 * another small number every time) is a different process: it does not keep the lock alive.
 */
export function isRunning(holder: ProcessIdentity): boolean {
  if (!pidAlive(holder.pid)) return false;
  const boot = bootId();
  if (holder.boot !== null && boot !== null && holder.boot !== boot) return false;
  if (holder.start !== null) {
    const start = processStartTime(holder.pid);
    if (start !== null && start !== holder.start) return false;
  }
  return true;
}

/** The lock file's text for `identity`: one JSON line. */
export function formatIdentity(identity: ProcessIdentity): string {
  return `${JSON.stringify(identity)}\n`;
}

/**
 * Parses a lock file's text: the JSON line of {@link formatIdentity}, or a bare pid (locks written
 * by earlier versions). Null when it is neither.
 */
export function parseIdentity(text: string): ProcessIdentity | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const pid = Number(trimmed);
    return Number.isSafeInteger(pid) && pid > 0 ? { pid, start: null, boot: null } : null;
  }
  try {
    const raw = JSON.parse(trimmed) as Partial<Record<keyof ProcessIdentity, unknown>>;
    const pid = raw.pid;
    if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return null;
    const text = (v: unknown) => (typeof v === 'string' ? v : null);
    return { pid, start: text(raw.start), boot: text(raw.boot) };
  } catch {
    return null;
  }
}
