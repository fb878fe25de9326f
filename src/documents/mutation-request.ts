/**
 * Parsing a DocumentMutationRequest on the hot path.
 * @module
 */
import * as v from 'valibot';
import { parseOrThrow } from '../validation.ts';
import { fastMutationRequest } from './fast-request.ts';
import { DocumentMutationRequestSchema, MutationSchema, type DocumentMutationRequest } from './schemas.ts';

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

