/**
 * `npm run bench -- peer`: the engine's one-block edit beside the peer baseline of bench/peer (a
 * headless BlockNote editor's schema over Yjs with y-prosemirror's `updateYFragment`), on 10, 1,000
 * and 10,000 paragraphs. The peer does only the document work — no validation, storage or receipts —
 * so it is a floor for what a BlockNote-over-Yjs server pays per edit, not a like-for-like server.
 * Skipped with a hint when bench/peer is not installed (`npm install --prefix bench/peer`).
 */
import { memoryStorage } from '../adapters/memory/index.ts';
import { createEngine } from '../src/engine.ts';
import { SECONDS, actor, buildDocument, editText, fmt, key, rate, table } from './mutations.ts';

type PeerModule = {
  peerDocument: (size: number, textOf: (size: number, n: number) => string, editTextOf: (size: number, n: number) => string) => () => Uint8Array | null;
};

const blockText = (size: number, n: number) => (size >= 5000 ? `Block ${n}` : `Block ${n} with some **text** in it.`);

/** Run the comparison and print its table (or why it was skipped). */
export async function runPeerBench(): Promise<void> {
  const path = process.env.KW_BENCH_PEER;
  if (!path) {
    console.log('\npeer baseline skipped: install it with `npm install --prefix bench/peer`, then `npm run bench -- peer`');
    return;
  }
  const peer = (await import(path)) as PeerModule;
  const rows = [['blocks', 'peer edits/s', 'engine edits/s', 'engine/peer']];
  for (const size of [10, 1000, 10_000]) {
    const peerEdit = peer.peerDocument(size, blockText, editText);
    const engine = createEngine({ storage: memoryStorage() });
    const state = await buildDocument(engine, size);
    let seq = 0;
    const engineEdit = async () => {
      seq++;
      const mutation = { kind: 'edit', blockId: state.ids[seq % state.ids.length], block: { type: 'paragraph', markdown: editText(size, seq) } };
      const out = await engine.documents.mutate(actor, state.ref, { idempotencyKey: key(), ifRevision: state.revision, body: { v: 1, intent: 'edit', mutation } });
      state.revision = out.document.revision;
    };
    let peerRate = 0;
    let engineRate = 0;
    for (let round = 0; round < 3; round++) {
      peerRate = Math.max(peerRate, await rate(peerEdit, undefined, undefined, SECONDS / 3));
      engineRate = Math.max(engineRate, await rate(engineEdit, undefined, undefined, SECONDS / 3));
    }
    await engine.close();
    rows.push([size.toLocaleString('en-US'), fmt(peerRate), fmt(engineRate), `${((engineRate / peerRate) * 100).toFixed(1)}%`]);
  }
  console.log('\npeer baseline: one-block edits, BlockNote schema + y-prosemirror updateYFragment vs the engine (memory), best of 3 rounds');
  table(rows, 'Engine edit vs BlockNote over Yjs (engine/peer, %)', 3);
}
