/**
 * The projected effects of batches that were accepted but are not applied yet.
 * @module
 */
import { recordId, type BatchEffects, type DocFacts, type FactSource } from '../core/batch-validator.ts';

interface Stamped<T> {
  value: T;
  seq: number;
}

/**
 * What the state will be once every queued batch is applied, for the keys they touch.
 * @remarks
 * Validation layers a new batch over this projection and the committed state, so two queued
 * batches racing on one version are decided exactly like the memory adapter decides them: the one
 * accepted first wins. Each entry remembers the batch (`seq`) that last set it; {@link settle}
 * drops an entry once that batch is applied (the committed state then says the same), and leaves
 * it when a later queued batch has overwritten it. {@link clear} drops everything (after a failed
 * journal write, when the queued batches are rejected).
 */
export class PendingProjection implements FactSource {
  private readonly docs = new Map<string, Stamped<DocFacts | null>>();
  private readonly records = new Map<string, Stamped<number>>();
  private readonly streams = new Map<string, Stamped<number>>();

  /** Projected facts of a document, or undefined when no queued batch touches it. */
  doc(documentRef: string): DocFacts | null | undefined {
    return this.docs.get(documentRef)?.value;
  }

  /** Projected revision of a record (0 = deleted), or undefined when no queued batch touches it. */
  recordRevision(collection: string, key: string): number | undefined {
    return this.records.get(recordId(collection, key))?.value;
  }

  /** Projected seq of a stream's last entry, or undefined when no queued batch appends to it. */
  streamHead(stream: string): number | undefined {
    return this.streams.get(stream)?.value;
  }

  /** Folds in the effects of batch `seq`, just accepted. */
  add(effects: BatchEffects, seq: number): void {
    for (const [ref, value] of effects.docs) this.docs.set(ref, { value, seq });
    for (const [id, value] of effects.records) this.records.set(id, { value, seq });
    for (const [stream, value] of effects.streams) this.streams.set(stream, { value, seq });
  }

  /** Forgets what batch `seq` set, now that it is applied. */
  settle(effects: BatchEffects, seq: number): void {
    for (const ref of effects.docs.keys()) if (this.docs.get(ref)?.seq === seq) this.docs.delete(ref);
    for (const id of effects.records.keys()) if (this.records.get(id)?.seq === seq) this.records.delete(id);
    for (const stream of effects.streams.keys()) if (this.streams.get(stream)?.seq === seq) this.streams.delete(stream);
  }

  /** Forgets everything. */
  clear(): void {
    this.docs.clear();
    this.records.clear();
    this.streams.clear();
  }

  /** Number of projected keys (for tests: it must drain to 0 when the queue does). */
  get size(): number {
    return this.docs.size + this.records.size + this.streams.size;
  }
}
