/**
 * A compiled (hand-written) check of the mutation kinds — create, edit, move, delete — that answers the
 * schema's output for requests it fully accepts, and null for anything else, which then goes through
 * the valibot schema (the one source of error messages and of the published JSON Schema).
 * @remarks The output must equal valibot's exactly, keys in schema order included: the idempotency
 * fingerprint is computed over its JSON. `fast-request.test.ts` compares both on generated requests.
 * Any doubt (an undefined value, a long string whose code points need counting, table rows,
 * children nested deeper than {@link CHILD_DEPTH}) is left to valibot.
 * @module
 */
import { BLOCK_TYPES, CODE_LANGUAGE, type BlockInput } from '../blocks/model.ts';
import { Patterns } from '../ids.ts';
import { Limits, type DocumentMutationRequest } from './schemas.ts';

type Obj = Record<string, unknown>;

const TYPES: ReadonlySet<unknown> = new Set(BLOCK_TYPES);
const REQUEST_KEYS = ['v', 'intent', 'mutation'] as const;
const EDIT_KEYS = ['kind', 'blockId', 'block'] as const;
const BLOCK_KEYS = ['type', 'markdown', 'level', 'checked', 'code', 'language'] as const;
const MOVE_KEYS = ['kind', 'blockIds', 'beforeBlockId', 'newParentBlockId', 'oldParentBlockId', 'newSiblingBlockIds', 'oldSiblingBlockIds'] as const;
const DELETE_KEYS = ['kind', 'blockIds', 'parentBlockIds', 'siblingBlockIds'] as const;
const CREATE_KEYS = ['kind', 'beforeBlockId', 'parentBlockId', 'blocks'] as const;
const TREE_BLOCK_KEYS = [...BLOCK_KEYS, 'children'] as const;
/** Levels of `children` the compiled check follows (deeper ones go to valibot). */
const CHILD_DEPTH = 4;

function isObj(x: unknown): x is Obj {
  if (typeof x !== 'object' || x === null) return false;
  const proto: unknown = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/** True when every own key of `o` is one of `keys` and no value is undefined. */
function onlyKeys(o: Obj, keys: readonly string[]): boolean {
  for (const k in o) if (!keys.includes(k) || o[k] === undefined) return false;
  return true;
}

const text = (x: unknown, min: number, max: number): x is string => typeof x === 'string' && x.length >= min && x.length <= max;
const blockId = (x: unknown): x is string => typeof x === 'string' && Patterns.blockId.test(x);
const nullableId = (x: unknown): boolean => x === null || blockId(x);

function ids(x: unknown, min: number, max: number): x is string[] {
  if (!Array.isArray(x) || x.length < min || x.length > max) return false;
  for (let i = 0; i < x.length; i++) if (!blockId(x[i])) return false;
  return true;
}

/** A copy of `o` with the present keys of `keys`, in that order (valibot's object output). */
function pick(o: Obj, keys: readonly string[], copy: (k: string, value: unknown) => unknown = (_k, value) => value): Obj {
  const out: Obj = {};
  for (const k of keys) if (k in o) out[k] = copy(k, o[k]);
  return out;
}

/** True when the block fields of `b` (everything but `children`) are valid and need no code point count. */
function blockFields(b: Obj): boolean {
  if (!TYPES.has(b.type)) return false;
  if ('markdown' in b && !text(b.markdown, 0, Limits.markdownMax)) return false;
  if ('level' in b && b.level !== 1 && b.level !== 2 && b.level !== 3) return false;
  if ('checked' in b && typeof b.checked !== 'boolean') return false;
  if ('code' in b && !text(b.code, 0, Limits.codeMax)) return false;
  return !('language' in b) || (text(b.language, 1, Limits.languageMax) && CODE_LANGUAGE.test(b.language));
}

/** A copy of a checked block's fields (not `children`), in schema order. */
function pickBlock(b: Obj): Obj {
  const out: Obj = { type: b.type };
  if ('markdown' in b) out.markdown = b.markdown;
  if ('level' in b) out.level = b.level;
  if ('checked' in b) out.checked = b.checked;
  if ('code' in b) out.code = b.code;
  if ('language' in b) out.language = b.language;
  return out;
}

function block(b: unknown): b is BlockInput {
  return isObj(b) && onlyKeys(b, BLOCK_KEYS) && blockFields(b);
}

/**
 * The schema output of a create's `blocks` (or a block's `children`, `depth` levels down), or null.
 * Output keys in schema order: the block's fields, then `children`.
 */
function blockList(x: unknown, min: number, max: number, depth: number): Obj[] | null {
  if (!Array.isArray(x) || x.length < min || x.length > max) return null;
  const out: Obj[] = new Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const b: unknown = x[i];
    if (!isObj(b) || !onlyKeys(b, TREE_BLOCK_KEYS) || !blockFields(b)) return null;
    const picked = pickBlock(b);
    if ('children' in b) {
      if (depth >= CHILD_DEPTH) return null;
      const kids = blockList(b.children, 0, Limits.childrenMax, depth + 1);
      if (kids === null) return null;
      picked.children = kids;
    }
    out[i] = picked;
  }
  return out;
}

function mutation(m: unknown): Obj | null {
  if (!isObj(m)) return null;
  if (m.kind === 'create') {
    if (!onlyKeys(m, CREATE_KEYS) || !('beforeBlockId' in m) || !('parentBlockId' in m)) return null;
    if (!nullableId(m.beforeBlockId) || !nullableId(m.parentBlockId)) return null;
    const blocks = blockList(m.blocks, 1, Limits.createBlocksMax, 0);
    if (blocks === null) return null;
    return { kind: 'create', beforeBlockId: m.beforeBlockId, parentBlockId: m.parentBlockId, blocks };
  }
  if (m.kind === 'edit') {
    if (!onlyKeys(m, EDIT_KEYS) || !blockId(m.blockId) || !block(m.block)) return null;
    return { kind: 'edit', blockId: m.blockId, block: pickBlock(m.block as unknown as Obj) };
  }
  if (m.kind === 'move') {
    if (!onlyKeys(m, MOVE_KEYS) || !ids(m.blockIds, 1, Limits.blockIdsMax) || !('beforeBlockId' in m) || !('newParentBlockId' in m)) return null;
    if (!nullableId(m.beforeBlockId) || !nullableId(m.newParentBlockId) || ('oldParentBlockId' in m && !nullableId(m.oldParentBlockId))) return null;
    if ('newSiblingBlockIds' in m && !ids(m.newSiblingBlockIds, 0, Limits.fenceSiblingsMax)) return null;
    if ('oldSiblingBlockIds' in m && !ids(m.oldSiblingBlockIds, 0, Limits.fenceSiblingsMax)) return null;
    return pick(m, MOVE_KEYS, (_k, value) => (Array.isArray(value) ? [...value] : value));
  }
  if (m.kind === 'delete') {
    if (!onlyKeys(m, DELETE_KEYS) || !ids(m.blockIds, 1, Limits.blockIdsMax)) return null;
    if ('parentBlockIds' in m && !ids(m.parentBlockIds, 0, Limits.parentBlockIdsMax)) return null;
    if ('siblingBlockIds' in m && !ids(m.siblingBlockIds, 0, Limits.siblingBlockIdsMax)) return null;
    return pick(m, DELETE_KEYS, (_k, value) => (Array.isArray(value) ? [...value] : value));
  }
  return null;
}

/**
 * The parsed request when it is a valid mutation the fast check fully accepts; null
 * otherwise (then valibot decides).
 */
export function fastMutationRequest(input: unknown): DocumentMutationRequest | null {
  if (!isObj(input) || !onlyKeys(input, REQUEST_KEYS) || input.v !== 1 || !text(input.intent, 1, Limits.intentMax)) return null;
  const parsed = mutation(input.mutation);
  if (parsed === null) return null;
  return { v: 1, intent: input.intent, mutation: parsed } as unknown as DocumentMutationRequest;
}
