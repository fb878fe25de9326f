/**
 * The documents service: create, read, mutate and list documents over the storage port. This file
 * wires the parts and runs each write through the one write protocol (src/idempotency).
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import type { Actor } from '../actor.ts';
import { ServiceError, isServiceError } from '../errors.ts';
import { IdempotencyStore, replayedReceipt, requireIdempotencyKey, writeScope, type IdempotencyRecord } from '../idempotency/idempotency.ts';
import { parseOrThrow } from '../validation.ts';
import { visibleHead, visibleHeadAndUpdates, visibleTo } from './access.ts';
import { documentTopic, isStorageConflict, type DocumentHead, type StoredUpdate } from '../ports.ts';
import { DocumentCache, type Loaded } from './cache.ts';
import { Compactor } from './compaction.ts';
import type { DocumentsContext } from './context.ts';
import { createNewDocument, type CreateResult } from './create.ts';
import { FoldedHistory } from './history.ts';
import { importEditorBlocks } from './import-editor-blocks.ts';
import { planEditorBlocks } from './editor-plan.ts';
import { KeyedLock } from '../keyed-lock.ts';
import { requireFormat } from './limits.ts';
import { listDocumentPage } from './list.ts';
import { applyMutation, requireIfRevision, type MutationJob, type StoredReceipt } from './mutate.ts';
import { requestJson } from './mutation-request.ts';
import { DocumentCreateRequestSchema } from './schemas.ts';
import type { CreateOutcome, DocumentRead, DocumentView, DocumentsService, MutationOutcome } from './types.ts';
import { validateMutation } from './validate-mutation.ts';
import { VersionRegistry } from './versions.ts';
import { represent, revisionOf, viewOf } from './view.ts';

export { revisionOf } from './view.ts';

/** Tuning of the documents service. */
export interface DocumentsOptions {
  /** How many documents stay loaded in memory (least recently used are dropped). Default 256. */
  cacheSize?: number;
  /**
   * Compact a document's log into its snapshot once the log outweighs the snapshot and holds at least
   * this many bytes (default 256 KiB), or after `compactEvery` updates (default 4096), whichever first.
   * @remarks Encoding a snapshot costs time proportional to the document; tying it to the log's size
   * keeps its amortised cost per mutation small, while replay on load stays bounded. A compaction
   * also keeps the stretch of log it folds while receipts of its versions replay (the idempotency
   * retention), and rebuilds the document on a fresh Yjs history (a new `generation` of its stored
   * head) once the history outweighs the content, so that neither heap nor snapshot grows with
   * the number of edits.
   */
  compactEveryBytes?: number;
  compactEvery?: number;
  /** How long an idempotency record replays (ms); default 24 hours. After it the key is a new intent. */
  idempotencyRetentionMs?: number | undefined;
  /** The engine's one idempotency store (shared by every domain, one expiry sweep); default: a store of its own. */
  idempotency?: IdempotencyStore | undefined;
}

/** The documents service plus lifecycle hooks for the engine. */
export interface DocumentsServiceImpl extends DocumentsService {
  /** Wait for background work (compactions, expiry sweeps) to finish. */
  flush(): Promise<void>;
}

/** Create the documents service over the engine's dependencies. */
export function createDocumentsService(deps: EngineDeps, options: DocumentsOptions = {}): DocumentsServiceImpl {
  const locks = new KeyedLock();
  const cache = new DocumentCache(deps.storage, options.cacheSize ?? 256, (ref) => locks.busy(ref));
  // Appends of other processes sharing the storage, carried by their notifications: a cached
  // document takes them (applied on its next use), so this process's next edit of it starts from its
  // cache instead of reading the head and the log (one round trip each).
  deps.storage.subscribeAppends?.((head, update) => cache.offer(head, update));
  const idem = options.idempotency ?? new IdempotencyStore(deps.storage, deps.clock, { retentionMs: options.idempotencyRetentionMs, onError: deps.reportError });
  // Folded stretches of logs are kept as long as the receipts that may ask for their versions' hashes.
  const history = new FoldedHistory(deps.storage, deps.clock, idem.retentionMs, deps.reportError);
  const compactor = new Compactor(deps.storage, cache, locks, {
    compactEvery: options.compactEvery ?? 4096,
    compactEveryBytes: options.compactEveryBytes ?? 256 * 1024,
  }, history, deps.reportError);
  const versions = new VersionRegistry(deps.storage, cache, history, deps.sha256);
  const ctx: DocumentsContext = { deps, cache, locks, idem, compactor, versions };

  /**
   * Run `read` on the committed state of a document.
   * @remarks A mutation holds the document's lock from applying to its tree until its commit is
   * durable; meanwhile the tree is ahead of the head, so a reader that finds the lock held waits for
   * it and loads again. Everything after the load is synchronous, so nothing interleaves.
   */
  async function committed<T>(actor: Actor, documentRef: string, read: (loaded: Loaded) => T): Promise<T> {
    const head = await visibleHead(deps.storage, actor, documentRef);
    const loaded = cache.cachedAt(documentRef, head) ?? (await cache.loadAt(actor, documentRef, head));
    // After the wait the cached document holds every commit up to `head` (read after the request
    // arrived) or later ones of this process; a mutation that failed dropped it (then it is loaded).
    if (locks.busy(documentRef)) return locks.run(documentRef, async () => read(cache.cachedAt(documentRef, head) ?? (await cache.loadAt(actor, documentRef, head))));
    return read(loaded);
  }

  const shared = deps.storage.sharedByProcesses === true;
  /**
   * The head a mutation may start from without reading storage (a round trip per edit on a shared
   * database): this process's cached document, when it is visible to the actor and at or past the
   * request's revision. The commit is a compare-and-set, so a write another process made since
   * fails it (the mutation then reads the head and applies once more); a cached document past the
   * request's revision answers 412 at once (versions only grow). Null: read the head. Only on a
   * storage shared by processes; in-process the read costs nothing and the cache is always current.
   */
  function cachedHeadFor(actor: Actor, documentRef: string, ifRevision: string): DocumentHead | null {
    if (!shared) return null;
    const cached = cache.peek(documentRef);
    if (cached === undefined) return null;
    const head = cache.latestHead(cached);
    if (!visibleTo(actor, head)) return null;
    const dot = ifRevision.lastIndexOf('.');
    const sameDocument = ifRevision.slice(0, dot) === revisionOf(documentRef, 0).slice(0, -2);
    return !sameDocument || Number(ifRevision.slice(dot + 1)) <= head.version ? head : null;
  }

  /**
   * The stored head a mutation starts from, and — when this process holds the document at an older
   * version of a storage shared by processes — the updates since, read with it (one round trip).
   */
  async function headToApplyAt(actor: Actor, documentRef: string): Promise<{ head: DocumentHead; updates: StoredUpdate[] | null }> {
    const cached = shared ? cache.peek(documentRef) : undefined;
    if (cached === undefined) return { head: await visibleHead(deps.storage, actor, documentRef), updates: null };
    return visibleHeadAndUpdates(deps.storage, actor, documentRef, cache.latestHead(cached).version);
  }

  const committedView = (actor: Actor, documentRef: string): Promise<DocumentView> =>
    committed(actor, documentRef, (loaded) => viewOf(loaded, deps));

  const replayCreate = async (actor: Actor, record: IdempotencyRecord<CreateResult>): Promise<CreateOutcome> => {
    const document = await committedView({ ...actor, documentRef: null }, record.result.documentRef);
    return { document, idempotency: replayedReceipt(record) };
  };

  const replayMutation = async (actor: Actor, documentRef: string, record: IdempotencyRecord<StoredReceipt>): Promise<MutationOutcome> => {
    const document = await committedView(actor, documentRef);
    const stored = record.result;
    const receipt = { ...stored, contentSha256: await versions.hashOf(documentRef, stored.resultingVersion, stored.contentSha256) };
    return { document, receipt, idempotency: replayedReceipt(record) };
  };

  return {
    async create(actor, input): Promise<CreateOutcome> {
      if (actor.documentRef !== null) {
        throw new ServiceError('FORBIDDEN', 'A document-bound credential cannot create documents; use an account-wide credential.');
      }
      const key = requireIdempotencyKey(input.idempotencyKey);
      const body = parseOrThrow(DocumentCreateRequestSchema, input.body);
      const scope = writeScope('document.create', actor.accountId, key);
      const initial = input.editorBlocks === undefined ? [] : importEditorBlocks(input.editorBlocks, deps.refs.blockId);
      const editor = input.editorBlocks === undefined ? '' : `\n${JSON.stringify(input.editorBlocks)}`;
      const fingerprint = deps.sha256(`create\n${JSON.stringify(body)}${editor}`);
      const job = { accountId: actor.accountId, title: body.title, scope, fingerprint, initial };
      return idem.run(scope, fingerprint, () => createNewDocument(ctx, job), (r: IdempotencyRecord<CreateResult>) => replayCreate(actor, r));
    },

    async head(actor, documentRef) {
      const head = await visibleHead(deps.storage, actor, documentRef);
      return { revision: revisionOf(head.documentRef, head.version), version: head.version };
    },

    // One implementation behind the overloads: the result's format is the checked format.
    read: (async (actor: Actor, documentRef: string, format?: string): Promise<DocumentRead> => {
      const checked = requireFormat(format);
      return committed(actor, documentRef, (loaded) => represent(loaded, checked, deps));
    }) as DocumentsService['read'],

    async mutate(actor, documentRef, input): Promise<MutationOutcome> {
      const key = requireIdempotencyKey(input.idempotencyKey);
      const ifRevision = requireIfRevision(input.ifRevision);
      const body = validateMutation(input.body);
      // Boundary first: a key must not reveal anything about documents outside it.
      const cachedHead = cachedHeadFor(actor, documentRef, ifRevision);
      const { head, updates } = cachedHead !== null ? { head: cachedHead, updates: null } : await headToApplyAt(actor, documentRef);
      const scope = writeScope('document.mutate', actor.accountId, key);
      const fingerprint = deps.sha256(`mutation\n${documentRef}\n${ifRevision}\n${requestJson(body)}`);
      const job: MutationJob = { actor, documentRef, head, ifRevision, mutation: body.mutation, scope, fingerprint, updates };
      const apply = () =>
        locks.run(documentRef, () => applyMutation(ctx, job)).catch(async (error: unknown) => {
          // Started from the cached head, and another process wrote the document since (or rebuilt it):
          // read the head and apply once more (a stale revision then answers 412 as usual).
          if (cachedHead === null || !(isServiceError(error) && error.code === 'PRECONDITION_FAILED' && isStorageConflict(error.cause))) throw error;
          const fresh = await visibleHead(deps.storage, actor, documentRef);
          return locks.run(documentRef, () => applyMutation(ctx, { ...job, head: fresh }));
        });
      // Optimistic: the append is a compare-and-set, so a racing duplicate loses it and replays (see IdempotencyStore).
      return idem.run(scope, fingerprint, apply, (r: IdempotencyRecord<StoredReceipt>) => replayMutation(actor, documentRef, r), 'optimistic');
    },

    async commitEditorBlocks(actor, documentRef, input): Promise<MutationOutcome | null> {
      const key = requireIdempotencyKey(input.idempotencyKey);
      const ifRevision = requireIfRevision(input.ifRevision);
      const head = await visibleHead(deps.storage, actor, documentRef);
      const scope = writeScope('document.mutate', actor.accountId, key);
      const editorJson = JSON.stringify(input.editorBlocks);
      const fingerprint = deps.sha256(`editor\n${documentRef}\n${ifRevision}\n${editorJson}`);
      const planner = (tree: Parameters<typeof planEditorBlocks>[0]) => planEditorBlocks(tree, input.editorBlocks, deps.refs.blockId);
      const job: MutationJob = { actor, documentRef, head, ifRevision, mutation: null, planner, scope, fingerprint };
      const apply = () => locks.run(documentRef, () => applyMutation(ctx, job));
      // Optimistic: the append is a compare-and-set, so a racing duplicate loses it and replays (see IdempotencyStore).
      return idem.run(scope, fingerprint, apply, (r: IdempotencyRecord<StoredReceipt>) => replayMutation(actor, documentRef, r), 'optimistic');
    },

    watch: (documentRef, onChange) => deps.storage.subscribe(documentTopic(documentRef), onChange),

    list: (actor, query) => listDocumentPage(deps.storage, deps.links, (h) => versions.hashOf(h.documentRef, h.version, h.contentSha256 || null), actor, query),

    async flush() {
      await locks.idle();
      await compactor.flush();
      await idem.flush();
    },
  };
}
