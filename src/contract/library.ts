/**
 * The contract of the library: `POST /api/v1/library` runs one command (a body discriminated by
 * `type`; the idempotency key travels in the body), `PUT /api/v1/library/uploads/{uploadId}` receives
 * the bytes of a prepared upload.
 * @module
 */
import { Patterns } from '../ids.ts';
import { LibraryCommandSchema } from '../library/schemas.ts';
import { MAX_UPLOAD_BODY } from '../limits.ts';
import { operation } from './define.ts';
import { pathId } from './params.ts';
import { LibraryResultEnvelopeSchema, ReceivedUploadEnvelopeSchema } from './response-schemas.ts';

/** POST /api/v1/library */
export const libraryCommand = operation({
  operationId: 'libraryCommand',
  method: 'POST',
  path: '/api/v1/library',
  audience: 'public',
  tag: 'library',
  summary: 'Run a library command',
  description:
    'Saves links (captured in the background), reads items and their capture state, takes a failed capture again (recapture), returns reader pages, keeps highlights, notes and reading state, and prepares and finishes file uploads. The body is a command discriminated by type; writes carry idempotencyKey (16-256 characters, no control characters) in the body (optional for set-reading-state, which expectedRevision guards): a retry returns the same item. A document-bound credential gets 403 for every command. library:write, or library:read for list, get and reader-page.',
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
});

/** PUT /api/v1/library/uploads/{uploadId}: the bytes of a prepared upload. */
export const putLibraryUpload = operation({
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
    path: { uploadId: pathId(Patterns.uploadId, 'The uploadId that prepare-upload returned.') },
    bytes: { description: 'The file, exactly as it should be stored.', maxBytes: MAX_UPLOAD_BODY },
  },
  responses: {
    200: { description: 'The bytes were received: their size and SHA-256.', json: ReceivedUploadEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: more bytes than prepared, over the upload limit, or a body cut short.' },
    404: { description: 'NOT_FOUND: unknown or expired upload, or one of another account.' },
    409: { description: 'CONFLICT: the upload was already finished or has expired, or another PUT is sending its bytes right now.' },
  },
});
