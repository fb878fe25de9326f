/**
 * The library: `POST /api/v1/library` runs one command (the body is a command discriminated by
 * `type`; the idempotency key travels in the body), and `PUT /api/v1/library/uploads/{uploadId}`
 * receives the bytes of a prepared upload.
 * @module
 */
import { ServiceError, invalid } from '../../errors.ts';
import { requiredScope } from '../../library/service.ts';
import { LibraryPatterns } from '../../library/schemas.ts';
import { MAX_UPLOAD_BODY } from '../../limits.ts';
import type { RequestContext } from '../context.ts';
import { ok } from '../envelope.ts';
import { defineOperation } from '../registry/operation.ts';
import { pathId } from '../registry/params.ts';
import { LibraryCommandSchema } from '../../library/schemas.ts';
import { LibraryResultEnvelopeSchema, ReceivedUploadEnvelopeSchema } from '../response-schemas.ts';

const actorOf = (ctx: RequestContext) => ctx.credential!.actor;
/** Commands whose first application stores a new item or upload. */
const CREATING: ReadonlySet<string> = new Set(['save-link', 'highlight', 'create-note', 'prepare-upload', 'finish-upload']);

/** The command's scope, checked before the command runs (library:read to read, library:write otherwise). */
function checkScope(ctx: RequestContext, body: unknown): void {
  const type = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { type?: unknown }).type : undefined;
  if (typeof type !== 'string') throw invalid('The library body is a command object with a type field.', [{ field: 'type', message: 'is required' }]);
  const needed = requiredScope(type);
  if (!ctx.credential!.scopeSet.has(needed)) throw new ServiceError('FORBIDDEN', `The ${type} command needs the scope ${needed}.`);
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
    'Saves links (captured in the background), reads items and their capture state, takes a failed capture again (recapture), returns reader pages, keeps highlights, notes and reading state, and prepares and finishes file uploads. The body is a command discriminated by type; writes carry idempotencyKey (16-128 characters) in the body: a retry returns the same item. library:write, or library:read for list, get and reader-page.',
  auth: 'bearer',
  anyScopes: ['library:read', 'library:write'],
  charge: 'before',
  input: { body: { schema: LibraryCommandSchema, component: 'LibraryCommand' } },
  responses: {
    200: { description: 'The command result: a read, a retried write, or a reading-state change.', json: LibraryResultEnvelopeSchema },
    201: { description: 'A new item or upload was stored.', json: LibraryResultEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: bad command; a selection that does not match the saved text (nothing stored).' },
    404: { description: 'NOT_FOUND: unknown item, source or upload.' },
    409: { description: 'IDEMPOTENCY_CONFLICT: the key is bound to another command; CONFLICT: the current state does not allow the command (recapture of a capture that has not failed; prepare-upload past the unfinished-upload caps of the credential).' },
    412: { description: 'PRECONDITION_FAILED: set-reading-state with a stale expectedRevision (the item is unchanged).' },
  },
  async run(ctx, input) {
    checkScope(ctx, input.body);
    const result = await ctx.engine.library.execute(actorOf(ctx), input.body);
    // 201 when this call stored a new item or upload; 200 for reads, retries and reading-state changes.
    const created = CREATING.has(result.type) && 'created' in result && result.created;
    return ok(ctx, created ? 201 : 200, JSON.stringify(result));
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
    400: { description: 'INVALID_REQUEST: more bytes than prepared, over the upload limit, or a body cut short.' },
    404: { description: 'NOT_FOUND: unknown or expired upload, or one of another account.' },
    409: { description: 'CONFLICT: the upload was already finished or has expired, or another PUT is sending its bytes right now.' },
  },
  async run(ctx, input) {
    const received = await ctx.engine.library.putUploadBytes(actorOf(ctx), input.path.uploadId, input.bytes);
    return ok(ctx, 200, JSON.stringify(received));
  },
});

/** The library operations. */
export const libraryOperations = [libraryCommand, putUploadBytes];
