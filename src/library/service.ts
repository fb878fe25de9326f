/**
 * The link library: `createLibraryService(deps, options)` runs library commands for an actor and
 * captures saved links in a bounded background queue.
 * @remarks The edge checks the scope of each command with {@link requiredScope} and wraps the plain
 * results. Items are private to the actor's account.
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import type { Actor } from '../actor.ts';
import { ServiceError } from '../errors.ts';
import { MAX_UPLOAD_BODY } from '../limits.ts';
import type { LibraryAnswer } from './result-schemas.ts';
import type { RecordPage } from '../ports.ts';
import { IdempotencyStore } from '../idempotency/idempotency.ts';
import { parseOrThrow } from '../validation.ts';
import type { Extractor, Fetcher } from './capture-port.ts';
import { CaptureQueue } from './capture-queue.ts';
import { runCaptureJob } from './capture-runner.ts';
import { idempotent, loadItem, mintId, type LibraryContext } from './context.ts';
import { createNote, highlight, recapture, setReadingState } from './item-writes.ts';
import { decodeListCursor, encodeListCursor } from './list-cursor.ts';
import { loadSource, readerPage } from './reader-page.ts';
import { LibraryCollections, PENDING_PARTITION, itemPutOp, jobPutOp, toLibraryItem, type ItemRecord } from './records.ts';
import { LibraryCommandSchema, requiredScope, commandTarget, type LibraryCommand, type ListCommand, type SaveLinkCommand } from './schemas.ts';
import { finishUpload, prepareUpload, putUploadBytes, type ReceivedUpload } from './uploads.ts';
import { memoryUploadSpool, type UploadSpool } from './upload-spool.ts';
import { KeyedLock } from '../keyed-lock.ts';
import { sweepUploads, type SweepReport } from './upload-upkeep.ts';

export { requiredScope };

/** Options of {@link createLibraryService}; every limit has a default. */
export interface LibraryOptions {
  /** Brings pages over the network (adapters/capture `nodeFetcher`); without one, link captures fail `not-configured`. */
  fetcher?: Fetcher | null;
  /** Reads HTML and PDF (adapters/capture `contentExtractor`); without one, nothing is captured. */
  extractor?: Extractor | null;
  /** Allow captures of private, loopback, link-local … addresses (`--capture-allow-private`). Default false. */
  captureAllowPrivate?: boolean;
  /** Captures at once (default 4) and job keys held in memory (default 256). */
  concurrency?: number;
  queueSize?: number;
  /** Bytes of a fetched page kept (default 5 MiB), whole-fetch time (default 15 s), redirects (default 5). */
  maxPageBytes?: number;
  fetchTimeoutMs?: number;
  maxRedirects?: number;
  /** Readable text kept per capture, in UTF-16 code units (default 1,000,000). */
  maxTextLength?: number;
  /** Largest upload (default 20 MiB) and how long a prepared upload stays open (default 1 h). */
  maxUploadBytes?: number;
  uploadTtlMs?: number;
  /**
   * Where upload bytes wait from their PUT until their capture has run (default: {@link memoryUploadSpool};
   * the dev server passes adapters/lowdb `fileUploadSpool` beside its lowdb data).
   */
  uploadSpool?: UploadSpool;
  /** Unfinished uploads one credential may hold at once (default 4) and their declared bytes together (default 40 MiB). */
  maxOpenUploads?: number;
  maxOpenUploadBytes?: number;
  /** How often expired uploads are swept (ms, default 60,000); also swept at start, orphans included. */
  uploadSweepMs?: number;
  /** Called with unexpected background errors (a storage failure during capture). Default: console.error. */
  onError?: (error: unknown) => void;
  /** How long a command's idempotency key replays it (ms); default 24 hours, as for every write. */
  idempotencyRetentionMs?: number | undefined;
  /** The engine's one idempotency store; default: a store of its own. */
  idempotency?: IdempotencyStore | undefined;
  /** Resume pending captures right away (default true). */
  autoStart?: boolean;
}

export type { LibraryAnswer, LibraryResult } from './result-schemas.ts';

/** The library service. */
export interface LibraryService {
  /** Validate and run one command (an unparsed body). Throws ServiceError on every refusal. */
  execute(actor: Actor, command: unknown): Promise<LibraryAnswer>;
  /**
   * Store the bytes of a prepared upload (the edge calls this for its upload route with the body as
   * it arrives); they go to the upload spool chunk by chunk.
   */
  putUploadBytes(actor: Actor, uploadId: string, bytes: Uint8Array | AsyncIterable<Uint8Array>): Promise<ReceivedUpload>;
  /** Expire unfinished uploads past their time now (the library also does it every `uploadSweepMs`). */
  sweepUploads(): Promise<SweepReport>;
  /** Resume pending captures (called by the constructor unless `autoStart` is false). */
  start(): void;
  /** Resolves when no capture is queued, running or pending in storage. */
  idle(): Promise<void>;
  /** Capture jobs held in memory now (waiting plus running); at most `queueSize + concurrency`. */
  heldJobs(): number;
  /** Abort running captures and stop; pending captures resume on the next start. */
  close(): Promise<void>;
}

async function saveLink(ctx: LibraryContext, actor: Actor, command: SaveLinkCommand) {
  return idempotent(
    ctx,
    actor,
    command,
    async () => {
      const now = ctx.deps.clock.now();
      const item: ItemRecord = {
        itemId: mintId(ctx, 'litm'),
        accountId: actor.accountId,
        kind: 'source',
        createdAt: now,
        updatedAt: now,
        read: false,
        archived: false,
        url: new URL(command.url).href,
        origin: 'link',
        title: null,
        capture: { state: 'pending', reason: null, captureId: null, representationId: null, format: null, capturedAt: null },
      };
      const job = { accountId: actor.accountId, itemId: item.itemId, enqueuedAt: now };
      return { ops: [itemPutOp(item, null), jobPutOp(job)], result: item.itemId, after: () => ctx.queue.offer(`${actor.accountId}\u0000${item.itemId}`) };
    },
    async (itemId) => toLibraryItem(await loadItem(ctx, actor, itemId)),
  );
}

async function list(ctx: LibraryContext, actor: Actor, command: ListCommand) {
  const credential = actor.credentialRef ?? '';
  const after = command.cursor === undefined ? null : decodeListCursor(credential, command.cursor);
  const page = await ctx.deps.storage.listPage<ItemRecord>(LibraryCollections.items, actor.accountId, command.limit ?? 20, after);
  return { items: page.records.map(toLibraryItem), nextCursor: page.next === null ? null : encodeListCursor(credential, page.next) };
}

async function run(ctx: LibraryContext, actor: Actor, command: LibraryCommand): Promise<LibraryAnswer> {
  switch (command.type) {
    case 'save-link': {
      const { answer, created, receipt } = await saveLink(ctx, actor, command);
      return { type: command.type, item: answer, created, receipt };
    }
    case 'list':
      return { type: 'list', ...(await list(ctx, actor, command)) };
    case 'get': {
      const target = commandTarget(command);
      const stored = target.role === 'sourceId' ? await loadSource(ctx, actor, target.id) : await loadItem(ctx, actor, target.id);
      return { type: 'get', item: toLibraryItem(stored) };
    }
    case 'reader-page':
      return { type: 'reader-page', page: await readerPage(ctx, actor, command.sourceId) };
    case 'highlight':
      return { type: command.type, ...(await highlight(ctx, actor, command)) };
    case 'create-note':
      return { type: command.type, ...(await createNote(ctx, actor, command)) };
    case 'set-reading-state':
      return { type: command.type, ...(await setReadingState(ctx, actor, command)) };
    case 'prepare-upload':
      return { type: command.type, ...(await prepareUpload(ctx, actor, command)) };
    case 'finish-upload':
      return { type: command.type, ...(await finishUpload(ctx, actor, command)) };
    case 'recapture':
      return { type: command.type, ...(await recapture(ctx, actor, command)) };
    case 'prepare-import':
      throw new ServiceError(
        'FORBIDDEN',
        'Library imports run only under an operator migration plan: the operator sets up a migration plan for the account and runs the import. No ordinary credential can start one; ask the operator.',
      );
  }
}

/**
 * Build the library over the engine's dependencies.
 * @example
 * const library = createLibraryService(deps, { fetcher: nodeFetcher(), extractor: contentExtractor() });
 * const { item } = await library.execute(actor, { type: 'save-link', url: 'https://example.org/a', idempotencyKey: 'save-0000000000000001' });
 */
export function createLibraryService(deps: EngineDeps, options: LibraryOptions = {}): LibraryService {
  const onError = options.onError ?? ((e: unknown) => console.error('library capture:', e));
  const spool = options.uploadSpool ?? memoryUploadSpool();
  const capture = {
    deps,
    spool,
    fetcher: options.fetcher ?? null,
    extractor: options.extractor ?? null,
    settings: {
      allowPrivate: options.captureAllowPrivate ?? false,
      maxBytes: options.maxPageBytes ?? 5 * 1024 * 1024,
      timeoutMs: options.fetchTimeoutMs ?? 15_000,
      maxRedirects: options.maxRedirects ?? 5,
      maxTextLength: options.maxTextLength ?? 1_000_000,
    },
  };
  const refill = async (room: number, known: ReadonlySet<string>) => {
    const keys: string[] = [];
    let after: string | null = null;
    do {
      const page: RecordPage = await deps.storage.listPage(LibraryCollections.jobs, PENDING_PARTITION, Math.min(1000, room + known.size), after);
      for (const r of page.records) if (!known.has(r.key) && keys.length < room) keys.push(r.key);
      after = page.next;
    } while (after !== null && keys.length < room);
    return keys;
  };
  const queue = new CaptureQueue((key, signal) => runCaptureJob(capture, key, signal), refill, {
    concurrency: options.concurrency ?? 4,
    queueSize: options.queueSize ?? 256,
  }, onError);
  const ctx: LibraryContext = {
    deps,
    idem: options.idempotency ?? new IdempotencyStore(deps.storage, deps.clock, { retentionMs: options.idempotencyRetentionMs, onError: deps.reportError }),
    capture,
    queue,
    uploadsReady: Promise.resolve(),
    uploading: new Set(),
    uploadLocks: new KeyedLock(),
    uploads: {
      spool,
      maxBytes: options.maxUploadBytes ?? MAX_UPLOAD_BODY,
      maxOpenUploads: options.maxOpenUploads ?? 4,
      maxOpenUploadBytes: options.maxOpenUploadBytes ?? 40 * 1024 * 1024,
      ttlMs: options.uploadTtlMs ?? 3_600_000,
    },
  };
  let started = false;
  let sweeping: Promise<unknown> = Promise.resolve();
  let sweepTimer: ReturnType<typeof setInterval> | null = null;
  const sweep = (orphans: boolean) => {
    const run = sweeping.then(() => sweepUploads(ctx, { orphans }));
    sweeping = run.catch((e: unknown) => onError(e));
    return run;
  };
  const service: LibraryService = {
    async execute(actor, input) {
      // The library belongs to the account: a document-bound credential crosses its boundary here.
      if (actor.documentRef !== null) {
        throw new ServiceError('FORBIDDEN', 'The library belongs to the account: a document-bound credential cannot use it; use an account-wide credential.');
      }
      const command = parseOrThrow(LibraryCommandSchema, input, 'library command');
      return run(ctx, actor, command);
    },
    putUploadBytes(actor, uploadId, bytes) {
      if (actor.documentRef !== null) {
        return Promise.reject(new ServiceError('FORBIDDEN', 'The library belongs to the account: a document-bound credential cannot use it; use an account-wide credential.'));
      }
      return putUploadBytes(ctx, actor, uploadId, bytes);
    },
    sweepUploads: () => sweep(false),
    start() {
      if (started) return;
      started = true;
      // Uploads left by an earlier process: expired ones and orphaned bytes go before any PUT starts.
      ctx.uploadsReady = sweep(true).then(
        () => {},
        () => {},
      );
      sweepTimer = setInterval(() => void sweep(false).catch(() => {}), options.uploadSweepMs ?? 60_000);
      // Node: the sweep alone never keeps a process alive.
      (sweepTimer as { unref?: () => void }).unref?.();
      queue.start();
    },
    idle: () => queue.idle(),
    heldJobs: () => queue.size,
    async close() {
      if (sweepTimer) clearInterval(sweepTimer);
      await queue.close();
      await sweeping;
    },
  };
  if (options.autoStart ?? true) service.start();
  return service;
}
