/**
 * The documents service: create, read, mutate and list documents over the storage port.
 * @module
 */
import { projectMarkdown } from '../blocks/markdown-projection.ts';
import { isGrammarBlock } from '../blocks/model.ts';
import { BlockTree, type BlockWrite } from '../blocks/tree.ts';
import { isoTimestamp } from '../clock.ts';
import type { Actor, EngineDeps } from '../deps.ts';
import { ServiceError, conflict, invalid, notFound } from '../errors.ts';
import { IdempotencyStore, requireIdempotencyKey, scopedKey, type IdempotencyRecord } from '../idempotency/idempotency.ts';
import { Patterns } from '../ids.ts';
import { freezeRecordValue, isStorageConflict, type DocumentHead } from '../ports.ts';
import { parseOrThrow } from '../validation.ts';
import { decodeCursor, encodeCursor, parseLimit } from './cursor.ts';
import { KeyedLock } from './keyed-lock.ts';
import { planMutation } from './plan.ts';
import { validateMutation } from './validate-mutation.ts';
import { flatBlocks } from './flat-blocks.ts';
import { importEditorBlocks } from './import-editor-blocks.ts';
import { DocumentCreateRequestSchema, type DocumentMutationRequest } from './schemas.ts';
import type {
  CreateOutcome,
  DocumentPage,
  DocumentRead,
  DocumentSummary,
  DocumentView,
  DocumentsService,
  FlatBlock,
  MutationOutcome,
  MutationReceipt,
} from './types.ts';

/** A document held in memory: its head and its tree at `head.version`. */
interface Loaded {
  head: DocumentHead;
  tree: BlockTree;
  /** Updates (count and bytes) logged since the stored snapshot, and the snapshot's size. */
  logCount: number;
  logBytes: number;
  snapshotBytes: number;
  view: DocumentView | null;
  blocks: FlatBlock[] | null;
  markdown: { markdown: string; losses: { blockId: string; reason: string }[] } | null;
  createdIso?: string;
  href?: string;
  /** The Service-Revision of `head`, when computed for its version. */
  revision?: { version: number; text: string };
}

/** The Service-Revision of a loaded document's current head (kept until the version changes). */
function currentRevision(loaded: Loaded): string {
  const version = loaded.head.version;
  const cached = loaded.revision;
  if (cached !== undefined && cached.version === version) return cached.text;
  const text = flatString(revisionOf(loaded.head.documentRef, version));
  loaded.revision = { version, text };
  return text;
}

/** The string as one flat sequence (it is compared and copied often; see BlockTree's flatten). */
function flatString(text: string): string {
  void Number(text);
  return text;
}

/** Transaction origins, one per mutation kind (the origin names the operation). */
const ORIGINS: Record<string, string> = { create: 'mutation:create', edit: 'mutation:edit', move: 'mutation:move', delete: 'mutation:delete' };

interface CreateResult {
  documentRef: string;
}

/** What the one application of a mutation needs (checked and parsed before the document's lock). */
interface MutationJob {
  actor: Actor;
  documentRef: string;
  /** The head read after the request arrived. */
  head: DocumentHead;
  ifRevision: string;
  mutation: DocumentMutationRequest['mutation'];
  scope: string;
  fingerprint: string;
}

/** Tuning of the documents service. */
export interface DocumentsOptions {
  /** How many documents stay loaded in memory (least recently used are dropped). Default 256. */
  cacheSize?: number;
  /**
   * Compact a document's log into its snapshot once the log outweighs the snapshot and holds at least
   * this many bytes (default 256 KiB), or after `compactEvery` updates (default 4096), whichever first.
   * @remarks Encoding a snapshot costs time proportional to the document; tying it to the log's size
   * keeps its amortised cost per mutation small, while replay on load stays bounded.
   */
  compactEveryBytes?: number;
  compactEvery?: number;
}

/** The documents service plus lifecycle hooks for the engine. */
export interface DocumentsServiceImpl extends DocumentsService {
  /** Wait for background work (compactions) to finish. */
  flush(): Promise<void>;
}

const FORMATS = new Set(['rich-json', 'blocks', 'markdown']);
/** Room left in the 2 MB response limit for the envelope and receipt around the document JSON. */
const MAX_DOCUMENT_JSON_BYTES = 2 * 1024 * 1024 - 16 * 1024;
const REVISION = /^[a-f0-9]{48}\.[1-9]\d{0,15}$/;

/** The opaque Service-Revision of a document version: unique per document and version. */
export function revisionOf(documentRef: string, version: number): string {
  return `${documentRef.slice(5)}.${version}`;
}

/** Create the documents service over the engine's dependencies. */
export function createDocumentsService(deps: EngineDeps, options: DocumentsOptions = {}): DocumentsServiceImpl {
  const { storage, clock, refs, sha256 } = deps;
  const cacheSize = options.cacheSize ?? 256;
  const compactEvery = options.compactEvery ?? 4096;
  const compactEveryBytes = options.compactEveryBytes ?? 256 * 1024;
  const dueForCompaction = (l: Loaded) =>
    l.logCount >= compactEvery || (l.logBytes >= compactEveryBytes && l.logBytes >= l.snapshotBytes);
  const cache = new Map<string, Loaded>();
  const locks = new KeyedLock();
  const idem = new IdempotencyStore(storage);
  const background = new Set<Promise<unknown>>();

  const browserHref = (ref: string) => `${deps.baseUrl}/documents/${ref}`;

  function remember(ref: string, loaded: Loaded): void {
    cache.delete(ref);
    cache.set(ref, loaded);
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value!);
  }

  function visible(actor: Actor, head: DocumentHead | null): head is DocumentHead {
    return head !== null && head.accountId === actor.accountId && (actor.documentRef === null || actor.documentRef === head.documentRef);
  }

  /** The document as this process must see it now, or NOT_FOUND when absent or outside the boundary. */
  async function load(actor: Actor, ref: string): Promise<Loaded> {
    if (!Patterns.documentRef.test(ref)) throw notFound('The document');
    const head = await storage.getDocumentHead(ref);
    if (!visible(actor, head)) throw notFound('The document');
    return cachedAt(ref, head) ?? loadAt(actor, ref, head);
  }

  /**
   * The cached document when it is at `head` (read from storage after the request arrived) or
   * beyond it (a later mutation of this process, committed since), else null.
   */
  function cachedAt(ref: string, head: DocumentHead): Loaded | null {
    const cached = cache.get(ref);
    if (cached === undefined || cached.head.version < head.version) return null;
    remember(ref, cached);
    return cached;
  }

  /** Bring the document to `head`: catch up the cached tree from the log, or load it whole. */
  async function loadAt(actor: Actor, ref: string, head: DocumentHead): Promise<Loaded> {
    const cached = cache.get(ref);
    if (cached && cached.head.version < head.version) {
      const updates = await storage.loadUpdates(ref, cached.head.version);
      if (updates && updates.length === head.version - cached.head.version && cache.get(ref) === cached && cached.head.version < head.version) {
        cached.tree.catchUp(updates.map((u) => u.update));
        cached.head = head;
        cached.view = cached.blocks = cached.markdown = null;
        cached.logCount += updates.length;
        for (const u of updates) cached.logBytes += u.update.byteLength;
        return cached;
      }
    }
    const stored = await storage.loadDocument(ref);
    if (!stored || !visible(actor, stored.head)) throw notFound('The document');
    const loaded: Loaded = {
      head: stored.head,
      tree: BlockTree.load(stored.snapshot, stored.updates.map((u) => u.update)),
      logCount: stored.updates.length,
      logBytes: stored.updates.reduce((n, u) => n + u.update.byteLength, 0),
      snapshotBytes: stored.snapshot.byteLength,
      view: null,
      blocks: null,
      markdown: null,
    };
    remember(ref, loaded);
    return loaded;
  }

  function viewOf(loaded: Loaded): DocumentView {
    if (loaded.view) return loaded.view;
    const h = loaded.head;
    loaded.view = {
      v: 1,
      documentRef: h.documentRef,
      spaceRef: h.spaceRef,
      title: h.title,
      version: h.version,
      format: 'service-rich-document',
      formatGeneration: 1,
      contentSha256: h.contentSha256,
      browserHref: (loaded.href ??= browserHref(h.documentRef)),
      documentJson: loaded.tree.json(),
      revision: currentRevision(loaded),
      createdAt: (loaded.createdIso ??= isoTimestamp(h.createdAt)),
      updatedAt: isoTimestamp(h.updatedAt),
    };
    return loaded.view;
  }

  function summaryOf(h: DocumentHead): DocumentSummary {
    return {
      v: 1,
      documentRef: h.documentRef,
      spaceRef: h.spaceRef,
      title: h.title,
      version: h.version,
      contentSha256: h.contentSha256,
      blockCount: h.blockCount,
      browserHref: browserHref(h.documentRef),
      createdAt: isoTimestamp(h.createdAt),
      updatedAt: isoTimestamp(h.updatedAt),
    };
  }

  /** The one application of a document creation. */
  async function createDocument(accountId: string, title: string, scope: string, fingerprint: string, initial: BlockWrite[]): Promise<CreateOutcome> {
    const now = clock.now();
    const documentRef = refs.documentRef();
    const tree = BlockTree.empty();
    if (initial.length) {
      tree.apply(initial, 'import');
      if (tree.jsonByteLength() > MAX_DOCUMENT_JSON_BYTES) {
        throw conflict('These editor blocks make a document larger than the 2 MB response limit; nothing was created.', 'editorBlocks');
      }
    }
    const json = tree.json();
    const head: DocumentHead = {
      documentRef,
      spaceRef: refs.spaceRef(),
      accountId,
      title,
      version: 1,
      snapshotVersion: 1,
      contentSha256: sha256(json),
      blockCount: tree.size,
      createdAt: now,
      updatedAt: now,
    };
    const receiptRef = `rcpt_${deps.ids.hex(32)}`;
    const record: IdempotencyRecord<CreateResult> = { fingerprint, receiptRef, createdAt: now, result: { documentRef } };
    const snapshot = tree.snapshot();
    await storage.commit([{ kind: 'document.create', head, snapshot }, idem.recordOp(scope, record)]);
    const loaded: Loaded = { head, tree, logCount: 0, logBytes: 0, snapshotBytes: snapshot.byteLength, view: null, blocks: null, markdown: null };
    remember(documentRef, loaded);
    return { document: viewOf(loaded), idempotency: { idempotency: 'created', receiptRef, v: 1 } };
  }

  /**
   * The one application of a mutation, under the document's lock.
   * @remarks The head read before the lock (after the request arrived) is as good as any later read
   * for the precondition: storage's compare-and-set on append catches writes made since, and a
   * cached tree newer than that head holds this process's own later commits.
   */
  async function applyMutation(job: MutationJob): Promise<MutationOutcome> {
    const { actor, documentRef, head, ifRevision, mutation, scope, fingerprint } = job;
    const loaded = cachedAt(documentRef, head) ?? (await loadAt(actor, documentRef, head));
    if (ifRevision !== currentRevision(loaded)) {
      throw new ServiceError(
        'PRECONDITION_FAILED',
        `The document is at version ${loaded.head.version}; your revision is stale. Read the current state, replan, and resend with the new revision.`,
        { requiredAction: 'refresh-resource' },
      );
    }
    const plan = planMutation(loaded.tree, mutation, refs.blockId);
    const base = loaded.head;
    const update = loaded.tree.apply(plan.writes, ORIGINS[mutation.kind] ?? `mutation:${mutation.kind}`) ?? new Uint8Array([0, 0]);
    const json = loaded.tree.json();
    if (json.length * 3 > MAX_DOCUMENT_JSON_BYTES && (json.length > MAX_DOCUMENT_JSON_BYTES || loaded.tree.jsonByteLength() > MAX_DOCUMENT_JSON_BYTES)) {
      cache.delete(documentRef); // the tree ran ahead of storage: reload it next time
      throw conflict(
        'The mutation would make the document larger than the 2 MB response limit, so it could no longer be read through the API; nothing was applied. Split the content over several documents.',
        'mutation',
      );
    }
    const now = Math.max(clock.now(), base.updatedAt);
    const newHead: DocumentHead = {
      documentRef: base.documentRef,
      spaceRef: base.spaceRef,
      accountId: base.accountId,
      title: base.title,
      version: base.version + 1,
      snapshotVersion: base.snapshotVersion,
      contentSha256: sha256(loaded.tree.jsonParts()),
      blockCount: loaded.tree.size,
      createdAt: base.createdAt,
      updatedAt: now,
    };
    const receipt: MutationReceipt = {
      v: 1,
      documentRef,
      operationRef: refs.operationRef(),
      baseVersion: base.version,
      resultingVersion: newHead.version,
      contentSha256: newHead.contentSha256,
      affectedBlockIds: plan.affectedBlockIds,
    };
    const receiptRef = `rcpt_${deps.ids.hex(32)}`;
    try {
      await storage.commit([
        { kind: 'document.append', head: newHead, update },
        // Frozen: the receipt is also returned, and an in-memory store may keep it as it is.
        idem.recordOp(scope, freezeRecordValue({ fingerprint, receiptRef, createdAt: now, result: receipt })),
      ]);
    } catch (error) {
      // The in-memory tree is ahead of storage now: drop it, storage is the truth.
      cache.delete(documentRef);
      if (isStorageConflict(error)) {
        throw new ServiceError('PRECONDITION_FAILED', 'The document changed while this mutation was applied; read it again and resend.', {
          requiredAction: 'refresh-resource',
        });
      }
      throw error;
    }
    loaded.head = newHead;
    loaded.view = loaded.blocks = loaded.markdown = null;
    loaded.logCount++;
    loaded.logBytes += update.byteLength;
    if (dueForCompaction(loaded)) compactLater(documentRef);
    return { document: viewOf(loaded), receipt, idempotency: { idempotency: 'created', receiptRef, v: 1 } };
  }

  function compactLater(ref: string): void {
    const task = locks.run(ref, async () => {
      const loaded = cache.get(ref);
      if (!loaded || !dueForCompaction(loaded)) return;
      const version = loaded.head.version;
      const snapshot = loaded.tree.snapshot();
      await storage.commit([{ kind: 'document.compact', documentRef: ref, snapshotVersion: version, snapshot }]);
      if (cache.get(ref) === loaded) {
        loaded.logCount = loaded.logBytes = 0;
        loaded.snapshotBytes = snapshot.byteLength;
      }
    });
    background.add(task);
    void task.catch(() => cache.delete(ref)).finally(() => background.delete(task));
  }

  /**
   * The committed view of a document.
   * @remarks A mutation holds the document's lock from applying to its tree until its commit is
   * durable; meanwhile the tree is ahead of the head, so a reader that finds the lock held waits for
   * it and loads again. Everything after the load is synchronous, so nothing interleaves.
   */
  async function committedView(actor: Actor, documentRef: string): Promise<DocumentView> {
    const loaded = await load(actor, documentRef);
    if (locks.busy(documentRef)) return locks.run(documentRef, async () => viewOf(await load(actor, documentRef)));
    return viewOf(loaded);
  }

  /** One representation of a loaded document (synchronous: nothing can interleave). */
  function represent(loaded: Loaded, documentRef: string, format: string): DocumentRead {
    const revision = currentRevision(loaded);
    const version = loaded.head.version;
    if (format === 'rich-json') return { format: 'rich-json', revision, version, document: viewOf(loaded) };
    // Built once per version: the grammar check walks the whole tree, so it runs only with the build.
    if (format === 'blocks') {
      if (!loaded.blocks) {
        requireGrammar(loaded.tree);
        loaded.blocks = flatBlocks(loaded.tree);
      }
      return { format: 'blocks', revision, version, documentRef, blocks: loaded.blocks };
    }
    let projection = loaded.markdown;
    if (!projection) {
      const projected = projectMarkdown(loaded.tree.walk());
      if ('outsideGrammar' in projected) {
        requireGrammar(loaded.tree);
        throw conflict('The document holds blocks outside the Markdown grammar; read it with format=rich-json.');
      }
      projection = loaded.markdown = projected;
    }
    const { markdown, losses } = projection;
    return { format: 'markdown', revision, version, documentRef, markdown, lossCount: losses.length, losses };
  }


  const service: DocumentsServiceImpl = {
    async create(actor, input): Promise<CreateOutcome> {
      if (actor.documentRef !== null) {
        throw new ServiceError('FORBIDDEN', 'A document-bound credential cannot create documents; use an account-wide credential.');
      }
      const key = requireIdempotencyKey(input.idempotencyKey);
      const body = parseOrThrow(DocumentCreateRequestSchema, input.body);
      const scope = scopedKey(actor.accountId, key);
      const initial = input.editorBlocks === undefined ? [] : importEditorBlocks(input.editorBlocks, refs.blockId);
      const fingerprint = sha256(`create\n${JSON.stringify(body)}${input.editorBlocks === undefined ? '' : `\n${JSON.stringify(input.editorBlocks)}`}`);
      for (;;) {
        const record = await idem.lookup<CreateResult>(scope, fingerprint);
        if (record) {
          const document = await committedView({ ...actor, documentRef: null }, record.result.documentRef);
          return { document, idempotency: { idempotency: 'replayed', receiptRef: record.receiptRef, v: 1 } };
        }
        if (!idem.busy(scope)) break; // else another request claimed the key while we looked
      }
      return idem.track(scope, createDocument(actor.accountId, body.title, scope, fingerprint, initial));
    },

    async head(actor, documentRef) {
      if (!Patterns.documentRef.test(documentRef)) throw notFound('The document');
      const head = await storage.getDocumentHead(documentRef);
      if (!visible(actor, head)) throw notFound('The document');
      return { revision: revisionOf(head.documentRef, head.version), version: head.version };
    },

    async read(actor, documentRef, format = 'rich-json'): Promise<DocumentRead> {
      if (!FORMATS.has(format)) {
        throw invalid('format must be rich-json, blocks or markdown.', [{ field: 'format', message: 'must be rich-json, blocks or markdown' }]);
      }
      const loaded = await load(actor, documentRef);
      if (locks.busy(documentRef)) return locks.run(documentRef, async () => represent(await load(actor, documentRef), documentRef, format));
      return represent(loaded, documentRef, format);
    },

    async mutate(actor, documentRef, input): Promise<MutationOutcome> {
      const key = requireIdempotencyKey(input.idempotencyKey);
      if (input.ifRevision === undefined || input.ifRevision === '') {
        throw new ServiceError('PRECONDITION_REQUIRED', 'This write needs a Service-If-Revision header: read the document and send back its Service-Revision.', {
          requiredAction: 'refresh-resource',
        });
      }
      const ifRevision = input.ifRevision;
      if (!REVISION.test(ifRevision)) {
        throw invalid('Service-If-Revision is not a revision this server issued; send the Service-Revision of your last read unchanged.', [
          { field: 'ifRevision', message: 'is not a valid revision' },
        ]);
      }
      const body = validateMutation(input.body);
      // Boundary first: a key must not reveal anything about documents outside it.
      if (!Patterns.documentRef.test(documentRef)) throw notFound('The document');
      const head = await storage.getDocumentHead(documentRef);
      if (!visible(actor, head)) throw notFound('The document');
      const scope = scopedKey(actor.accountId, key);
      const fingerprint = sha256(`mutation\n${documentRef}\n${ifRevision}\n${JSON.stringify(body)}`);
      for (;;) {
        const record = await idem.lookup<MutationReceipt>(scope, fingerprint);
        if (record) {
          const document = await committedView(actor, documentRef);
          return { document, receipt: record.result, idempotency: { idempotency: 'replayed', receiptRef: record.receiptRef, v: 1 } };
        }
        if (!idem.busy(scope)) break; // else another request claimed the key while we looked
      }
      const job: MutationJob = { actor, documentRef, head, ifRevision, mutation: body.mutation, scope, fingerprint };
      return idem.track(scope, locks.run(documentRef, () => applyMutation(job)));
    },

    async list(actor, query): Promise<DocumentPage> {
      const limit = parseLimit(query.limit);
      const credential = actor.credentialRef ?? '';
      const after = query.cursor === undefined ? undefined : decodeCursor('documents', credential, query.cursor);
      let heads: DocumentHead[];
      if (actor.documentRef !== null) {
        const head = await storage.getDocumentHead(actor.documentRef);
        heads = visible(actor, head) && (!after || before(head, after)) ? [head] : [];
      } else {
        heads = await storage.listDocumentHeads(actor.accountId, limit + 1, after);
      }
      const page = heads.slice(0, limit);
      const last = page[page.length - 1];
      const nextCursor =
        heads.length > limit && last ? encodeCursor('documents', credential, { updatedAt: last.updatedAt, documentRef: last.documentRef }) : null;
      return { items: page.map(summaryOf), nextCursor };
    },

    async flush() {
      await locks.idle();
      await Promise.allSettled([...background]);
    },
  };
  return service;
}

/** True when `head` sorts strictly after the cursor position (newest first, ties by ref descending). */
function before(head: DocumentHead, after: { updatedAt: number; documentRef: string }): boolean {
  return head.updatedAt < after.updatedAt || (head.updatedAt === after.updatedAt && head.documentRef < after.documentRef);
}

/** CONFLICT when the tree holds blocks outside the Markdown grammar (only rich-json can carry them). */
function requireGrammar(tree: BlockTree): void {
  const outside: string[] = [];
  for (const entry of tree.walk()) if (!isGrammarBlock(entry.rec)) outside.push(entry.id);
  if (outside.length) {
    throw conflict(
      `The document holds ${outside.length} block(s) outside the Markdown grammar (first: ${outside[0]}); read it with format=rich-json.`,
    );
  }
}
