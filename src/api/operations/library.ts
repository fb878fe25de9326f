/**
 * The library: `POST /api/v1/library` runs one command (the body is a command discriminated by
 * `type`; the idempotency key travels in the body), and `PUT /api/v1/library/uploads/{uploadId}`
 * receives the bytes of a prepared upload.
 * @module
 */
import { ServiceError, invalid } from '../../errors.ts';
import { requiredScope } from '../../library/service.ts';
import type { RequestContext } from '../context.ts';
import { ok } from '../envelope.ts';
import { bind } from '../bind.ts';
import { contract } from '../../contract/operations.ts';

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
const libraryCommand = bind(contract.libraryCommand, async (ctx, input) => {
  checkScope(ctx, input.body);
  const result = await ctx.engine.library.execute(actorOf(ctx), input.body);
  // 201 when this call stored a new item or upload; 200 for reads, retries and reading-state changes.
  const created = CREATING.has(result.type) && 'created' in result && result.created;
  return ok(ctx, created ? 201 : 200, JSON.stringify(result));
});

/** PUT /api/v1/library/uploads/{uploadId}: the bytes of a prepared upload. */
const putUploadBytes = bind(contract.putLibraryUpload, async (ctx, input) => {
  const received = await ctx.engine.library.putUploadBytes(actorOf(ctx), input.path.uploadId, input.bytes);
  return ok(ctx, 200, JSON.stringify(received));
});

/** The bindings of the library operations. */
export const libraryBindings = [libraryCommand, putUploadBytes];
