/**
 * Mutations: the checks of a mutation request, and its one application under the document's lock.
 * @module
 */
import type { Actor } from '../actor.ts';
import { ServiceError, conflict, invalid } from '../errors.ts';
import { freezeRecordValue, isStorageConflict, type DocumentHead, type StoredUpdate } from '../ports.ts';
import { advance } from './cache.ts';
import { VersionContent } from './content.ts';
import type { DocumentsContext } from './context.ts';
import { exceedsDocumentLimit } from './limits.ts';
import { planMutation, type MutationPlan } from './plan.ts';
import type { BlockTree } from '../blocks/tree.ts';
import type { DocumentMutationRequest } from './schemas.ts';
import type { MutationOutcome, MutationReceipt } from './types.ts';
import { currentRevision, defineContentSha256, viewOf } from './view.ts';

/**
 * A receipt as its idempotency record keeps it: `contentSha256` is null when nobody had read the
 * version's hash by the commit (it is derived on replay, see `VersionRegistry.hashOf`).
 */
export type StoredReceipt = Omit<MutationReceipt, 'contentSha256'> & { contentSha256: string | null };

const REVISION = /^[a-f0-9]{48}\.[1-9]\d{0,15}$/;

/** Transaction origins, one per mutation kind (the origin names the operation). */
const ORIGINS: Record<string, string> = { create: 'mutation:create', edit: 'mutation:edit', move: 'mutation:move', delete: 'mutation:delete' };

/** The `ifRevision` precondition: PRECONDITION_REQUIRED when absent, INVALID_REQUEST when not one we issue. */
export function requireIfRevision(ifRevision: string | undefined): string {
  if (ifRevision === undefined || ifRevision === '') {
    throw new ServiceError('PRECONDITION_REQUIRED', 'This write needs ifRevision: read the document and send back the revision it answered.', {
      requiredAction: 'refresh-resource',
    });
  }
  if (!REVISION.test(ifRevision)) {
    throw invalid('ifRevision is not a revision this server issued; send the revision of your last read unchanged.', [
      { field: 'ifRevision', message: 'is not a valid revision' },
    ]);
  }
  return ifRevision;
}

/** What the one application of a mutation needs (checked and parsed before the document's lock). */
export type MutationJob = MutationJobBase & ({ mutation: DocumentMutationRequest['mutation']; planner?: undefined } | EditorPlanner);

/** An editor commit's planner, in place of a mutation. */
export interface EditorPlanner {
  mutation: null;
  /**
   * Plans the writes (an editor's blocks, see `planEditorBlocks`); the transaction origin is
   * `editor`. A plan without writes commits nothing (see {@link applyMutation}).
   */
  planner: (tree: BlockTree) => MutationPlan;
}

/** The fields of every {@link MutationJob}. */
export interface MutationJobBase {
  actor: Actor;
  documentRef: string;
  /** The head read after the request arrived. */
  head: DocumentHead;
  /** Updates read together with `head`, up to it (null: none read). */
  updates?: StoredUpdate[] | null;
  ifRevision: string;
  scope: string;
  fingerprint: string;
}

function staleRevision(version: number): ServiceError {
  return new ServiceError(
    'PRECONDITION_FAILED',
    `The document is at version ${version}; your revision is stale. Read the current state, replan, and resend with the new revision.`,
    { requiredAction: 'refresh-resource' },
  );
}

/**
 * The one application of a mutation, under the document's lock.
 * @remarks The head read before the lock (after the request arrived) is as good as any later read
 * for the precondition: storage's compare-and-set on append catches writes made since, and a
 * cached tree newer than that head holds this process's own later commits.
 */
export async function applyMutation(ctx: DocumentsContext, job: MutationJobBase & { mutation: DocumentMutationRequest['mutation'] }): Promise<MutationOutcome>;
export async function applyMutation(ctx: DocumentsContext, job: MutationJob): Promise<MutationOutcome | null>;
/** @returns null when a `planner`'s plan has no writes (nothing committed, no version). */
export async function applyMutation(ctx: DocumentsContext, job: MutationJob): Promise<MutationOutcome | null> {
  const { deps, cache } = ctx;
  const { actor, documentRef, head, ifRevision, mutation, scope, fingerprint } = job;
  cache.settle(documentRef); // this mutation holds the document's lock: nothing of this process is ahead
  const loaded = cache.cachedAt(documentRef, head) ?? (await cache.loadAt(actor, documentRef, head, job.updates ?? null));
  if (ifRevision !== currentRevision(loaded)) throw staleRevision(loaded.head.version);
  const plan = mutation === null ? job.planner!(loaded.tree) : planMutation(loaded.tree, mutation, deps.refs.blockId);
  if (mutation === null && plan.writes.length === 0) return null;
  const base = loaded.head;
  const origin = mutation === null ? 'editor' : (ORIGINS[mutation.kind] ?? `mutation:${mutation.kind}`);
  const update = loaded.tree.apply(plan.writes, origin) ?? new Uint8Array([0, 0]);
  if (exceedsDocumentLimit(loaded.tree)) {
    cache.drop(documentRef); // the tree ran ahead of storage: reload it next time
    throw conflict(
      'The mutation would make the document larger than the 2 MB response limit, so it could no longer be read through the API; nothing was applied. Split the content over several documents.',
      'mutation',
    );
  }
  // The version's text and hash are left to the first reader: only its pieces are kept.
  const content = new VersionContent(loaded.tree.jsonParts(), deps.sha256, null, loaded.tree);
  const now = Math.max(deps.clock.now(), base.updatedAt);
  const newHead: DocumentHead = {
    documentRef: base.documentRef,
    spaceRef: base.spaceRef,
    accountId: base.accountId,
    title: base.title,
    version: base.version + 1,
    snapshotVersion: base.snapshotVersion,
    generation: base.generation, // the storage rejects the append if the document was rebuilt since
    contentSha256: '', // not computed yet: readers derive it (see VersionRegistry.hashOf)
    blockCount: loaded.tree.size,
    createdAt: base.createdAt,
    updatedAt: now,
  };
  const operationRef = deps.refs.operationRef();
  const { affectedBlockIds } = plan;
  const resultingVersion = newHead.version;
  const receipt = defineContentSha256({ v: 1, documentRef, operationRef, baseVersion: base.version, resultingVersion }, content) as MutationReceipt;
  receipt.affectedBlockIds = affectedBlockIds;
  const stored: StoredReceipt = { v: 1, documentRef, operationRef, baseVersion: base.version, resultingVersion, contentSha256: null, affectedBlockIds };
  const receiptRef = `rcpt_${deps.ids.hex(32)}`;
  try {
    await deps.storage.commit([
      { kind: 'document.append', head: newHead, update },
      // Frozen: an in-memory store may keep it as it is.
      ctx.idem.recordOp(scope, freezeRecordValue({ fingerprint, receiptRef, createdAt: now, result: stored })),
    ]);
  } catch (error) {
    // The in-memory tree is ahead of storage now: drop it, storage is the truth.
    cache.drop(documentRef);
    if (isStorageConflict(error)) {
      throw new ServiceError('PRECONDITION_FAILED', 'The document changed while this mutation was applied; read it again and resend.', {
        requiredAction: 'refresh-resource',
        cause: error,
      });
    }
    throw error;
  }
  advance(loaded, newHead, 1, update.byteLength, content);
  if (ctx.compactor.due(loaded)) ctx.compactor.later(documentRef);
  return { document: viewOf(loaded, deps), receipt, idempotency: { idempotency: 'created', receiptRef, v: 1 } };
}
