/**
 * How the library is stored: collections, keys, record shapes, and the public projection of an item.
 * @remarks Every key starts with the account id, so one account never reads another's records.
 * Items carry a listing index (partition = account, newest `updatedAt` first). Capture jobs carry a
 * listing index whose sort key is the inverted enqueue time, so the newest-first listing yields the
 * oldest pending job first.
 * @module
 */
import { isoTimestamp } from '../clock.ts';
import { sortKeyOfTime, type BatchOp, type RecordIndexEntry, type StoredRecord } from '../ports.ts';
import type { CaptureFailureCode } from './capture-port.ts';
import type { Selection } from './schemas.ts';
import type { LibraryItem } from './result-schemas.ts';

/** Storage collections of the library. */
export const LibraryCollections = {
  items: 'library.items',
  captures: 'library.captures',
  jobs: 'library.capture-jobs',
  uploads: 'library.uploads',
} as const;

/** The listing partition of pending capture jobs (all accounts). */
export const PENDING_PARTITION = 'pending';

/** Capture states: `pending` until the background capture ends in `ready`, `partial` or `failed`. */
export const CaptureState = { pending: 'pending', ready: 'ready', partial: 'partial', failed: 'failed' } as const;
export type CaptureState = (typeof CaptureState)[keyof typeof CaptureState];

/** Why a capture is failed or partial. */
export interface CaptureReason {
  code: CaptureFailureCode | 'truncated';
  message: string;
}

/** The capture status kept on a source item. */
export interface CaptureStatus {
  state: CaptureState;
  reason: CaptureReason | null;
  captureId: string | null;
  representationId: string | null;
  /** `html` or `pdf` once captured. */
  format: 'html' | 'pdf' | null;
  capturedAt: number | null;
}

/** A stored library item: a source (saved link or upload), a highlight or a note. */
export interface ItemRecord {
  itemId: string;
  accountId: string;
  kind: 'source' | 'highlight' | 'note';
  createdAt: number;
  updatedAt: number;
  read: boolean;
  archived: boolean;
  /** Sources: the saved URL (uploads: `upload:<uploadId>/<fileName>`). */
  url?: string;
  origin?: 'link' | 'upload';
  /** Uploads: the upload the bytes came from, and the file name given. */
  uploadId?: string;
  fileName?: string;
  title?: string | null;
  capture?: CaptureStatus;
  /** Highlights and notes: the source they belong to. */
  sourceId?: string;
  selections?: Selection[];
  markdown?: string;
}

/** One paragraph of a capture's readable text. */
export interface CaptureBlock {
  blockId: string;
  text: string;
}

/** A stored capture: the readable text of one source, in one representation. */
export interface CaptureRecord {
  captureId: string;
  representationId: string;
  sourceId: string;
  format: 'html' | 'pdf';
  url: string;
  title: string | null;
  byline: string | null;
  blocks: CaptureBlock[];
  capturedAt: number;
}

/** A durable "capture this source" job: it exists exactly while the source's capture is pending. */
export interface CaptureJobRecord {
  accountId: string;
  itemId: string;
  enqueuedAt: number;
}

/**
 * The listing partition of live uploads (all accounts): those that may still hold bytes in the
 * upload spool — unfinished ones, and finished ones until their capture has run.
 */
export const LIVE_UPLOADS_PARTITION = 'live-uploads';

/** A two-step upload. */
export interface UploadRecord {
  uploadId: string;
  accountId: string;
  /** The credential that prepared it (the unfinished-upload caps count per credential); null in-process. */
  credentialRef?: string | null;
  fileName: string;
  contentType: string;
  byteLength: number;
  createdAt: number;
  expiresAt: number;
  /**
   * `awaiting-bytes` → `received` (bytes in the spool) → `finished` (item created); `expired` when
   * it was not finished in time (its bytes are dropped; the record stays so that a retry learns why).
   */
  state: 'awaiting-bytes' | 'received' | 'finished' | 'expired';
  receivedBytes: number | null;
  sha256: string | null;
  itemId: string | null;
}


/** The storage key of an account's record. */
export function accountKey(accountId: string, id: string): string {
  return `${accountId}\u0000${id}`;
}

/** Where an item stands in its account's listing. */
export function itemIndex(item: ItemRecord): RecordIndexEntry {
  return { partition: item.accountId, sortKey: sortKeyOfTime(item.updatedAt) };
}

const MAX_TIME = 0xfffffffffffff;
/** The batch op that stores a pending capture job. */
export function jobPutOp(job: CaptureJobRecord): BatchOp {
  return {
    kind: 'record.put',
    collection: LibraryCollections.jobs,
    key: accountKey(job.accountId, job.itemId),
    value: job,
    index: { partition: PENDING_PARTITION, sortKey: sortKeyOfTime(MAX_TIME - job.enqueuedAt) },
  };
}

/**
 * The batch op that stores an upload; `live` keeps it in the {@link LIVE_UPLOADS_PARTITION} listing
 * (sorted by creation, newest first).
 */
export function uploadPutOp(upload: UploadRecord, expectedRevision: number | null | undefined, live: boolean): BatchOp {
  const op: BatchOp = { kind: 'record.put', collection: LibraryCollections.uploads, key: accountKey(upload.accountId, upload.uploadId), value: upload };
  if (expectedRevision !== undefined) op.expectedRevision = expectedRevision;
  if (live) op.index = { partition: LIVE_UPLOADS_PARTITION, sortKey: sortKeyOfTime(upload.createdAt) };
  return op;
}

/** The batch op that stores an item at a known revision (null: must not exist). */
export function itemPutOp(item: ItemRecord, expectedRevision: number | null): BatchOp {
  return { kind: 'record.put', collection: LibraryCollections.items, key: accountKey(item.accountId, item.itemId), value: item, expectedRevision, index: itemIndex(item) };
}

export type { LibraryItem } from './result-schemas.ts';

/** The public view of a stored item. */
export function toLibraryItem(stored: StoredRecord<ItemRecord>): LibraryItem {
  const r = stored.value;
  const out: LibraryItem = {
    itemId: r.itemId,
    kind: r.kind,
    revision: stored.revision,
    createdAt: isoTimestamp(r.createdAt),
    updatedAt: isoTimestamp(r.updatedAt),
    read: r.read,
    archived: r.archived,
  };
  if (r.url !== undefined) out.url = r.url;
  if (r.origin !== undefined) out.origin = r.origin;
  if (r.uploadId !== undefined) out.uploadId = r.uploadId;
  if (r.fileName !== undefined) out.fileName = r.fileName;
  if (r.title !== undefined) out.title = r.title;
  if (r.capture) out.capture = { ...r.capture, capturedAt: r.capture.capturedAt === null ? null : isoTimestamp(r.capture.capturedAt) };
  if (r.sourceId !== undefined) out.sourceId = r.sourceId;
  if (r.selections !== undefined) out.selections = r.selections;
  if (r.markdown !== undefined) out.markdown = r.markdown;
  return out;
}
