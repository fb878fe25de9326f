/**
 * Crash recovery against a model: random batches of every op kind (with checkpoints every few
 * hundred bytes), a crash copy of the folder at random points, optionally with a torn tail; the
 * copy must open to exactly the acknowledged state, and keep working.
 */
import { appendFile } from 'node:fs/promises';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BatchOp, Storage } from '../../src/ports.ts';
import { memoryStorage } from '../memory/index.ts';
import { lowdbStorage, type LowdbStorage } from './index.ts';
import { crashCopy, head, journalOf, removeTempDirs, tempDir } from './lowdb-kit.ts';

const REFS = ['d0', 'd1'];
const KEYS = ['k0', 'k1', 'k2'];
const STREAMS = ['s0', 's1'];
const PARTITIONS = ['p0', 'p1'];

/** Everything observable through the port for the refs, keys, partitions and streams used here. */
async function observe(storage: Storage) {
  const docs = [];
  for (const ref of REFS) {
    const doc = await storage.loadDocument(ref);
    docs.push(doc && { head: doc.head, snapshot: Array.from(doc.snapshot), updates: doc.updates.map((u) => [u.version, Array.from(u.update)]) });
  }
  const pages = [];
  for (const p of PARTITIONS) pages.push(await storage.listPage('c', p, 1000));
  const streams = [];
  for (const s of STREAMS) streams.push([await storage.streamHead(s), await storage.readStream(s, 0, 1000)]);
  return { docs, records: await storage.listRecords('c'), pages, streams };
}

const step = fc.record({ kind: fc.nat(4), pick: fc.nat(5), size: fc.nat(300) });
type Step = { kind: number; pick: number; size: number };

/** A batch that is valid against `model` (read from the memory adapter). */
async function batchFor(steps: Step[], model: Storage, n: number): Promise<BatchOp[]> {
  const ops: BatchOp[] = [];
  const versions = new Map<string, number>();
  const seqs = new Map<string, number>();
  for (const s of steps) {
    const ref = REFS[s.pick % REFS.length];
    const key = KEYS[s.pick % KEYS.length];
    if (s.kind === 0) {
      const version = versions.get(ref) ?? (await model.getDocumentHead(ref))?.version ?? 0;
      const bytes = Uint8Array.from({ length: s.size }, (_, i) => (i * 31 + n) % 256);
      ops.push(version === 0 ? { kind: 'document.create', head: head(ref, 1), snapshot: bytes } : { kind: 'document.append', head: head(ref, version + 1), update: bytes });
      versions.set(ref, version + 1);
    } else if (s.kind === 1) {
      ops.push({ kind: 'record.put', collection: 'c', key, value: { n, text: 'x'.repeat(s.size % 50) }, index: { partition: PARTITIONS[s.size % 2], sortKey: String(s.size % 7) } });
    } else if (s.kind === 2) {
      ops.push(s.size % 2 ? { kind: 'record.delete', collection: 'c', key } : { kind: 'record.put', collection: 'c', key, value: n });
    } else {
      const stream = STREAMS[s.pick % STREAMS.length];
      const seq = (seqs.get(stream) ?? (await model.streamHead(stream))) + 1;
      ops.push({ kind: 'stream.append', stream, seq, value: { n, size: s.size } });
      seqs.set(stream, seq);
    }
  }
  return ops;
}

async function settled(storage: LowdbStorage): Promise<void> {
  while (storage.stats().checkpointRunning) await new Promise((r) => setTimeout(r, 2));
}

test('a crash copy at any point opens to exactly the acknowledged state, also with a torn tail', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.array(step, { minLength: 1, maxLength: 4 }), fc.nat(9)), { minLength: 1, maxLength: 25 }),
      async (plan) => {
        const dir = await tempDir();
        const storage = await lowdbStorage({ dir, checkpointEveryBytes: 600 });
        const model = memoryStorage();
        try {
          for (let n = 0; n < plan.length; n++) {
            const [steps, crash] = plan[n];
            const ops = await batchFor(steps, model, n);
            await model.commit(ops);
            await storage.commit(ops);
            if (crash > 6 && n < plan.length - 1) continue;
            await settled(storage);
            const copy = await crashCopy(dir);
            if (crash % 2 === 1) await appendFile(await journalOf(copy), Uint8Array.from({ length: 5 + crash * 7 }, (_, i) => i));
            const reopened = await lowdbStorage({ dir: copy });
            assert.equal(await observe(reopened), await observe(model), `crash after batch ${n}`);
            const more = await batchFor([{ kind: 3, pick: 0, size: 1 }], reopened, n);
            await reopened.commit(more);
            await reopened.close();
          }
        } finally {
          await storage.close();
          await model.close();
        }
      },
    ),
    { numRuns: 12 },
  );
  await removeTempDirs();
});

test.run();
