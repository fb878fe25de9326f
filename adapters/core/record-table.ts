/**
 * One collection of JSON records with revisions, and its listings by index partition.
 * @module
 */
import type { RecordIndexEntry, freezeRecordValue } from '../../src/ports.ts';
import { partitionPoint } from './binary-search.ts';
import { SortedIndex, type IndexPosition } from './sorted-index.ts';

/**
 * A stored record: its revision, its value as JSON text, and its index entry (null: not listed).
 * @remarks Immutable: a put replaces the entry, so a checkpoint view may hold entries while writes go on.
 */
export interface RecordEntry {
  readonly revision: number;
  readonly json: string;
  readonly index: RecordIndexEntry | null;
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
    readonly index: RecordIndexEntry | null,
  ) {}

  get json(): string {
    return (this.text ??= JSON.stringify(this.value));
  }
}


/**
 * A collection: a Map from key to {@link RecordEntry}, a lazily built sorted key list, and one
 * {@link SortedIndex} per index partition.
 * @remarks Keys sort by JavaScript string comparison (UTF-16 code units), the same as byte order
 * for ASCII keys. The sorted key list is dropped when a key is inserted or deleted (not when a value
 * changes) and rebuilt by the next {@link list}. Index partitions are maintained on every write, so
 * a page never sorts.
 */
export class RecordTable {
  private readonly entries = new Map<string, RecordEntry>();
  private readonly partitions = new Map<string, SortedIndex>();
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
   * value marked by {@link freezeRecordValue}, kept as it is. `index` replaces the record's listing
   * position; null takes it out of every listing.
   */
  put(key: string, json: string | null, frozen: unknown, index: RecordIndexEntry | null): void {
    const previous = this.entries.get(key);
    if (previous === undefined) this.sortedKeys = null;
    else this.unindex(key, previous);
    const revision = (previous?.revision ?? 0) + 1;
    const entry: RecordEntry = json === null ? new FrozenRecordEntry(revision, frozen, index) : { revision, json, index };
    this.entries.set(key, entry);
    if (index !== null) this.partition(index.partition).insert({ sortKey: index.sortKey, key });
  }

  /** Installs an entry as is (loading a checkpoint). */
  load(key: string, entry: RecordEntry): void {
    const previous = this.entries.get(key);
    if (previous === undefined) this.sortedKeys = null;
    else this.unindex(key, previous);
    this.entries.set(key, entry);
    if (entry.index !== null) this.partition(entry.index.partition).insert({ sortKey: entry.index.sortKey, key });
  }

  /** Removes `key` if present. */
  delete(key: string): void {
    const previous = this.entries.get(key);
    if (previous === undefined) return;
    this.entries.delete(key);
    this.unindex(key, previous);
    this.sortedKeys = null;
  }

  /** Entries whose key starts with `prefix`, in ascending key order. */
  list(prefix: string): [string, RecordEntry][] {
    if (this.sortedKeys === null) this.sortedKeys = Array.from(this.entries.keys()).sort();
    const keys = this.sortedKeys;
    const out: [string, RecordEntry][] = [];
    for (let i = prefix === '' ? 0 : partitionPoint(keys, (key) => key >= prefix); i < keys.length; i++) {
      const key = keys[i];
      if (!key.startsWith(prefix)) break;
      out.push([key, this.entries.get(key) as RecordEntry]);
    }
    return out;
  }

  /**
   * Up to `limit` entries of `partition`, by sortKey then key descending, strictly after `after`
   * in that order (from the first when null).
   */
  page(partition: string, limit: number, after: IndexPosition | null): { position: IndexPosition; entry: RecordEntry }[] {
    const index = this.partitions.get(partition);
    if (index === undefined) return [];
    return index.pageBefore(after, limit).map((position) => ({ position, entry: this.entries.get(position.key) as RecordEntry }));
  }

  /** A point-in-time copy of all entries, in Map order. */
  snapshot(): [string, RecordEntry][] {
    return Array.from(this.entries);
  }

  private partition(name: string): SortedIndex {
    let index = this.partitions.get(name);
    if (index === undefined) {
      index = new SortedIndex();
      this.partitions.set(name, index);
    }
    return index;
  }

  private unindex(key: string, entry: RecordEntry): void {
    if (entry.index === null) return;
    const index = this.partitions.get(entry.index.partition);
    if (index === undefined) return;
    index.remove({ sortKey: entry.index.sortKey, key });
    if (index.size === 0) this.partitions.delete(entry.index.partition);
  }
}
