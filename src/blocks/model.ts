/**
 * The block model shared by the tree, the renderers and the schemas.
 * @module
 */

/** The eight block types of the contract (the Markdown grammar). */
export const BLOCK_TYPES = [
  'paragraph',
  'heading',
  'bulletListItem',
  'numberedListItem',
  'checkListItem',
  'quote',
  'codeBlock',
  'table',
] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];

/**
 * A code block's language: it becomes the info string after the opening fence of the Markdown
 * export, so a line break, a backtick or a tilde in it would end or break the fence.
 */
export const CODE_LANGUAGE = /^[^\r\n\u0085\u2028\u2029`~]*$/;
/** The fieldError message of a language {@link CODE_LANGUAGE} refuses. */
export const CODE_LANGUAGE_RULE = 'must not contain line breaks, backticks or tildes (it is the info string of a Markdown code fence)';

/** The contract's Block as an agent sends it (after validation). */
export interface BlockInput {
  type: BlockType;
  markdown?: string | undefined;
  children?: BlockInput[] | undefined;
  level?: 1 | 2 | 3 | undefined;
  checked?: boolean | undefined;
  code?: string | undefined;
  language?: string | undefined;
  rows?: string[][] | undefined;
}

/**
 * A block's own fields as stored in the Yjs document (one plain value per block in a Y.Map keyed by id).
 * Short keys keep updates small.
 * @remarks `raw` holds a BlockNote block of a type outside the Markdown grammar (image, toggle, …),
 * imported from an editor: its JSON minus `id` and `children`. Such a document can only be read as rich-json.
 */
export interface BlockRecord {
  /** type */
  t: string;
  /** parent block id, null at the root */
  p: string | null;
  /** fractional order key among siblings */
  o: string;
  /** inline Markdown (text blocks and headings) */
  md?: string;
  /** heading level */
  lv?: 1 | 2 | 3;
  /** check-list item checked */
  ck?: boolean;
  /** code block source and language */
  code?: string;
  lang?: string;
  /** table rows of inline-Markdown cells */
  rows?: string[][];
  /** BlockNote block JSON (minus id and children) for blocks outside the Markdown grammar */
  raw?: Record<string, unknown>;
  /**
   * BlockNote props or inline styles that Markdown cannot carry (textColor, underline, alignment, …),
   * kept from an imported editor block so rich-json round-trips; counted as Markdown loss.
   */
  extra?: Record<string, unknown>;
}

/** True when the record is one of the eight contract types (not an opaque editor block). */
export function isGrammarBlock(rec: BlockRecord): boolean {
  return rec.raw === undefined && (BLOCK_TYPES as readonly string[]).includes(rec.t);
}
