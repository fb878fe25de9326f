/**
 * The memory adapter packs a document's logged updates into shared buffers: what it returns is
 * exactly what was appended, whatever the sizes, across buffer boundaries and compactions, and the
 * caller's bytes stay the caller's.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { DocumentHead } from '../../src/ports.ts';
import { memoryStorage } from './index.ts';

const head = (version: number, snapshotVersion = 0): DocumentHead => ({
  documentRef: 'sdoc_log',
  spaceRef: 'ksp_log',
  accountId: 'acct',
  title: 't',
  version,
  snapshotVersion,
  generation: 0,
  contentSha256: '',
  blockCount: 0,
  createdAt: 1,
  updatedAt: 1,
});

/** Update bytes of version `v`: sizes from 1 byte to 9 KiB (over a quarter of the largest buffer). */
const bytesOf = (v: number) => {
  const n = v % 37 === 0 ? 9_000 : 1 + ((v * 131) % 700);
  return Uint8Array.from({ length: n }, (_, i) => (v * 31 + i) & 255);
};

test('appended updates read back byte for byte across buffers and compactions; callers keep their bytes', async () => {
  const storage = memoryStorage();
  await storage.commit([{ kind: 'document.create', head: head(1), snapshot: new Uint8Array([1]) }]);
  let compactedTo = 0;
  for (let v = 2; v <= 400; v++) {
    const update = bytesOf(v);
    await storage.commit([{ kind: 'document.append', head: head(v), update }]);
    update.fill(0); // the stored copy must not change
    if (v % 150 === 0) {
      compactedTo = v - 20;
      await storage.commit([{ kind: 'document.compact', documentRef: 'sdoc_log', snapshotVersion: compactedTo, generation: 0, snapshot: new Uint8Array([2]) }]);
    }
  }
  const updates = (await storage.loadUpdates('sdoc_log', compactedTo))!;
  assert.equal(updates.map((u) => u.version), Array.from({ length: 400 - compactedTo }, (_, i) => compactedTo + 1 + i));
  for (const u of updates) assert.equal(u.update, bytesOf(u.version), `version ${u.version}`);
  updates[0]!.update.fill(7); // a read is the reader's copy
  assert.equal((await storage.loadDocument('sdoc_log'))!.updates[0]!.update, bytesOf(compactedTo + 1));
  await storage.close();
});

test.run();
