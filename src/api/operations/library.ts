/**
 * The library: `POST /api/v1/library` runs one command (the body is a command discriminated by
 * `type`; the idempotency key travels in the body), and `PUT /api/v1/library/uploads/{uploadId}`
 * receives the bytes of a prepared upload.
 * @module
 */
import { ServiceError } from '../../errors.ts';
import { LIBRARY_CREATING_TYPES, LibraryPatterns, scopeOfCommand } from '../../library/schemas.ts';
import { MAX_UPLOAD_BODY } from '../../limits.ts';
import type { IdempotencyReceipt } from '../../documents/types.ts';
import type { RequestContext } from '../context.ts';
import { ok } from '../envelope.ts';
import { defineOperation } from '../registry/operation.ts';
import { pathId } from '../registry/params.ts';
import { LibraryCommandSchema } from '../../library/schemas.ts';
import { LibraryResultEnvelopeSchema, ReceivedUploadEnvelopeSchema } from '../response-schemas.ts';

const actorOf = (ctx: RequestContext) => ctx.credential!.actor;
/** The command's scope (the domain's rule), checked before the command runs. */
function checkScope(ctx: RequestContext, body: unknown): void {
  const needed = scopeOfCommand(body);
  if (!ctx.credential!.scopeSet.has(needed)) throw new ServiceError('FORBIDDEN', `The ${(body as { type: string }).type} command needs the scope ${needed}.`);
}

/** POST /api/v1/library */
export const libraryCommand = defineOperation({
  operationId: 'libraryCommand',
  method: 'POST',
  path: '/api/v1/library',
  audience: 'public',
  tag: 'library',
  summary: 'Run a library command',
  description:
    'Saves links (captured in the background), reads items and their capture state, returns reader pages, keeps highlights, notes and reading state, and prepares and finishes file uploads. The body is a command discriminated by type; writes carry idempotencyKey (16-256 characters, no control characters) in the body (optional for set-reading-state, which expectedRevision guards): a retry returns the same item. library:write, or library:read for list, get and reader-page.',
  auth: 'bearer',
  anyScopes: ['library:read', 'library:write'],
  charge: 'before',
  input: { body: { schema: LibraryCommandSchema, component: 'LibraryCommand' } },
  responses: {
    200: { description: 'The command result: a read, a retried write, or a reading-state change.', json: LibraryResultEnvelopeSchema },
    201: { description: 'A new item or upload was stored.', json: LibraryResultEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: bad command; a selection that does not match the saved text (nothing stored).' },
    404: { description: 'NOT_FOUND: unknown item, source or upload.' },
    409: { description: 'IDEMPOTENCY_CONFLICT: the key is bound to another command; CONFLICT: the current state does not allow the command.' },
    412: { description: 'PRECONDITION_FAILED: set-reading-state with a stale expectedRevision (the item is unchanged).' },
  },
  async run(ctx, input) {
    checkScope(ctx, input.body);
    const result = await ctx.engine.library.execute(actorOf(ctx), input.body);
    // 201 when this call stored a new item or upload; 200 for reads, retries and reading-state changes.
    const created = LIBRARY_CREATING_TYPES.has(result.type) && 'created' in result && result.created;
    const { receipt, ...data } = result as typeof result & { receipt?: IdempotencyReceipt | null };
    // Where the bytes of a prepared upload go is this edge's route.
    if (data.type === 'prepare-upload') Object.assign(data, { upload: { ...data.upload, method: 'PUT', path: putUploadBytes.path.replace('{uploadId}', data.upload.uploadId) } });
    return ok(ctx, created ? 201 : 200, JSON.stringify(data), receipt ? { receipt } : {});
  },
});

/** PUT /api/v1/library/uploads/{uploadId}: the bytes of a prepared upload. */
export const putUploadBytes = defineOperation({
  operationId: 'putLibraryUpload',
  method: 'PUT',
  path: '/api/v1/library/uploads/{uploadId}',
  audience: 'public',
  tag: 'library',
  summary: 'Send the bytes of a prepared upload',
  description:
    'The second of three steps: prepare-upload says where and how much; this PUT sends the bytes; finish-upload checks what arrived (size, optional sha256) and decides by content (PDF and saved HTML are captured; EPUB and anything else are refused).',
  auth: 'bearer',
  allScopes: ['library:write'],
  charge: 'before',
  input: {
    path: { uploadId: pathId(LibraryPatterns.uploadId, 'The uploadId that prepare-upload returned.') },
    bytes: { description: 'The file, exactly as it should be stored.', maxBytes: MAX_UPLOAD_BODY },
  },
  responses: {
    200: { description: 'The bytes were received: their size and SHA-256.', json: ReceivedUploadEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: more bytes than prepared, or over the upload limit.' },
    404: { description: 'NOT_FOUND: unknown or expired upload, or one of another account.' },
    409: { description: 'CONFLICT: the upload was already finished.' },
  },
  async run(ctx, input) {
    const received = await ctx.engine.library.putUploadBytes(actorOf(ctx), input.path.uploadId, input.bytes);
    return ok(ctx, 200, JSON.stringify(received));
  },
});

/** The library operations. */
export const libraryOperations = [libraryCommand, putUploadBytes];
