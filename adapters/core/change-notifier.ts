/**
 * Payload-free change notification for {@link Storage.subscribe}, in one process.
 * @module
 */
import { documentTopic, recordTopic, streamTopic, type ChangeTopic } from '../../src/ports.ts';
import type { PreparedOp } from './prepared-op.ts';

/**
 * Listeners by topic.
 * @remarks An adapter calls {@link notify} once per committed batch, after it is durable and
 * visible to reads, in commit order. Each listener of a touched topic is called once per batch,
 * synchronously; a throwing listener is ignored (the others still run). A listener added while a
 * batch is being notified is first called for the next batch.
 */
export class ChangeNotifier {
  private readonly topics = new Map<ChangeTopic, Set<() => void>>();

  /** Adds `listener` for `topic`; returns the function that removes it (idempotent). */
  subscribe(topic: ChangeTopic, listener: () => void): () => void {
    if (typeof topic !== 'string') throw new TypeError('subscribe: topic must be a string (recordTopic or streamTopic)');
    if (typeof listener !== 'function') throw new TypeError('subscribe: listener must be a function');
    // A wrapper per subscription, so the same function subscribed twice is removed one at a time.
    const entry = () => listener();
    let set = this.topics.get(topic);
    if (set === undefined) {
      set = new Set();
      this.topics.set(topic, set);
    }
    set.add(entry);
    return () => {
      const current = this.topics.get(topic);
      if (current === undefined || !current.delete(entry)) return;
      if (current.size === 0) this.topics.delete(topic);
    };
  }

  /** True when nobody listens (the commit path then skips collecting topics). */
  get idle(): boolean {
    return this.topics.size === 0;
  }

  /** Calls the listeners of every topic `ops` touch (records put or deleted, streams appended, documents written). */
  notify(ops: readonly PreparedOp[]): void {
    if (this.topics.size === 0) return;
    this.notifyTopics(topicsOf(ops));
  }

  /** The topics somebody listens to now. */
  subscribedTopics(): ChangeTopic[] {
    return [...this.topics.keys()];
  }

  /** Calls the listeners of each of `topics` once (a topic listed twice counts once). */
  notifyTopics(topics: Iterable<ChangeTopic>): void {
    const touched = topics instanceof Set ? topics : new Set(topics);
    for (const topic of touched) {
      const set = this.topics.get(topic);
      if (set === undefined) continue;
      for (const listener of Array.from(set)) {
        if (!set.has(listener)) continue; // removed by an earlier listener of this batch
        try {
          listener();
        } catch {
          // The port says listeners must not throw; one that does must not break the commit path.
        }
      }
    }
  }

  /** Drops every listener (on close). */
  clear(): void {
    this.topics.clear();
  }
}

/** The topics a batch touches (records put or deleted, streams appended), each once. */
export function topicsOf(ops: readonly PreparedOp[]): Set<ChangeTopic> {
  const touched = new Set<ChangeTopic>();
  for (const op of ops) {
    if (op.kind === 'record.put' || op.kind === 'record.delete') touched.add(recordTopic(op.collection, op.key));
    else if (op.kind === 'stream.append') touched.add(streamTopic(op.stream));
    else if (op.kind === 'document.create' || op.kind === 'document.append') touched.add(documentTopic(op.head.documentRef));
    else if (op.kind === 'document.compact') touched.add(documentTopic(op.documentRef));
  }
  return touched;
}
