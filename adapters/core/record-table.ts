/**
 * One collection of JSON records with revisions.
 * @module
 */
import type { freezeRecordValue } from '../../src/ports.ts';

/**
 * A stored record: its revision and its value as JSON text.
 * @remarks Immutable: a put replaces the entry, so a checkpoint view may hold entries while writes go on.
 */
export interface RecordEntry {
  readonly revision: number;
  readonly json: string;
}

/**
 * An entry whose value was handed over deeply frozen ({@link freezeRecordValue}): kept by reference,
 * serialised only when someone needs its text (a read, a checkpoint).
 */
class FrozenRecordEntry implements RecordEntry {
  private text: string | null = null;
  constructor(
    readonly revision: number,
    private readonly value: unknown,
  ) {}
  get json(): string {
    return (this.text ??= JSON.stringify(this.value));
  }
}

function lowerBound(keys: readonly string[], target: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A collection: a Map from key to {@link RecordEntry} plus a lazily built sorted key list.
 * @remarks Keys sort by JavaScript string comparison (UTF-16 code units), the same as byte order
 * for ASCII keys. The sorted list is dropped when a key is inserted or deleted (not when a value
 * changes) and rebuilt by the next {@link list}.
 */
export class RecordTable {
  private readonly entries = new Map<string, RecordEntry>();
  private sortedKeys: string[] | null = [];

  /** Number of records. */
  get size(): number {
    return this.entries.size;
  }

  /** The entry at `key`, if any. */
  get(key: string): RecordEntry | undefined {
    return this.entries.get(key);
  }

  /**
   * Stores a value at `key` with the next revision (1 on insert): its JSON text, or (`json` null) a
   * value marked by {@link freezeRecordValue}, kept as it is.
   */
  put(key: string, json: string | null, frozen?: unknown): void {
    const previous = this.entries.get(key);
    if (previous === undefined) this.sortedKeys = null;
    const revision = (previous?.revision ?? 0) + 1;
    this.entries.set(key, json === null ? new FrozenRecordEntry(revision, frozen) : { revision, json });
  }

  /** Installs an entry as is (loading a checkpoint). */
  load(key: string, entry: RecordEntry): void {
    if (!this.entries.has(key)) this.sortedKeys = null;
    this.entries.set(key, entry);
  }

  /** Removes `key` if present. */
  delete(key: string): void {
    if (this.entries.delete(key)) this.sortedKeys = null;
  }

  /** Entries whose key starts with `prefix`, in ascending key order. */
  list(prefix: string): [string, RecordEntry][] {
    if (this.sortedKeys === null) this.sortedKeys = Array.from(this.entries.keys()).sort();
    const keys = this.sortedKeys;
    const out: [string, RecordEntry][] = [];
    for (let i = prefix === '' ? 0 : lowerBound(keys, prefix); i < keys.length; i++) {
      const key = keys[i];
      if (!key.startsWith(prefix)) break;
      out.push([key, this.entries.get(key) as RecordEntry]);
    }
    return out;
  }

  /** A point-in-time copy of all entries, in Map order. */
  snapshot(): [string, RecordEntry][] {
    return Array.from(this.entries);
  }
}
