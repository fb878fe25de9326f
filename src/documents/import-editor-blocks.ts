/**
 * Starting a document from a BlockNote editor's blocks (in-process only).
 * @module
 */
import { generateNKeysBetween } from 'fractional-indexing';
import { importBlockNote, type ImportedBlock } from '../blocks/blocknote-import.ts';
import type { BlockWrite } from '../blocks/tree.ts';
import { ServiceError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import { Limits } from './schemas.ts';

/**
 * The writes that build `editorBlocks` as a new tree, parents before children (document order).
 * @remarks Editor ids are kept when they match the blockId pattern and are unique; otherwise the
 * server assigns one. More than 10,000 blocks, or anything that is not BlockNote blocks, is
 * INVALID_REQUEST naming the offending field under `editorBlocks`.
 */
export function importEditorBlocks(editorBlocks: unknown, mintBlockId: () => string): BlockWrite[] {
  const imported = importBlockNote(editorBlocks, 'editorBlocks');
  if (!imported.ok) {
    throw new ServiceError('INVALID_REQUEST', `The editor blocks are not BlockNote blocks: ${imported.fieldErrors[0]?.field} ${imported.fieldErrors[0]?.message}.`, {
      fieldErrors: imported.fieldErrors,
    });
  }
  const writes: BlockWrite[] = [];
  const used = new Set<string>();
  const idFor = (given: string | undefined) => {
    if (given !== undefined && Patterns.blockId.test(given) && !used.has(given)) {
      used.add(given);
      return given;
    }
    let id = mintBlockId();
    while (used.has(id)) id = mintBlockId();
    used.add(id);
    return id;
  };
  const add = (blocks: readonly ImportedBlock[], parent: string | null) => {
    const keys = generateNKeysBetween(null, null, blocks.length);
    blocks.forEach((b, i) => {
      const id = idFor(b.id);
      writes.push({ id, rec: { ...b.rec, p: parent, o: keys[i]! } });
      if (writes.length > Limits.outlineMax) {
        throw new ServiceError('INVALID_REQUEST', `A document outline is bounded at ${Limits.outlineMax} blocks.`, {
          fieldErrors: [{ field: 'editorBlocks', message: `holds more than ${Limits.outlineMax} blocks` }],
        });
      }
      add(b.children, id);
    });
  };
  add(imported.blocks, null);
  return writes;
}
