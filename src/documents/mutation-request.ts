/**
 * Parsing a DocumentMutationRequest on the hot path.
 * @module
 */
import * as v from 'valibot';
import type { BlockInput } from '../blocks/model.ts';
import { parseOrThrow } from '../validation.ts';
import { fastMutationRequest } from './fast-request.ts';
import { DocumentMutationRequestSchema, MutationSchema, type DocumentMutationRequest, type Mutation } from './schemas.ts';

/**
 * The request schema with its `mutation` variant resolved to one kind each: the same checks and the
 * same output (valibot's variant returns the matching option's result), without valibot first
 * running every option's discriminator. A request that fails it is parsed again with the full
 * schema, whose issues name the fields.
 */
const REQUEST_BY_KIND = new Map<unknown, v.GenericSchema<unknown, DocumentMutationRequest>>(
  MutationSchema.options.map((option) => [
    option.entries.kind.literal,
    v.strictObject({ ...DocumentMutationRequestSchema.entries, mutation: option }) as unknown as v.GenericSchema<unknown, DocumentMutationRequest>,
  ]),
);

/**
 * `parseOrThrow(DocumentMutationRequestSchema, input)`, faster for valid requests: same output, same
 * errors. Edits, moves and deletes go through the compiled check first (see `fast-request.ts`).
 */
export function parseMutationRequest(input: unknown): DocumentMutationRequest {
  const fast = fastMutationRequest(input);
  if (fast !== null) return fast;
  const mutation = typeof input === 'object' && input !== null ? (input as { mutation?: unknown }).mutation : undefined;
  const kind = typeof mutation === 'object' && mutation !== null ? (mutation as { kind?: unknown }).kind : undefined;
  const schema = REQUEST_BY_KIND.get(kind);
  if (schema !== undefined) {
    const quick = v.safeParse(schema, input);
    if (quick.success) return quick.output;
  }
  return parseOrThrow(DocumentMutationRequestSchema, input);
}


/** Characters `JSON.stringify` escapes in a string (any surrogate, to leave pairs to it too). */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(text)`; a text with nothing to escape (the usual case) is only put in quotes. */
const quote = (text: string) => (ESCAPED.test(text) ? JSON.stringify(text) : `"${text}"`);

/** A blockId's JSON: its characters (see `Patterns.blockId`) never need escaping. */
const idJson = (id: string) => `"${id}"`;
const nullableIdJson = (id: string | null) => (id === null ? 'null' : `"${id}"`);
const idsJson = (ids: readonly string[]) => (ids.length === 1 ? `["${ids[0]}"]` : `[${ids.map(idJson).join(',')}]`);

function blockJson(b: BlockInput): string {
  // A block type is one of BLOCK_TYPES: plain letters.
  let out = `{"type":"${b.type}"`;
  if (b.markdown !== undefined) out += `,"markdown":${quote(b.markdown)}`;
  if (b.level !== undefined) out += `,"level":${b.level}`;
  if (b.checked !== undefined) out += `,"checked":${b.checked}`;
  if (b.code !== undefined) out += `,"code":${quote(b.code)}`;
  if (b.language !== undefined) out += `,"language":${quote(b.language)}`;
  if (b.rows !== undefined) out += `,"rows":${JSON.stringify(b.rows)}`;
  if (b.children !== undefined) out += `,"children":[${b.children.map(blockJson).join(',')}]`;
  return `${out}}`;
}

function mutationJson(m: Mutation): string {
  switch (m.kind) {
    case 'edit':
      return `{"kind":"edit","blockId":${idJson(m.blockId)},"block":${blockJson(m.block)}}`;
    case 'create':
      return `{"kind":"create","beforeBlockId":${nullableIdJson(m.beforeBlockId)},"parentBlockId":${nullableIdJson(m.parentBlockId)},"blocks":[${m.blocks.map(blockJson).join(',')}]}`;
    case 'move': {
      let out = `{"kind":"move","blockIds":${idsJson(m.blockIds)},"beforeBlockId":${nullableIdJson(m.beforeBlockId)},"newParentBlockId":${nullableIdJson(m.newParentBlockId)}`;
      if (m.oldParentBlockId !== undefined) out += `,"oldParentBlockId":${nullableIdJson(m.oldParentBlockId)}`;
      if (m.newSiblingBlockIds !== undefined) out += `,"newSiblingBlockIds":${idsJson(m.newSiblingBlockIds)}`;
      if (m.oldSiblingBlockIds !== undefined) out += `,"oldSiblingBlockIds":${idsJson(m.oldSiblingBlockIds)}`;
      return `${out}}`;
    }
    case 'delete': {
      let out = `{"kind":"delete","blockIds":${idsJson(m.blockIds)}`;
      if (m.parentBlockIds !== undefined) out += `,"parentBlockIds":${idsJson(m.parentBlockIds)}`;
      if (m.siblingBlockIds !== undefined) out += `,"siblingBlockIds":${idsJson(m.siblingBlockIds)}`;
      return `${out}}`;
    }
  }
}

/**
 * `JSON.stringify(body)` of a request {@link parseMutationRequest} returned (the text the idempotency
 * fingerprint hashes), written field by field in schema order: about half the cost of the generic
 * serialiser on the mutation path. Only for parsed requests: their keys are the schema's, in its order.
 */
export function requestJson(body: DocumentMutationRequest): string {
  return `{"v":1,"intent":${quote(body.intent)},"mutation":${mutationJson(body.mutation)}}`;
}
