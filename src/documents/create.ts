/**
 * The one application of a document creation.
 * @module
 */
import { BlockTree, type BlockWrite } from '../blocks/tree.ts';
import { conflict } from '../errors.ts';
import type { IdempotencyRecord } from '../idempotency/idempotency.ts';
import type { DocumentHead } from '../ports.ts';
import { newLoaded } from './cache.ts';
import { VersionContent } from './content.ts';
import type { DocumentsContext } from './context.ts';
import { exceedsDocumentLimit } from './limits.ts';
import type { CreateOutcome } from './types.ts';
import { viewOf } from './view.ts';

/** What a creation's idempotency record keeps. */
export interface CreateResult {
  documentRef: string;
}

/** What a creation needs, checked and parsed before it is applied. */
export interface CreateJob {
  accountId: string;
  title: string;
  scope: string;
  fingerprint: string;
  initial: BlockWrite[];
}

/** Create the document and its idempotency record in one batch; the new document is cached. */
export async function createNewDocument(ctx: DocumentsContext, job: CreateJob): Promise<CreateOutcome> {
  const { clock, refs, sha256, storage, ids } = ctx.deps;
  const now = clock.now();
  const documentRef = refs.documentRef();
  const tree = BlockTree.empty();
  if (job.initial.length) {
    tree.apply(job.initial, 'import');
    if (exceedsDocumentLimit(tree)) {
      throw conflict('These editor blocks make a document larger than the 2 MB response limit; nothing was created.', 'editorBlocks');
    }
  }
  // Hashed now: a new document is small, and a stored hash serves lists and other processes.
  const content = new VersionContent(tree.jsonParts(), sha256, null, tree);
  const head: DocumentHead = {
    documentRef,
    spaceRef: refs.spaceRef(),
    accountId: job.accountId,
    title: job.title,
    version: 1,
    snapshotVersion: 1,
    generation: 0,
    contentSha256: content.sha256,
    blockCount: tree.size,
    createdAt: now,
    updatedAt: now,
  };
  const receiptRef = `rcpt_${ids.hex(32)}`;
  const record: IdempotencyRecord<CreateResult> = { fingerprint: job.fingerprint, receiptRef, createdAt: now, result: { documentRef } };
  const snapshot = tree.snapshot();
  await storage.commit([{ kind: 'document.create', head, snapshot }, ctx.idem.recordOp(job.scope, record)]);
  const loaded = newLoaded(head, tree, 0, 0, snapshot.byteLength);
  loaded.content = content;
  ctx.cache.remember(documentRef, loaded);
  return { document: viewOf(loaded, ctx.deps), idempotency: { idempotency: 'created', receiptRef, v: 1 } };
}
