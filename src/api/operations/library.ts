/**
 * The library: `POST /api/v1/library` runs one command (the body is a command discriminated by
 * `type`; the idempotency key travels in the body), and `PUT /api/v1/library/uploads/{uploadId}`
 * receives the bytes of a prepared upload.
 * @module
 */
import { ServiceError } from '../../errors.ts';
import { LIBRARY_CREATING_TYPES, scopeOfCommand } from '../../library/schemas.ts';
import type { IdempotencyReceipt } from '../../documents/types.ts';
import type { RequestContext } from '../context.ts';
import { ok } from '../envelope.ts';
import { bind } from '../bind.ts';
import { contract } from '../../contract/operations.ts';

const actorOf = (ctx: RequestContext) => ctx.credential!.actor;
/** The command's scope (the domain's rule), checked before the command runs. */
function checkScope(ctx: RequestContext, body: unknown): void {
  const needed = scopeOfCommand(body);
  if (!ctx.credential!.scopeSet.has(needed)) throw new ServiceError('FORBIDDEN', `The ${(body as { type: string }).type} command needs the scope ${needed}.`);
}

/** POST /api/v1/library */
const libraryCommand = bind(contract.libraryCommand, async (ctx, input) => {
  checkScope(ctx, input.body);
  const result = await ctx.engine.library.execute(actorOf(ctx), input.body);
  // 201 for a command that stores a new item or upload — its first application always does, and a
  // replay answers the first application's status (decisions.md, "Writes and their idempotency");
  // 200 for reads and reading-state changes.
  const created = LIBRARY_CREATING_TYPES.has(result.type);
  const { receipt, ...data } = result as typeof result & { receipt?: IdempotencyReceipt | null };
  // Where the bytes of a prepared upload go is this edge's route.
  if (data.type === 'prepare-upload') Object.assign(data, { upload: { ...data.upload, method: 'PUT', path: contract.putLibraryUpload.path.replace('{uploadId}', data.upload.uploadId) } });
  return ok(ctx, created ? 201 : 200, JSON.stringify(data), receipt ? { receipt } : {});
});

/** PUT /api/v1/library/uploads/{uploadId}: the bytes of a prepared upload. */
const putUploadBytes = bind(contract.putLibraryUpload, async (ctx, input) => {
  const received = await ctx.engine.library.putUploadBytes(actorOf(ctx), input.path.uploadId, input.bytes);
  return ok(ctx, 200, JSON.stringify(received));
});

/** The bindings of the library operations. */
export const libraryBindings = [libraryCommand, putUploadBytes];
