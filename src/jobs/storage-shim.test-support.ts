/**
 * TEST SUPPORT ONLY, until the adapters implement the extended storage port (branch `storage`):
 * completes an adapter that lacks `listPage`, `readStream`, `streamHead`, `stream.append` and
 * `subscribe` by mapping them onto plain records of the same adapter (so they are durable and atomic
 * with the rest of the batch). When the adapter already has them, it is returned unchanged.
 * @module
 */
import { StorageConflictError, isStorageConflict, recordTopic, streamTopic, type BatchOp, type RecordPage, type Storage, type StreamEntry } from '../ports.ts';

const STREAMS = '__shim_streams';
const indexCollection = (collection: string) => `__shim_index:${collection}`;
const entryKey = (stream: string, seq: number) => `${stream}\u0000${seq.toString().padStart(12, '0')}`;

interface IndexValue {
  partition: string;
  sortKey: string;
}

/** The adapter itself when it implements the whole port, else the adapter completed as described above. */
export function withExtendedPort(inner: Storage): Storage {
  if (typeof (inner as Partial<Storage>).listPage === 'function' && typeof (inner as Partial<Storage>).subscribe === 'function') return inner;
  const listeners = new Map<string, Set<() => void>>();
  let queue: Promise<unknown> = Promise.resolve();
  const streamHead = async (stream: string) => (await inner.listRecords(STREAMS, `${stream}\u0000`)).length;

  const commitNow = async (ops: BatchOp[]) => {
    const innerOps: BatchOp[] = [];
    const origin: number[] = [];
    const heads = new Map<string, number>();
    const topics = new Set<string>();
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const push = (o: BatchOp) => {
        innerOps.push(o);
        origin.push(i);
      };
      if (op.kind === 'stream.append') {
        const head = heads.get(op.stream) ?? (await streamHead(op.stream));
        if (op.seq !== head + 1) throw new StorageConflictError(`stream ${op.stream}: seq ${op.seq} is not ${head + 1}`, i);
        heads.set(op.stream, op.seq);
        push({ kind: 'record.put', collection: STREAMS, key: entryKey(op.stream, op.seq), value: op.value, expectedRevision: null });
        topics.add(streamTopic(op.stream));
      } else if (op.kind === 'record.put') {
        const { index, ...plain } = op;
        push(plain);
        push(index ? { kind: 'record.put', collection: indexCollection(op.collection), key: op.key, value: index } : { kind: 'record.delete', collection: indexCollection(op.collection), key: op.key });
        topics.add(recordTopic(op.collection, op.key));
      } else if (op.kind === 'record.delete') {
        push(op);
        push({ kind: 'record.delete', collection: indexCollection(op.collection), key: op.key });
        topics.add(recordTopic(op.collection, op.key));
      } else push(op);
    }
    try {
      await inner.commit(innerOps);
    } catch (e) {
      if (isStorageConflict(e)) throw new StorageConflictError(e.message, origin[e.opIndex] ?? 0);
      throw e;
    }
    for (const topic of topics) for (const l of listeners.get(topic) ?? []) l();
  };

  return {
    ...inner,
    getDocumentHead: (r) => inner.getDocumentHead(r),
    loadDocument: (r) => inner.loadDocument(r),
    loadUpdates: (r, a) => inner.loadUpdates(r, a),
    listDocumentHeads: (a, l, c) => inner.listDocumentHeads(a, l, c),
    getRecord: (c, k) => inner.getRecord(c, k),
    listRecords: (c, p) => inner.listRecords(c, p),
    close: () => inner.close(),
    commit(ops) {
      const run = queue.then(() => commitNow(ops));
      queue = run.catch(() => undefined);
      return run;
    },
    async listPage<T>(collection: string, partition: string, limit: number, after?: string | null): Promise<RecordPage<T>> {
      const entries = (await inner.listRecords<IndexValue>(indexCollection(collection)))
        .filter((r) => r.value.partition === partition)
        .map((r) => [r.value.sortKey, r.key] as [string, string])
        .sort((a, b) => (a[0] !== b[0] ? (a[0] < b[0] ? 1 : -1) : a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0));
      let start = 0;
      if (after) {
        const [sk, key] = JSON.parse(after) as [string, string];
        start = entries.findIndex((e) => e[0] < sk || (e[0] === sk && e[1] < key));
        if (start < 0) start = entries.length;
      }
      const slice = entries.slice(start, start + limit);
      const records = [];
      for (const [, key] of slice) {
        const r = await inner.getRecord<T>(collection, key);
        if (r) records.push(r);
      }
      const last = slice[slice.length - 1];
      return { records, next: start + limit < entries.length && last ? JSON.stringify(last) : null };
    },
    async readStream<T>(stream: string, afterSeq: number, limit: number): Promise<StreamEntry<T>[]> {
      const all = await inner.listRecords<T>(STREAMS, `${stream}\u0000`);
      return all.slice(afterSeq, afterSeq + limit).map((r, i) => ({ seq: afterSeq + i + 1, value: r.value }));
    },
    streamHead,
    subscribe(topic, listener) {
      let set = listeners.get(topic);
      if (!set) listeners.set(topic, (set = new Set()));
      set.add(listener);
      return () => set.delete(listener);
    },
  };
}
