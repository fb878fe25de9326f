/**
 * The reference model the conformance suite checks random batch sequences against.
 * @module
 */
import fc from 'fast-check';
import * as assert from 'uvu/assert';
import { isStorageConflict } from '../../src/ports.ts';
import type { BatchOp, DocumentHead, Storage } from '../../src/ports.ts';
import { append, bytes, compact, create, del, plainDoc, plainUpdates, put, streamAppend } from './fixtures.ts';

interface ModelDoc {
  head: DocumentHead;
  snapshot: number[];
  updates: { version: number; update: number[] }[];
}
interface ModelRecord {
  value: unknown;
  revision: number;
  index: { partition: string; sortKey: string } | null;
}
interface Model {
  docs: Record<string, ModelDoc>;
  records: Record<string, ModelRecord>;
  streams: Record<string, unknown[]>;
}

/** Applies a batch to a copy of the model the obvious way; returns the new model or the failing index. */
function modelCommit(model: Model, ops: BatchOp[]): Model | number {
  const m: Model = structuredClone(model);
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (op.kind === 'document.create') {
      if (m.docs[op.head.documentRef]) return i;
      m.docs[op.head.documentRef] = { head: { ...op.head }, snapshot: Array.from(op.snapshot), updates: [] };
    } else if (op.kind === 'document.append') {
      const d = m.docs[op.head.documentRef];
      if (!d || op.head.version !== d.head.version + 1 || op.head.generation !== d.head.generation) return i;
      d.head = { ...op.head, snapshotVersion: d.head.snapshotVersion };
      d.updates.push({ version: op.head.version, update: Array.from(op.update) });
    } else if (op.kind === 'document.compact') {
      const d = m.docs[op.documentRef];
      if (!d || op.snapshotVersion < d.head.snapshotVersion || op.snapshotVersion > d.head.version) return i;
      const rebuild = op.generation === d.head.generation + 1;
      if (!(op.generation === d.head.generation || (rebuild && op.snapshotVersion === d.head.version))) return i;
      d.head.snapshotVersion = op.snapshotVersion;
      d.head.generation = op.generation;
      d.snapshot = Array.from(op.snapshot);
      d.updates = d.updates.filter((u) => u.version > op.snapshotVersion);
    } else if (op.kind === 'stream.append') {
      const entries = (m.streams[op.stream] ??= []);
      if (op.seq !== entries.length + 1) return i;
      entries.push(structuredClone(op.value));
    } else {
      const id = `${op.collection}\u0000${op.key}`;
      const current = m.records[id];
      const e = op.expectedRevision;
      if (e === null && current) return i;
      if (typeof e === 'number' && current?.revision !== e) return i;
      if (op.kind === 'record.put') {
        m.records[id] = { value: structuredClone(op.value), revision: (current?.revision ?? 0) + 1, index: op.index ? { ...op.index } : null };
      }
      else delete m.records[id];
    }
  }
  return m;
}

const opSpec = fc.record({ kind: fc.nat(5), doc: fc.nat(2), key: fc.nat(2), variant: fc.nat(3), value: fc.nat(9) });
type OpSpec = { kind: number; doc: number; key: number; variant: number; value: number };

/** Turns a random op description into a concrete op that is right or deliberately wrong for `model`. */
function concreteOp(spec: OpSpec, model: Model, ns: string, stamp: number): BatchOp {
  const ref = `${ns}-d${spec.doc}`;
  const accountId = `${ns}-a${spec.doc % 2}`;
  const current = model.docs[ref]?.head;
  const version = current?.version ?? 0;
  const sv = current?.snapshotVersion ?? 1;
  const generation = current?.generation ?? 0;
  const collection = `${ns}-c`;
  const key = `k${spec.key}`;
  const revision = model.records[`${collection}\u0000${key}`]?.revision ?? 0;
  switch (spec.kind) {
    case 0:
      return create(ref, { accountId, updatedAt: stamp }, bytes(`${ref}:${spec.value}`));
    case 1:
      // Mostly the stored generation; now and then a stale or future one.
      return append(ref, version + [1, 1, 0, 2][spec.variant], { accountId, updatedAt: stamp, snapshotVersion: sv, generation: generation + [0, 0, 0, 1, -1][spec.value % 5] }, bytes(`u${spec.value}`));
    case 2:
      // The same generation, a rebuild (+1: valid only at the current version), or a wrong one.
      return compact(ref, [version, sv + 1, version + 1, sv - 1][spec.variant], generation + [0, 1, 1, 2, -1][spec.value % 5]);
    case 3: {
      // Two partitions and no index; three sort keys, so ties are common.
      const partition = [`${ns}-p0`, `${ns}-p1`, null][spec.value % 3];
      const index = partition === null ? undefined : { partition, sortKey: `s${spec.doc}` };
      return put(collection, key, { v: spec.value }, [undefined, null, revision, revision + 1][spec.variant], index);
    }
    case 5: {
      const stream = `${ns}-s${spec.key % 2}`;
      const head = model.streams[stream]?.length ?? 0;
      return streamAppend(stream, head + [1, 1, 0, 2][spec.variant], { e: spec.value });
    }
    default:
      return del(collection, key, [undefined, revision, revision + 1, undefined][spec.variant]);
  }
}

export async function checkAgainstModel(storage: Storage): Promise<void> {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(opSpec, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }), async (batches) => {
      const ns = `m${run++}`;
      let model: Model = { docs: {}, records: {}, streams: {} };
      let stamp = 0;
      for (const specs of batches) {
        const ops = specs.map((spec) => concreteOp(spec, model, ns, 2_000 + (stamp++ >> 1)));
        const expected = modelCommit(model, ops);
        const outcome = await storage.commit(ops).then(
          () => -1,
          (error: unknown) => (isStorageConflict(error) ? error.opIndex : Promise.reject(error)),
        );
        assert.is(outcome, typeof expected === 'number' ? expected : -1, `outcome of ${JSON.stringify(ops.map((o) => o.kind))}`);
        if (typeof expected !== 'number') model = expected;
      }
      for (let d = 0; d < 3; d++) {
        const ref = `${ns}-d${d}`;
        const want = model.docs[ref] ?? null;
        assert.equal(plainDoc(await storage.loadDocument(ref)), want);
        if (want) assert.equal(plainUpdates(await storage.loadUpdates(ref, want.head.snapshotVersion)), want.updates);
      }
      for (let a = 0; a < 2; a++) {
        const accountId = `${ns}-a${a}`;
        const want = Object.values(model.docs)
          .map((d) => d.head)
          .filter((h) => h.accountId === accountId)
          .sort((x, y) => y.updatedAt - x.updatedAt || (x.documentRef < y.documentRef ? 1 : -1));
        assert.equal(await storage.listDocumentHeads(accountId, 10), want);
      }
      const records = Object.entries(model.records)
        .map(([id, r]) => ({ key: id.split('\u0000')[1], value: r.value, revision: r.revision }))
        .sort((x, y) => (x.key < y.key ? -1 : 1));
      assert.equal(await storage.listRecords(`${ns}-c`), records);
      for (let p = 0; p < 2; p++) {
        const partition = `${ns}-p${p}`;
        const want = Object.entries(model.records)
          .filter(([, r]) => r.index?.partition === partition)
          .map(([id, r]) => ({ key: id.split('\u0000')[1], value: r.value, revision: r.revision, sortKey: r.index?.sortKey ?? '' }))
          .sort((x, y) => (x.sortKey !== y.sortKey ? (x.sortKey < y.sortKey ? 1 : -1) : x.key < y.key ? 1 : -1))
          .map(({ key, value, revision }) => ({ key, value, revision }));
        assert.equal(await storage.listPage(`${ns}-c`, partition, 1000), { records: want, next: null }, `listing ${partition}`);
      }
      for (let s = 0; s < 2; s++) {
        const stream = `${ns}-s${s}`;
        const want = (model.streams[stream] ?? []).map((value, i) => ({ seq: i + 1, value }));
        assert.equal(await storage.readStream(stream, 0, 1000), want, `stream ${stream}`);
        assert.is(await storage.streamHead(stream), want.length);
      }
    }),
    { numRuns: 40 },
  );
}

