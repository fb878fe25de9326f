/**
 * A point-in-time view of a {@link MemoryCore}'s whole state, for checkpoints.
 * @module
 */
import type { DocumentHead, StoredUpdate } from '../../src/ports.ts';
import type { RecordEntry } from './record-table.ts';

/**
 * One document as of the view.
 * @remarks `updates` may be the live log array: only its first `updateCount` items belong to the
 * view. The core only ever pushes to a log or replaces it (compaction builds a new array), and never
 * mutates heads, snapshots or update bytes in place, so the view stays valid while writes go on.
 */
export interface CoreDocumentView {
  readonly head: DocumentHead;
  readonly snapshot: Uint8Array;
  readonly updates: readonly StoredUpdate[];
  readonly updateCount: number;
}

/** One collection as of the view: `[key, entry]` pairs (a copy, in no particular order). */
export interface CollectionView {
  readonly collection: string;
  readonly entries: readonly (readonly [string, RecordEntry])[];
}

/**
 * One stream as of the view: its entries' JSON texts, seq 1 first.
 * @remarks `entries` may be the live array (only ever pushed to): only the first `count` belong to
 * the view.
 */
export interface StreamView {
  readonly stream: string;
  readonly entries: readonly string[];
  readonly count: number;
}

/**
 * The whole state as of one moment; taking it costs O(documents + records) pointer copies, no bytes.
 * @remarks Treat everything reachable from a view as read-only.
 */
export interface CoreView {
  readonly documents: readonly CoreDocumentView[];
  readonly collections: readonly CollectionView[];
  readonly streams: readonly StreamView[];
}

/** The view of an empty core. */
export const EMPTY_VIEW: CoreView = Object.freeze({ documents: [], collections: [], streams: [] });
