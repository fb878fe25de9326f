/**
 * Two-step file uploads: prepare-upload says where and how to send the bytes, the edge hands them to
 * {@link putUploadBytes}, finish-upload checks what arrived and decides by content. PDFs and saved
 * HTML become sources captured like links; EPUB and everything else is refused.
 * @module
 */
import type { PendingUpload, ReceivedUpload } from './result-schemas.ts';
import { isoTimestamp } from '../clock.ts';
import type { Actor } from '../actor.ts';
import { ServiceError, invalid, notFound } from '../errors.ts';
import type { StoredRecord } from '../ports.ts';
import type { WriteReceipt } from '../idempotency/idempotency.ts';
import { idempotent, loadItem, mintId, type LibraryContext } from './context.ts';
import { checkOpenUploadCaps } from './upload-upkeep.ts';
import { LibraryCollections, accountKey, itemPutOp, jobPutOp, toLibraryItem, uploadPutOp, type ItemRecord, type LibraryItem, type UploadRecord } from './records.ts';
import type { FinishUploadCommand, PrepareUploadCommand } from './schemas.ts';
import { sha256Incremental } from '../hash.ts';

/** Bytes content detection looks at (magic numbers and the opening markup are at the start). */
const SNIFF_BYTES = 64 * 1024;

/** Declared media types prepare-upload accepts (the content is checked again at finish). */
const DECLARED_TYPES = new Set(['application/pdf', 'text/html', 'application/xhtml+xml']);

export type { PendingUpload, PreparedUpload, ReceivedUpload } from './result-schemas.ts';


function view(u: UploadRecord): PendingUpload {
  return { uploadId: u.uploadId, byteLength: u.byteLength, expiresAt: isoTimestamp(u.expiresAt) };
}

async function loadUpload(ctx: LibraryContext, actor: Actor, uploadId: string): Promise<StoredRecord<UploadRecord>> {
  const stored = await ctx.deps.storage.getRecord<UploadRecord>(LibraryCollections.uploads, accountKey(actor.accountId, uploadId));
  if (!stored) throw notFound(`Upload ${uploadId}`);
  return stored;
}

/** prepare-upload: open an upload of a declared PDF or HTML file. */
export async function prepareUpload(ctx: LibraryContext, actor: Actor, command: PrepareUploadCommand): Promise<{ upload: PendingUpload; created: boolean; receipt: WriteReceipt | null }> {
  const type = command.contentType.toLowerCase();
  if (type === 'application/epub+zip') {
    throw invalid('EPUB files are not supported by the library; upload a PDF or a saved HTML page.', [{ field: 'contentType', message: 'EPUB is not supported' }]);
  }
  if (!DECLARED_TYPES.has(type)) {
    throw invalid(`Only PDF (application/pdf) and saved HTML (text/html) files can be uploaded, not ${type}.`, [{ field: 'contentType', message: 'must be application/pdf, text/html or application/xhtml+xml' }]);
  }
  if (command.byteLength > ctx.uploads.maxBytes) {
    throw invalid(`The file is larger than the ${ctx.uploads.maxBytes}-byte upload limit.`, [{ field: 'byteLength', message: `must be at most ${ctx.uploads.maxBytes}` }]);
  }
  await ctx.uploadsReady;
  // One prepare at a time per credential, so that two racing prepares cannot both pass the caps.
  const answer = await ctx.uploadLocks.run(actor.credentialRef ?? '', () =>
    idempotent(
      ctx,
      actor,
      command,
      async () => {
        await checkOpenUploadCaps(ctx, actor, command.byteLength);
        const now = ctx.deps.clock.now();
        const upload: UploadRecord = {
          uploadId: mintId(ctx, 'lupl'), accountId: actor.accountId, credentialRef: actor.credentialRef ?? null, fileName: command.fileName, contentType: type,
          byteLength: command.byteLength, createdAt: now, expiresAt: now + ctx.uploads.ttlMs, state: 'awaiting-bytes', receivedBytes: null, sha256: null, itemId: null,
        };
        return { ops: [uploadPutOp(upload, null, true)], result: upload.uploadId };
      },
      async (uploadId) => view((await loadUpload(ctx, actor, uploadId)).value),
    ),
  );
  return { upload: answer.answer, created: answer.created, receipt: answer.receipt };
}

/**
 * Store the bytes of a prepared upload, chunk by chunk into the upload spool as they arrive (never
 * the whole body at once). A repeated PUT before finish replaces them.
 * @remarks Refused: unknown upload (404), an expired or finished one, or one whose bytes are being
 * sent by another PUT right now (409), more bytes than declared (400, the bytes sent so far are dropped).
 */
export async function putUploadBytes(ctx: LibraryContext, actor: Actor, uploadId: string, body: Uint8Array | AsyncIterable<Uint8Array>): Promise<ReceivedUpload> {
  await ctx.uploadsReady;
  let stored = await loadUpload(ctx, actor, uploadId);
  const u = stored.value;
  if (u.state === 'finished') throw new ServiceError('CONFLICT', `Upload ${uploadId} is already finished; prepare a new upload to send another file.`);
  if (u.state === 'expired' || ctx.deps.clock.now() > u.expiresAt) throw new ServiceError('CONFLICT', `Upload ${uploadId} expired at ${isoTimestamp(u.expiresAt)}; prepare a new upload.`);
  if (ctx.uploading.has(uploadId)) throw new ServiceError('CONFLICT', `The bytes of upload ${uploadId} are being sent by another request; wait for it, then read the upload's state.`, { retryable: true });
  ctx.uploading.add(uploadId);
  try {
    if (u.state === 'received') {
      // The earlier bytes are about to be replaced: the record stops claiming them first.
      const reset: UploadRecord = { ...u, state: 'awaiting-bytes', receivedBytes: null, sha256: null };
      await ctx.deps.storage.commit([uploadPutOp(reset, stored.revision, true)]);
      stored = { ...stored, value: reset, revision: stored.revision + 1 };
    }
    const spool = ctx.uploads.spool;
    await spool.create(uploadId);
    const hash = sha256Incremental();
    let received = 0;
    try {
      // An in-process caller's bytes are already whole in memory: one chunk.
      for await (const chunk of body instanceof Uint8Array ? [body] : body) {
        if (received + chunk.byteLength > u.byteLength) {
          throw invalid(`The body has more than the ${u.byteLength} bytes declared by prepare-upload.`, [{ field: 'body', message: `must be exactly ${u.byteLength} bytes` }]);
        }
        received += chunk.byteLength;
        hash.update(chunk);
        await spool.append(uploadId, chunk);
      }
    } catch (e) {
      await spool.remove(uploadId);
      throw e;
    }
    const sha256 = hash.hex();
    const next: UploadRecord = { ...stored.value, state: 'received', receivedBytes: received, sha256 };
    await ctx.deps.storage.commit([uploadPutOp(next, stored.revision, true)]);
    return { uploadId, receivedBytes: received, sha256 };
  } finally {
    ctx.uploading.delete(uploadId);
  }
}

/** finish-upload: check size and checksum, decide by content, and create the source item. */
export async function finishUpload(ctx: LibraryContext, actor: Actor, command: FinishUploadCommand): Promise<{ item: LibraryItem; created: boolean; receipt: WriteReceipt | null }> {
  const apply = async () => {
    const stored = await loadUpload(ctx, actor, command.uploadId);
    const u = stored.value;
    const field = (name: string, message: string, text: string) => invalid(text, [{ field: name, message }]);
    if (u.state === 'expired' || (u.state === 'received' && ctx.deps.clock.now() > u.expiresAt)) {
      throw new ServiceError('CONFLICT', `Upload ${u.uploadId} expired at ${isoTimestamp(u.expiresAt)}; prepare a new upload.`, { fieldErrors: [{ field: 'uploadId', message: 'has expired' }] });
    }
    if (u.state !== 'received') throw field('uploadId', 'has no bytes yet', `Upload ${u.uploadId} has received no bytes; PUT them to its path first.`);
    if (u.receivedBytes !== u.byteLength) {
      throw field('uploadId', `received ${u.receivedBytes} of ${u.byteLength} bytes`, `Upload ${u.uploadId} received ${u.receivedBytes} bytes but ${u.byteLength} were declared; PUT the whole file again.`);
    }
    if (command.sha256 !== undefined && command.sha256 !== u.sha256) {
      throw field('sha256', 'does not match the received bytes', `The received bytes have SHA-256 ${u.sha256}, not ${command.sha256}; PUT the file again.`);
    }
    const extractor = ctx.capture.extractor;
    if (!extractor) throw new ServiceError('TEMPORARILY_UNAVAILABLE', 'This server has no content extractor configured, so uploads cannot be checked.');
    const head = await ctx.uploads.spool.read(u.uploadId, SNIFF_BYTES);
    if (!head) throw field('uploadId', 'has no bytes stored', `Upload ${u.uploadId} has no stored bytes; PUT them again.`);
    const detected = await extractor.detect(head);
    if (detected.kind === 'other') {
      const what = detected.ext === 'epub' ? 'an EPUB book, which the library does not support' : `${detected.mime}, which the library does not capture`;
      throw field('uploadId', `content is ${detected.ext ?? detected.mime}, not PDF or HTML`, `The uploaded file is ${what}; upload a PDF or a saved HTML page.`);
    }
    const now = ctx.deps.clock.now();
    const item: ItemRecord = {
      itemId: mintId(ctx, 'litm'), accountId: actor.accountId, kind: 'source', createdAt: now, updatedAt: now, read: false, archived: false,
      url: `upload:${u.uploadId}/${encodeURIComponent(u.fileName)}`, origin: 'upload', uploadId: u.uploadId, fileName: u.fileName, title: null,
      capture: { state: 'pending', reason: null, captureId: null, representationId: null, format: null, capturedAt: null },
    };
    const finished: UploadRecord = { ...u, state: 'finished', itemId: item.itemId };
    return {
      ops: [
        itemPutOp(item, null),
        jobPutOp({ accountId: actor.accountId, itemId: item.itemId, enqueuedAt: now }),
        // Still live: its bytes stay in the spool until the capture has read them.
        uploadPutOp(finished, stored.revision, true),
      ],
      result: item.itemId,
      after: () => ctx.queue.offer(accountKey(actor.accountId, item.itemId)),
    };
  };
  const { answer, created, receipt } = await idempotent(ctx, actor, command, apply, async (itemId) => toLibraryItem(await loadItem(ctx, actor, itemId)));
  return { item: answer, created, receipt };
}
