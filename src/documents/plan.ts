/**
 * Planning a mutation against the exact snapshot: every structural check happens here, before
 * anything is written, so a mutation applies whole or not at all.
 * @module
 */
import { generateNKeysBetween } from 'fractional-indexing';
import type { BlockInput, BlockRecord } from '../blocks/model.ts';
import type { BlockTree, BlockWrite } from '../blocks/tree.ts';
import { conflict } from '../errors.ts';
import type { CreateMutationInput, DeleteMutationInput, EditMutationInput, MoveMutationInput, Mutation } from './schemas.ts';
import { Limits } from './schemas.ts';
import { toRecord } from './block-input.ts';

/** What a mutation will write and which blocks it affects (document order for creates). */
export interface MutationPlan {
  writes: BlockWrite[];
  affectedBlockIds: string[];
}

/** Plan `mutation` on `tree` or throw CONFLICT (409) naming what does not match. */
export function planMutation(tree: BlockTree, mutation: Mutation, mintBlockId: () => string): MutationPlan {
  switch (mutation.kind) {
    case 'create':
      return planCreate(tree, mutation, mintBlockId);
    case 'edit':
      return planEdit(tree, mutation);
    case 'move':
      return planMove(tree, mutation);
    case 'delete':
      return planDelete(tree, mutation);
  }
}

function requireBlock(tree: BlockTree, id: string, field: string): BlockRecord {
  const rec = tree.get(id);
  if (!rec) throw conflict(`Block ${id} does not exist in this revision of the document.`, field);
  return rec;
}

/** Key of the sibling before position `at` in `siblings` (skipping excluded ids), or null. */
function keyBefore(tree: BlockTree, siblings: readonly string[], at: number, exclude?: ReadonlySet<string>): string | null {
  for (let i = at - 1; i >= 0; i--) if (!exclude?.has(siblings[i]!)) return tree.get(siblings[i]!)!.o;
  return null;
}

/** Id of the sibling before position `at` (skipping excluded), or null. */
function idBefore(siblings: readonly string[], at: number, exclude?: ReadonlySet<string>): string | null {
  for (let i = at - 1; i >= 0; i--) if (!exclude?.has(siblings[i]!)) return siblings[i]!;
  return null;
}

/** Position of the insertion point: index of beforeBlockId among the parent's children, or the end. */
function insertionIndex(tree: BlockTree, parentId: string | null, beforeId: string | null, beforeField: string): number {
  const siblings = tree.children(parentId);
  if (beforeId === null) return siblings.length;
  const rec = requireBlock(tree, beforeId, beforeField);
  if (rec.p !== parentId) {
    throw conflict(
      `beforeBlockId ${beforeId} is not a child of ${parentId === null ? 'the root' : `block ${parentId}`}.`,
      beforeField,
    );
  }
  return siblings.indexOf(beforeId);
}

function planCreate(tree: BlockTree, m: CreateMutationInput, mint: () => string): MutationPlan {
  if (m.parentBlockId !== null) requireBlock(tree, m.parentBlockId, 'mutation.parentBlockId');
  const siblings = tree.children(m.parentBlockId);
  const at = insertionIndex(tree, m.parentBlockId, m.beforeBlockId, 'mutation.beforeBlockId');
  const keys = generateNKeysBetween(keyBefore(tree, siblings, at), at < siblings.length ? tree.get(siblings[at]!)!.o : null, m.blocks.length);
  const writes: BlockWrite[] = [];
  const affected: string[] = [];
  const used = new Set<string>();
  const fresh = () => {
    let id = mint();
    while (tree.has(id) || used.has(id)) id = mint();
    used.add(id);
    return id;
  };
  const add = (block: BlockInput, parent: string | null, key: string) => {
    const id = fresh();
    writes.push({ id, rec: toRecord(block, parent, key) });
    affected.push(id);
    const kids = block.children ?? [];
    if (kids.length) {
      const childKeys = generateNKeysBetween(null, null, kids.length);
      kids.forEach((child, i) => add(child, id, childKeys[i]!));
    }
  };
  m.blocks.forEach((b, i) => add(b, m.parentBlockId, keys[i]!));
  if (tree.size + writes.length > Limits.outlineMax) {
    throw conflict(
      `The document would hold ${tree.size + writes.length} blocks; a document outline is bounded at ${Limits.outlineMax}.`,
      'mutation.blocks',
    );
  }
  return { writes, affectedBlockIds: affected };
}

function planEdit(tree: BlockTree, m: EditMutationInput): MutationPlan {
  const old = requireBlock(tree, m.blockId, 'mutation.blockId');
  const rec: BlockRecord = toRecord(m.block, old.p, old.o);
  return { writes: [{ id: m.blockId, rec }], affectedBlockIds: [m.blockId] };
}

function sameSet(given: readonly (string | null)[], derived: readonly (string | null)[]): boolean {
  const a = new Set(given);
  const b = new Set(derived);
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

function fenceMismatch(field: string, derived: readonly (string | null)[]): never {
  const shown = derived.length ? derived.map((x) => (x === null ? 'null (the root)' : x)).join(', ') : 'none';
  throw conflict(`The ${field.slice('mutation.'.length)} fence does not match the current document (it is: ${shown}).`, field);
}

function planMove(tree: BlockTree, m: MoveMutationInput): MutationPlan {
  m.blockIds.forEach((id, i) => requireBlock(tree, id, `mutation.blockIds.${i}`));
  const oldParent = tree.get(m.blockIds[0]!)!.p;
  m.blockIds.forEach((id, i) => {
    if (tree.get(id)!.p !== oldParent) {
      throw conflict('The moved blocks must share one current parent.', `mutation.blockIds.${i}`);
    }
  });
  if (m.oldParentBlockId !== undefined && m.oldParentBlockId !== oldParent) fenceMismatch('mutation.oldParentBlockId', [oldParent]);
  const moving = new Set(m.blockIds);
  const origin = tree.children(oldParent);
  if (m.oldSiblingBlockIds !== undefined) {
    const positions = m.blockIds.map((id) => origin.indexOf(id));
    const first = Math.min(...positions);
    const last = Math.max(...positions);
    const derived: string[] = [];
    const before = idBefore(origin, first, moving);
    if (before !== null) derived.push(before);
    for (let i = last + 1; i < origin.length; i++) {
      if (!moving.has(origin[i]!)) {
        derived.push(origin[i]!);
        break;
      }
    }
    if (!sameSet(m.oldSiblingBlockIds, derived)) fenceMismatch('mutation.oldSiblingBlockIds', derived);
  }
  const newParent = m.newParentBlockId;
  if (newParent !== null) {
    requireBlock(tree, newParent, 'mutation.newParentBlockId');
    for (const id of m.blockIds) {
      if (tree.isWithin(newParent, id)) {
        throw conflict(`Block ${id} cannot move under itself or one of its descendants.`, 'mutation.newParentBlockId');
      }
    }
  }
  if (m.beforeBlockId !== null && moving.has(m.beforeBlockId)) {
    throw conflict('beforeBlockId cannot be one of the moved blocks.', 'mutation.beforeBlockId');
  }
  const dest = tree.children(newParent);
  const at = insertionIndex(tree, newParent, m.beforeBlockId, 'mutation.beforeBlockId');
  if (m.newSiblingBlockIds !== undefined) {
    const derived: string[] = [];
    const before = idBefore(dest, at, moving);
    if (before !== null) derived.push(before);
    if (m.beforeBlockId !== null) derived.push(m.beforeBlockId);
    if (!sameSet(m.newSiblingBlockIds, derived)) fenceMismatch('mutation.newSiblingBlockIds', derived);
  }
  const lo = keyBefore(tree, dest, at, moving);
  const hi = m.beforeBlockId === null ? null : tree.get(m.beforeBlockId)!.o;
  const keys = generateNKeysBetween(lo, hi, m.blockIds.length);
  const writes = m.blockIds.map((id, i) => ({ id, rec: { ...tree.get(id)!, p: newParent, o: keys[i]! } }));
  return { writes, affectedBlockIds: [...m.blockIds] };
}

function planDelete(tree: BlockTree, m: DeleteMutationInput): MutationPlan {
  m.blockIds.forEach((id, i) => requireBlock(tree, id, `mutation.blockIds.${i}`));
  const doomed = new Set<string>();
  for (const id of m.blockIds) for (const d of tree.subtree(id)) doomed.add(d);
  if (m.parentBlockIds !== undefined) {
    const derived = [...new Set(m.blockIds.map((id) => tree.get(id)!.p).filter((p): p is string => p !== null))];
    if (!sameSet(m.parentBlockIds, derived)) fenceMismatch('mutation.parentBlockIds', derived);
  }
  if (m.siblingBlockIds !== undefined) {
    const derived = new Set<string>();
    for (const id of m.blockIds) {
      const siblings = tree.children(tree.get(id)!.p);
      const at = siblings.indexOf(id);
      const prev = siblings[at - 1];
      const next = siblings[at + 1];
      if (prev !== undefined && !doomed.has(prev)) derived.add(prev);
      if (next !== undefined && !doomed.has(next)) derived.add(next);
    }
    if (!sameSet(m.siblingBlockIds, [...derived])) fenceMismatch('mutation.siblingBlockIds', [...derived]);
  }
  // Children before parents is not needed: the tree drops a deleted parent's index entry whole.
  const writes: BlockWrite[] = [...doomed].map((id) => ({ id, rec: null }));
  return { writes, affectedBlockIds: [...m.blockIds] };
}

