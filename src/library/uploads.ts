/**
 * Two-step file uploads: prepare-upload says where and how to send the bytes, the edge hands them to
 * {@link putUploadBytes}, finish-upload checks what arrived and decides by content. PDFs and saved
 * HTML become sources captured like links; EPUB and everything else is refused.
 * @module
 */
import type { PendingUpload, ReceivedUpload } from './result-schemas.ts';
import { isoTimestamp } from '../clock.ts';
import type { Actor } from '../deps.ts';
import { ServiceError, invalid, notFound } from '../errors.ts';
import type { StoredRecord } from '../ports.ts';
import type { WriteReceipt } from '../idempotency/idempotency.ts';
import { idempotent, loadItem, mintId, type LibraryContext } from './context.ts';
import { Collections, accountKey, itemPutOp, jobPutOp, toLibraryItem, type ItemRecord, type LibraryItem, type UploadRecord } from './records.ts';
import type { FinishUploadCommand, PrepareUploadCommand } from './schemas.ts';
import { decodeBase64, encodeBase64 } from './base64.ts';

/** Bytes content detection looks at (magic numbers and the opening markup are at the start). */
const SNIFF_BYTES = 64 * 1024;

/** Declared media types prepare-upload accepts (the content is checked again at finish). */
const DECLARED_TYPES = new Set(['application/pdf', 'text/html', 'application/xhtml+xml']);

export type { PendingUpload, PreparedUpload, ReceivedUpload } from './result-schemas.ts';


function view(u: UploadRecord): PendingUpload {
  return { uploadId: u.uploadId, byteLength: u.byteLength, expiresAt: isoTimestamp(u.expiresAt) };
}

async function loadUpload(ctx: LibraryContext, actor: Actor, uploadId: string): Promise<StoredRecord<UploadRecord>> {
  const stored = await ctx.deps.storage.getRecord<UploadRecord>(Collections.uploads, accountKey(actor.accountId, uploadId));
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
  const { answer, created, receipt } = await idempotent(
    ctx,
    actor,
    command,
    async () => {
      const now = ctx.deps.clock.now();
      const upload: UploadRecord = {
        uploadId: mintId(ctx, 'lupl'), accountId: actor.accountId, fileName: command.fileName, contentType: type, byteLength: command.byteLength,
        createdAt: now, expiresAt: now + ctx.uploads.ttlMs, state: 'awaiting-bytes', receivedBytes: null, sha256: null, itemId: null,
      };
      return { ops: [{ kind: 'record.put', collection: Collections.uploads, key: accountKey(actor.accountId, upload.uploadId), value: upload, expectedRevision: null }], result: upload.uploadId };
    },
    async (uploadId) => view((await loadUpload(ctx, actor, uploadId)).value),
  );
  return { upload: answer, created, receipt };
}

/**
 * Store the bytes of a prepared upload. A repeated PUT before finish replaces them.
 * @remarks Refused: unknown upload (404), an expired or finished one (409), more bytes than declared (400).
 */
export async function putUploadBytes(ctx: LibraryContext, actor: Actor, uploadId: string, bytes: Uint8Array): Promise<ReceivedUpload> {
  const stored = await loadUpload(ctx, actor, uploadId);
  const u = stored.value;
  if (u.state === 'finished') throw new ServiceError('CONFLICT', `Upload ${uploadId} is already finished; prepare a new upload to send another file.`);
  if (ctx.deps.clock.now() > u.expiresAt) throw new ServiceError('CONFLICT', `Upload ${uploadId} expired at ${isoTimestamp(u.expiresAt)}; prepare a new upload.`);
  if (bytes.length > u.byteLength) {
    throw invalid(`The body has ${bytes.length} bytes, more than the ${u.byteLength} declared by prepare-upload.`, [{ field: 'body', message: `must be exactly ${u.byteLength} bytes` }]);
  }
  const sha256 = ctx.deps.sha256(bytes);
  const next: UploadRecord = { ...u, state: 'received', receivedBytes: bytes.length, sha256 };
  await ctx.deps.storage.commit([
    { kind: 'record.put', collection: Collections.blobs, key: accountKey(actor.accountId, uploadId), value: { base64: encodeBase64(bytes) } },
    { kind: 'record.put', collection: Collections.uploads, key: stored.key, value: next, expectedRevision: stored.revision },
  ]);
  return { uploadId, receivedBytes: bytes.length, sha256 };
}

/** finish-upload: check size and checksum, decide by content, and create the source item. */
export async function finishUpload(ctx: LibraryContext, actor: Actor, command: FinishUploadCommand): Promise<{ item: LibraryItem; created: boolean; receipt: WriteReceipt | null }> {
  const apply = async () => {
    const stored = await loadUpload(ctx, actor, command.uploadId);
    const u = stored.value;
    const field = (name: string, message: string, text: string) => invalid(text, [{ field: name, message }]);
    if (u.state === 'received' && ctx.deps.clock.now() > u.expiresAt) {
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
    const blob = await ctx.deps.storage.getRecord<{ base64: string }>(Collections.blobs, accountKey(actor.accountId, u.uploadId));
    if (!blob) throw field('uploadId', 'has no bytes stored', `Upload ${u.uploadId} has no stored bytes; PUT them again.`);
    const detected = await extractor.detect(decodeBase64(blob.value.base64, SNIFF_BYTES));
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
        { kind: 'record.put' as const, collection: Collections.uploads, key: stored.key, value: finished, expectedRevision: stored.revision },
      ],
      result: item.itemId,
      after: () => ctx.queue.offer(accountKey(actor.accountId, item.itemId)),
    };
  };
  const { answer, created, receipt } = await idempotent(ctx, actor, command, apply, async (itemId) => toLibraryItem(await loadItem(ctx, actor, itemId)));
  return { item: answer, created, receipt };
}
