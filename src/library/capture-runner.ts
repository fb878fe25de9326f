/**
 * One background capture: fetch (or read the uploaded bytes), judge, extract readable text, and
 * commit the capture, the item's new capture state and the job's removal in one batch.
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import { isStorageConflict, type BatchOp } from '../ports.ts';
import { CaptureFailure, isCaptureFailure, type Extractor, type Fetcher } from './capture-port.ts';
import {
  LibraryCollections,
  accountKey,
  itemPutOp,
  uploadPutOp,
  type CaptureJobRecord,
  type CaptureReason,
  type CaptureRecord,
  type CaptureState,
  type ItemRecord,
  type UploadRecord,
} from './records.ts';
import type { UploadSpool } from './upload-spool.ts';

/** Limits of capture (see {@link LibraryOptions}). */
export interface CaptureSettings {
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /** Most UTF-16 code units of readable text kept; longer text is cut and the capture is `partial`. */
  maxTextLength: number;
}

/** What capture needs from the library. */
export interface CaptureEnv {
  deps: EngineDeps;
  fetcher: Fetcher | null;
  extractor: Extractor | null;
  settings: CaptureSettings;
  /** Where the bytes of uploads wait for their capture. */
  spool: UploadSpool;
}

interface Outcome {
  state: Exclude<CaptureState, 'pending'>;
  reason: CaptureReason | null;
  capture: CaptureRecord | null;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/**
 * What a fetched page is: its declared type, checked against its bytes. A page that says HTML or PDF
 * (or says nothing, or octet-stream) is read as what its bytes are when they are HTML or a PDF; bytes
 * of another binary format under an HTML or PDF label, text labelled PDF, and any other declared type
 * are `unsupported-type`, naming both.
 */
async function judgeKind(extractor: Extractor, contentType: string, bytes: Uint8Array): Promise<'html' | 'pdf'> {
  const declared = HTML_TYPES.has(contentType) ? 'html' : contentType === 'application/pdf' ? 'pdf' : null;
  const open = declared !== null || contentType === '' || contentType === 'application/octet-stream';
  const said = contentType || 'of no declared type';
  if (!open) throw new CaptureFailure('unsupported-type', `The page is ${said}; only HTML and PDF are captured.`);
  const detected = await extractor.detect(bytes);
  if (detected.kind !== 'other') return detected.kind;
  // Text that is no complete HTML document (a fragment) is still read as HTML when it says so.
  if (declared === 'html' && detected.ext === null) return 'html';
  throw new CaptureFailure('unsupported-type', `The page says it is ${said}, but its bytes are ${detected.mime}; only HTML and PDF are captured.`);
}

async function bytesOf(env: CaptureEnv, item: ItemRecord, signal: AbortSignal): Promise<{ bytes: Uint8Array; kind: 'html' | 'pdf'; url: string; truncated: boolean; charset: string | null }> {
  const { extractor } = env;
  if (!extractor) throw new CaptureFailure('not-configured', 'This server has no content extractor configured, so nothing can be captured.');
  if (item.origin === 'upload') {
    const bytes = await env.spool.read(item.uploadId!);
    if (!bytes) throw new CaptureFailure('extract-failed', 'The uploaded bytes are no longer stored.');
    const detected = await extractor.detect(bytes);
    if (detected.kind === 'other') throw new CaptureFailure('unsupported-type', `The upload is ${detected.mime}; only PDF and HTML are captured.`);
    return { bytes, kind: detected.kind, url: item.url!, truncated: false, charset: null };
  }
  if (!env.fetcher) throw new CaptureFailure('not-configured', 'This server has no fetcher configured, so links cannot be captured.');
  const s = env.settings;
  const page = await env.fetcher.fetch(item.url!, { signal, allowPrivate: s.allowPrivate, maxBytes: s.maxBytes, timeoutMs: s.timeoutMs, maxRedirects: s.maxRedirects });
  if (page.status === 401 || page.status === 403) {
    throw new CaptureFailure('sign-in-required', `The page answered HTTP ${page.status}: it needs a sign-in, which capture never does.`);
  }
  if (page.status < 200 || page.status > 299) throw new CaptureFailure('http-error', `The page answered HTTP ${page.status}.`);
  const kind = await judgeKind(extractor, page.contentType, page.bytes);
  if (page.truncated && kind === 'pdf') throw new CaptureFailure('too-large', `The PDF is larger than ${s.maxBytes} bytes.`);
  return { bytes: page.bytes, kind, url: page.url, truncated: page.truncated, charset: page.charset };
}

async function capture(env: CaptureEnv, item: ItemRecord, signal: AbortSignal): Promise<Outcome> {
  const { bytes, kind, url, truncated, charset } = await bytesOf(env, item, signal);
  const text = await env.extractor!.extract(kind, bytes, url, charset, item.accountId).catch((e: unknown) => {
    throw isCaptureFailure(e) ? e : new CaptureFailure('extract-failed', `The ${kind === 'pdf' ? 'PDF' : 'page'} could not be read: ${String((e as Error)?.message ?? e)}`, { cause: e });
  });
  if (text.loginWall) throw new CaptureFailure('sign-in-required', 'The page is a sign-in form, not content; capture never signs in.');
  const blocks: CaptureRecord['blocks'] = [];
  let budget = env.settings.maxTextLength;
  let cut = truncated;
  for (const paragraph of text.paragraphs) {
    if (budget <= 0) {
      cut = true;
      break;
    }
    let t = paragraph;
    if (t.length > budget) {
      t = t.slice(0, budget);
      // Never keep half of a surrogate pair.
      if (/[\uD800-\uDBFF]$/.test(t)) t = t.slice(0, -1);
      cut = true;
    }
    budget -= t.length;
    blocks.push({ blockId: `p${blocks.length + 1}`, text: t });
  }
  if (!blocks.length) throw new CaptureFailure('extract-failed', 'No readable text was found.');
  const ids = env.deps.ids;
  return {
    state: cut ? 'partial' : 'ready',
    reason: cut ? { code: 'truncated', message: `Only the first ${truncated ? `${env.settings.maxBytes} bytes` : `${env.settings.maxTextLength} characters`} were captured.` } : null,
    capture: {
      captureId: `lcap_${ids.hex(24)}`,
      representationId: `lrep_${ids.hex(24)}`,
      sourceId: item.itemId,
      format: kind,
      url,
      title: text.title,
      byline: text.byline,
      blocks,
      capturedAt: env.deps.clock.now(),
    },
  };
}

/**
 * Run the durable capture job stored under `key`. A job whose item is gone or no longer pending is
 * dropped. An abort (the library closing) leaves the job in place for the next start.
 */
export async function runCaptureJob(env: CaptureEnv, key: string, signal: AbortSignal): Promise<void> {
  const { storage } = env.deps;
  const job = await storage.getRecord<CaptureJobRecord>(LibraryCollections.jobs, key);
  if (!job) return;
  let stored = await storage.getRecord<ItemRecord>(LibraryCollections.items, key);
  if (!stored || stored.value.capture?.state !== 'pending') {
    await storage.commit([{ kind: 'record.delete', collection: LibraryCollections.jobs, key }]);
    return;
  }
  let outcome: Outcome;
  try {
    outcome = await capture(env, stored.value, signal);
  } catch (e) {
    if (signal.aborted) return;
    const failure = isCaptureFailure(e) ? e : new CaptureFailure('extract-failed', `Capture failed: ${String((e as Error)?.message ?? e)}`, { cause: e });
    outcome = { state: 'failed', reason: { code: failure.code, message: failure.message }, capture: null };
  }
  if (signal.aborted) return;
  for (let attempt = 0; ; attempt++) {
    const item = stored.value;
    const now = env.deps.clock.now();
    const next: ItemRecord = {
      ...item,
      updatedAt: Math.max(now, item.updatedAt),
      title: outcome.capture?.title ?? item.title ?? null,
      capture: {
        state: outcome.state,
        reason: outcome.reason,
        captureId: outcome.capture?.captureId ?? null,
        representationId: outcome.capture?.representationId ?? null,
        format: outcome.capture?.format ?? null,
        capturedAt: outcome.capture ? now : null,
      },
    };
    const ops: BatchOp[] = [itemPutOp(next, stored.revision), { kind: 'record.delete', collection: LibraryCollections.jobs, key }];
    if (outcome.capture) ops.unshift({ kind: 'record.put', collection: LibraryCollections.captures, key: accountKey(item.accountId, outcome.capture.captureId), value: outcome.capture, expectedRevision: null });
    // The upload stops being live with its capture: its bytes are dropped after the commit.
    const upload = item.uploadId ? await storage.getRecord<UploadRecord>(LibraryCollections.uploads, accountKey(item.accountId, item.uploadId)) : null;
    if (upload) ops.push(uploadPutOp(upload.value, upload.revision, false));
    try {
      await storage.commit(ops);
      if (item.uploadId) await env.spool.remove(item.uploadId);
      return;
    } catch (e) {
      // A reading-state change landed meanwhile: apply the capture on top of the new revision.
      if (!isStorageConflict(e) || attempt >= 8) throw e;
      const again = await storage.getRecord<ItemRecord>(LibraryCollections.items, key);
      if (!again || again.value.capture?.state !== 'pending') {
        // Another process finished this capture first: only the job record is left to drop.
        await storage.commit([{ kind: 'record.delete', collection: LibraryCollections.jobs, key }]);
        return;
      }
      stored = again;
    }
  }
}
