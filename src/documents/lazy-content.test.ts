import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { accountActor, freshKey, mutate, newDocument, seededRandom } from '../../fixtures/engine-kit.ts';
import { manualClock } from '../clock.ts';
import { createEngine } from '../engine.ts';
import { sha256Hex } from '../hash.ts';
import { seededIds } from '../ids.ts';
import type { Storage } from '../ports.ts';
import type { MutationOutcome } from './types.ts';

const alice = accountActor('alice');
const para = (markdown: string) => ({ kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown }] });

/** An engine whose SHA-256 counts the document contents it hashes (request fingerprints aside). */
function countingEngine(storage: Storage = memoryStorage(), seed = 1) {
  const hashed: string[] = [];
  const decoder = new TextDecoder();
  const sha256 = (data: string | Uint8Array | readonly (string | Uint8Array)[]) => {
    const text =
      typeof data === 'string' ? data : data instanceof Uint8Array ? '' : data.map((p) => (typeof p === 'string' ? p : decoder.decode(p))).join('');
    if (text.startsWith('{"type":"blocks"')) hashed.push(text);
    return sha256Hex(data);
  };
  return { engine: createEngine({ storage, ids: seededIds(seed), clock: manualClock(), sha256 }), hashed };
}

async function history(engine: ReturnType<typeof countingEngine>['engine'], n: number, keys: string[] = []) {
  const { ref, revision } = await newDocument(engine, alice);
  const outs: MutationOutcome[] = [];
  let rev = revision;
  for (let i = 0; i < n; i++) {
    const key = keys[i] ?? freshKey();
    keys[i] = key;
    const out = await mutate(engine, alice, ref, rev, para(`block ${i} with **text**`), key);
    outs.push(out);
    rev = out.document.revision;
  }
  return { ref, outs, keys };
}

test('a mutation loop that reads only versions and revisions hashes no document content', async () => {
  const { engine, hashed } = countingEngine();
  const { outs } = await history(engine, 20);
  assert.is(outs[19]!.receipt.resultingVersion, 21);
  assert.is(hashed.length, 1, 'only the creation (version 1) is hashed');
});

test('contentSha256 equals the SHA-256 of the emitted document for every version, read in any order, each hashed once', async () => {
  const { engine, hashed } = countingEngine();
  const { outs } = await history(engine, 12);
  const random = seededRandom(3);
  const order = outs.map((_, i) => i).sort(() => random() - 0.5);
  for (const i of order) {
    const { document, receipt } = outs[i]!;
    const text = i % 2 ? document.documentJson : '';
    assert.is(document.contentSha256, sha256Hex(JSON.stringify(JSON.parse(document.documentJson))), `version ${document.version}`);
    assert.is(receipt.contentSha256, document.contentSha256);
    assert.is(JSON.parse(JSON.stringify(receipt)).contentSha256, document.contentSha256, 'the receipt serialises its hash');
    if (text) assert.is(document.documentJson, text);
  }
  assert.is(hashed.length, 1 + outs.length, 'one hash per version, however often it is read');
  assert.is(new Set(hashed).size, hashed.length);
});

test('replaying the receipt of a version nobody read gives the same receipt, with the hash of that version', async () => {
  const { engine } = countingEngine();
  const { ref, outs, keys } = await history(engine, 6);
  const second = outs[1]!;
  const replay = await engine.documents.mutate(alice, ref, { idempotencyKey: keys[1], ifRevision: outs[0]!.document.revision, body: { v: 1, intent: 'test', mutation: para('block 1 with **text**') } });
  assert.is(replay.idempotency.idempotency, 'replayed');
  assert.equal(replay.receipt, second.receipt);
  assert.is(replay.receipt.contentSha256, sha256Hex(second.document.documentJson));
});

test('another process replays a receipt whose hash was never computed, rebuilding the version from the log', async () => {
  const storage = memoryStorage();
  const a = countingEngine(storage, 1);
  const { ref, outs, keys } = await history(a.engine, 4);
  const b = countingEngine(storage, 2);
  const replay = await b.engine.documents.mutate(alice, ref, { idempotencyKey: keys[2], ifRevision: outs[1]!.document.revision, body: { v: 1, intent: 'test', mutation: para('block 2 with **text**') } });
  assert.is(replay.idempotency.idempotency, 'replayed');
  assert.equal(replay.receipt, outs[2]!.receipt);
  const list = await b.engine.documents.list(alice, {});
  assert.is(list.items[0]!.contentSha256, outs[3]!.document.contentSha256);
});

test.run();
