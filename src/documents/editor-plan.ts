/**
 * Planning a version from a BlockNote editor's blocks (live co-editing): the writes that turn the
 * document's tree into the editor's blocks, touching only blocks that differ.
 * @module
 */
import { generateNKeysBetween } from 'fractional-indexing';
import { importBlockNote, type ImportedBlock } from '../blocks/blocknote-import.ts';
import type { BlockRecord } from '../blocks/model.ts';
import type { BlockTree, BlockWrite } from '../blocks/tree.ts';
import { canonicalJson } from '../canonical-json.ts';
import { ServiceError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import type { MutationPlan } from './plan.ts';
import { Limits } from './schemas.ts';

/**
 * The writes that make `tree` hold exactly `editorBlocks` (BlockNote blocks, as a rich-json
 * document's `blocks`), or a plan without writes when it does already.
 * @remarks Block ids are kept when they match the blockId pattern and are unique, else minted. A block
 * that stays under the same parent keeps its order key while the kept keys still ascend (so a typed
 * character writes one record, not its siblings'); the others get keys between their kept
 * neighbours. Blocks of the tree the editor no longer holds are deleted. `affectedBlockIds` lists
 * the written blocks in document order, then the deleted ones, at most 256. Bad input is
 * INVALID_REQUEST naming the field under `editorBlocks`; more than 10,000 blocks likewise.
 */
export function planEditorBlocks(tree: BlockTree, editorBlocks: unknown, mintBlockId: () => string): MutationPlan {
  const imported = importBlockNote(editorBlocks, 'editorBlocks');
  if (!imported.ok) {
    const first = imported.fieldErrors[0];
    throw new ServiceError('INVALID_REQUEST', `The editor blocks are not BlockNote blocks: ${first?.field} ${first?.message}.`, {
      fieldErrors: imported.fieldErrors,
    });
  }
  const used = new Set<string>();
  const idFor = (given: string | undefined): string => {
    if (given !== undefined && Patterns.blockId.test(given) && !used.has(given)) {
      used.add(given);
      return given;
    }
    let id = mintBlockId();
    while (used.has(id) || tree.has(id)) id = mintBlockId();
    used.add(id);
    return id;
  };
  const writes: BlockWrite[] = [];
  const affected: string[] = [];
  let count = 0;
  const place = (blocks: readonly ImportedBlock[], parent: string | null): void => {
    const ids = blocks.map((b) => idFor(b.id));
    const keys = orderKeys(tree, ids, parent);
    blocks.forEach((b, i) => {
      const id = ids[i]!;
      if (++count > Limits.outlineMax) {
        throw new ServiceError('INVALID_REQUEST', `A document outline is bounded at ${Limits.outlineMax} blocks.`, {
          fieldErrors: [{ field: 'editorBlocks', message: `holds more than ${Limits.outlineMax} blocks` }],
        });
      }
      const rec: BlockRecord = { ...b.rec, p: parent, o: keys[i]! };
      const old = tree.get(id);
      if (old === undefined || canonicalJson(old) !== canonicalJson(rec)) {
        writes.push({ id, rec });
        affected.push(id);
      }
      place(b.children, id);
    });
  };
  place(imported.blocks, null);
  // Deletes after the upserts (blocks moved out of a deleted parent are placed first), children first.
  const gone: string[] = [];
  for (const entry of tree.walk()) if (!used.has(entry.id)) gone.push(entry.id);
  for (let i = gone.length - 1; i >= 0; i--) writes.push({ id: gone[i]!, rec: null });
  affected.push(...gone);
  return { writes, affectedBlockIds: affected.slice(0, Limits.affectedMax) };
}

/**
 * Order keys for `ids` as the children of `parent`: kept where the block already sits under that
 * parent and its key ascends past the last kept one, fresh between the kept neighbours otherwise.
 */
function orderKeys(tree: BlockTree, ids: readonly string[], parent: string | null): string[] {
  const keys: (string | null)[] = ids.map(() => null);
  let last: string | null = null;
  ids.forEach((id, i) => {
    const rec = tree.get(id);
    if (rec !== undefined && rec.p === parent && (last === null || rec.o > last)) {
      keys[i] = rec.o;
      last = rec.o;
    }
  });
  let i = 0;
  while (i < ids.length) {
    if (keys[i] !== null) {
      i++;
      continue;
    }
    let j = i;
    while (j < ids.length && keys[j] === null) j++;
    const fresh = generateNKeysBetween(i > 0 ? keys[i - 1]! : null, j < ids.length ? keys[j]! : null, j - i);
    for (let k = i; k < j; k++) keys[k] = fresh[k - i]!;
    i = j;
  }
  return keys as string[];
}
