/**
 * A DocumentMutationRequest checked whole: the schema (per mutation kind), then what the schema cannot
 * say (fields that fit the block type, one inline Markdown block per block, at most 256 created blocks
 * with their children, no repeated block ids).
 * @module
 */
import { ServiceError, type FieldError } from '../errors.ts';
import { checkBlock, countBlocks } from './block-input.ts';
import { parseMutationRequest } from './mutation-request.ts';
import { Limits, type DocumentMutationRequest } from './schemas.ts';

/** Validate a DocumentMutationRequest: schema, then what the schema cannot say. */
export function validateMutation(input: unknown): DocumentMutationRequest {
  const body = parseMutationRequest(input);
  const errors: FieldError[] = [];
  const m = body.mutation;
  if (m.kind === 'create') {
    m.blocks.forEach((b, i) => checkBlock(b, `mutation.blocks.${i}`, errors));
    const total = countBlocks(m.blocks);
    if (total > Limits.affectedMax) {
      errors.push({ field: 'mutation.blocks', message: `creates ${total} blocks with their children; one create may add at most ${Limits.affectedMax}` });
    }
  } else if (m.kind === 'edit') {
    checkBlock(m.block, 'mutation.block', errors);
  } else {
    const seen = new Set<string>();
    m.blockIds.forEach((id, i) => {
      if (seen.has(id)) errors.push({ field: `mutation.blockIds.${i}`, message: `repeats block ${id}` });
      seen.add(id);
    });
  }
  if (errors.length) {
    throw new ServiceError('INVALID_REQUEST', `The mutation is not valid: ${errors[0]!.field} ${errors[0]!.message}.`, { fieldErrors: errors });
  }
  return body;
}
