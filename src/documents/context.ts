/**
 * What the parts of the documents service share: the engine's dependencies, the loaded-document
 * cache, the per-document lock, idempotency and background compaction.
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import type { IdempotencyStore } from '../idempotency/idempotency.ts';
import type { DocumentCache } from './cache.ts';
import type { Compactor } from './compaction.ts';
import type { KeyedLock } from '../keyed-lock.ts';
import type { VersionRegistry } from './versions.ts';

/** The shared state of one documents service. */
export interface DocumentsContext {
  deps: EngineDeps;
  cache: DocumentCache;
  /** Held by a mutation from applying it to the cached tree until its commit is durable. */
  locks: KeyedLock;
  idem: IdempotencyStore;
  compactor: Compactor;
  /** Recent versions' lazy contents, for hashes asked for after the document moved on. */
  versions: VersionRegistry;
}
