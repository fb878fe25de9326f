/**
 * A mutation loop to profile (`npm run bench -- profile [blocks] [kind] [seconds]`): one document of
 * `blocks` paragraphs, `kind` mutations (edit, create, move, delete) in a loop that reads only the
 * receipt's resulting version and the document's revision (creates and deletes keep the document
 * between `blocks` and twice as many, with one delete or create of `blocks` blocks per `blocks`
 * mutations; an edit writes the text the mutation bench writes). Run it under `node --cpu-prof` (see
 * the README, Performance).
 */
import { memoryStorage } from '../adapters/memory/index.ts';
import type { Actor } from '../src/actor.ts';
import { createEngine } from '../src/engine.ts';
import { editText } from './mutations.ts';

const actor: Actor = { accountId: 'bench', credentialRef: null, documentRef: null };
let seq = 0;
const key = () => `profile-key-${(++seq).toString(36).padStart(10, '0')}`;

/** Run the loop and print its rate. */
export async function runProfileLoop(blocks = 10, kind = 'edit', seconds = 3): Promise<void> {
  const engine = createEngine({ storage: memoryStorage() });
  const created = await engine.documents.create(actor, { idempotencyKey: key(), body: { v: 1, title: 'profile' } });
  const ref = created.document.documentRef;
  let revision = created.document.revision;
  const ids: string[] = [];
  for (let made = 0; made < blocks; made += 50) {
    const list = Array.from({ length: Math.min(50, blocks - made) }, (_, i) => ({ type: 'paragraph', markdown: `Block ${made + i}` }));
    const out = await engine.documents.mutate(actor, ref, {
      idempotencyKey: key(),
      ifRevision: revision,
      body: { v: 1, intent: 'build', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: list } },
    });
    revision = out.document.revision;
    ids.push(...out.receipt.affectedBlockIds);
  }
  let n = 0;
  let version = 0;
  // Creates run from `blocks` to twice as many blocks, then one delete takes the document back;
  // deletes run from twice `blocks` down to `blocks`, then one create refills it.
  const size = ids.length;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    const id = ids[n % size]!;
    const other = ids[(n * 7 + 3) % size]!;
    let mutation: unknown;
    if (kind === 'create' && ids.length >= 2 * size) mutation = { kind: 'delete', blockIds: ids.slice(size) };
    else if (kind === 'delete' && ids.length <= size) {
      mutation = { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: ids.map((_, i) => ({ type: 'paragraph', markdown: `Refill ${i}` })) };
    } else if (kind === 'move') mutation = { kind: 'move', blockIds: [id], newParentBlockId: null, beforeBlockId: other === id ? null : other };
    else if (kind === 'create') mutation = { kind: 'create', parentBlockId: null, beforeBlockId: id, blocks: [{ type: 'paragraph', markdown: `New ${n}` }] };
    else if (kind === 'delete') mutation = { kind: 'delete', blockIds: [ids[ids.length - 1]!] };
    else mutation = { kind: 'edit', blockId: id, block: { type: 'paragraph', markdown: editText(blocks, n) } };
    const out = await engine.documents.mutate(actor, ref, { idempotencyKey: key(), ifRevision: revision, body: { v: 1, intent: kind, mutation } });
    version = out.receipt.resultingVersion;
    revision = out.document.revision;
    const made = (mutation as { kind: string; blockIds?: string[] }).kind;
    if (made === 'create') ids.push(...out.receipt.affectedBlockIds);
    else if (made === 'delete') ids.length -= (mutation as { blockIds: string[] }).blockIds.length;
    n++;
  }
  const rate = n / ((performance.now() - start) / 1000);
  console.log(`${blocks} blocks, ${kind}: ${Math.round(rate)} mutations/s (last version ${version})`);
  await engine.close();
}
