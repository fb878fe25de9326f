/**
 * POST /api/v1/library: the library command endpoint.
 * @module
 */
import { ServiceError, invalid } from '../../errors.ts';
import { defineOperation } from '../registry/operation.ts';
import { LibraryCommandSchema, OpaqueEnvelopeSchema } from '../response-schemas.ts';
import { notBuilt } from '../unavailable.ts';

const LIBRARY_READS = new Set(['list', 'get', 'reader-page']);
const LIBRARY_WRITES = new Set(['save-link', 'highlight', 'create-note', 'set-reading-state', 'prepare-upload', 'finish-upload', 'prepare-import']);
/** Commands whose retries the contract ties to an idempotencyKey in the body. */
const LIBRARY_KEYED = new Set(['save-link', 'highlight']);

/**
 * The command envelope is checked now (a known `type`, the scope it needs — library:read for
 * list/get/reader-page, library:write otherwise — and an `idempotencyKey` of at least 16 characters
 * where the contract asks for one); the commands themselves answer 503 until the library lands. Not
 * charged while it is not built.
 */
export const libraryCommand = defineOperation({
  operationId: 'libraryCommand',
  method: 'POST',
  path: '/api/v1/library',
  audience: 'public',
  tag: 'library',
  summary: 'Run a library command',
  description:
    'Saves links, highlights, notes, reading state and file uploads; the body is a command discriminated by type. The idempotency key travels in the body as idempotencyKey (at least 16 characters). library:write, or library:read for the read commands (list, get, reader-page).',
  auth: 'bearer',
  anyScopes: ['library:read', 'library:write'],
  charge: 'never',
  input: { body: { schema: LibraryCommandSchema, component: 'LibraryCommand' } },
  responses: {
    200: { description: 'The command result.', json: OpaqueEnvelopeSchema },
    201: { description: 'A new item was stored (save-link, create-note, highlight, finish-upload).', json: OpaqueEnvelopeSchema },
    400: { description: 'INVALID_REQUEST: bad command; a selection that does not match the saved text.' },
    404: { description: 'NOT_FOUND: unknown item or source.' },
    409: { description: 'CONFLICT: the current state does not allow the command.' },
  },
  run(ctx, input) {
    const body = input.body as Record<string, unknown> | null;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw invalid('The library body is a command object with a type field.', [{ field: '$', message: 'must be an object' }]);
    }
    const type = body.type;
    if (typeof type !== 'string' || (!LIBRARY_READS.has(type) && !LIBRARY_WRITES.has(type))) {
      throw invalid(`type must be one of ${[...LIBRARY_READS, ...LIBRARY_WRITES].join(', ')}.`, [{ field: 'type', message: 'must be a known library command' }]);
    }
    const needed = LIBRARY_READS.has(type) ? 'library:read' : 'library:write';
    if (!ctx.credential!.scopeSet.has(needed)) throw new ServiceError('FORBIDDEN', `The ${type} command needs the scope ${needed}.`);
    const key = body.idempotencyKey;
    if ((LIBRARY_KEYED.has(type) || key !== undefined) && (typeof key !== 'string' || key.length < 16)) {
      throw invalid('idempotencyKey must be a string of at least 16 characters.', [{ field: 'idempotencyKey', message: 'must be a string of at least 16 characters' }]);
    }
    throw notBuilt('The link library');
  },
});

/** The library operations. */
export const libraryOperations = [libraryCommand];
