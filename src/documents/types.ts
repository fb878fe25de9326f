/**
 * The documents service: the engine's only door to document state.
 * @module
 */
import type { Actor } from '../actor.ts';
import type { DocumentSummary, FlatBlock, MutationReceipt } from './resource-schemas.ts';

export type { DocumentSummary, FlatBlock, MutationReceipt } from './resource-schemas.ts';

/** The three read representations. */
export type DocumentFormat = 'rich-json' | 'blocks' | 'markdown';

/**
 * A document as the contract's Document resource, with the canonical `document` JSON kept as text.
 * @remarks `documentJson` is the exact text `contentSha256` was computed over; serialize the envelope
 * by splicing it in (see `documentDataJson`), never by re-stringifying a parsed copy.
 */
export interface DocumentView {
  v: 1;
  documentRef: string;
  spaceRef: string;
  title: string;
  version: number;
  format: 'service-rich-document';
  formatGeneration: 1;
  contentSha256: string;
  browserHref: string;
  documentJson: string;
  /** Opaque Service-Revision value. */
  revision: string;
  createdAt: string;
  updatedAt: string;
}

/** A Markdown loss: something of the rich document the Markdown projection cannot carry. */
export type { MarkdownLoss } from '../blocks/markdown-projection.ts';
import type { MarkdownLoss } from '../blocks/markdown-projection.ts';

/** Result of a read in any format. */
export type DocumentRead =
  | { format: 'rich-json'; revision: string; version: number; document: DocumentView }
  | { format: 'blocks'; revision: string; version: number; documentRef: string; blocks: FlatBlock[] }
  | {
      format: 'markdown';
      revision: string;
      version: number;
      documentRef: string;
      markdown: string;
      lossCount: number;
      losses: MarkdownLoss[];
    };


/** Idempotency outcome shown in the envelope's `receipt`. */
export interface IdempotencyReceipt {
  idempotency: 'created' | 'replayed';
  receiptRef: string;
  v: 1;
}

/** Result of a mutation (or its replay). */
export interface MutationOutcome {
  document: DocumentView;
  receipt: MutationReceipt;
  idempotency: IdempotencyReceipt;
}

/** Result of a document creation (or its replay). */
export interface CreateOutcome {
  document: DocumentView;
  idempotency: IdempotencyReceipt;
}

/** A page of the document list. */
export interface DocumentPage {
  items: DocumentSummary[];
  nextCursor: string | null;
}

/**
 * Document operations. Every method validates its raw input itself (so in-process callers get the
 * same errors as HTTP callers) and throws `ServiceError`s with the contract's codes.
 */
export interface DocumentsService {
  /** POST /documents. `body` is the raw parsed JSON. A document-bound actor gets FORBIDDEN. */
  /**
   * @param input.editorBlocks in-process only (not part of the HTTP contract): the `blocks` of a
   * BlockNote editor document to start from. The eight grammar types are read back as Markdown
   * blocks; any other editor block is kept verbatim, after which `blocks` and `markdown` reads
   * answer CONFLICT and only rich-json can carry the document.
   */
  create(actor: Actor, input: { idempotencyKey: string | undefined; body: unknown; editorBlocks?: unknown }): Promise<CreateOutcome>;
  /** Current revision and version, cheap (for If-None-Match). NOT_FOUND outside the boundary. */
  head(actor: Actor, documentRef: string): Promise<{ revision: string; version: number }>;
  /**
   * GET /documents/{ref}. The result's type follows the format literal: `read(actor, ref, 'markdown')`
   * is a Markdown read (`.markdown`, `.lossCount`). Any other `format` is INVALID_REQUEST.
   */
  read<F extends DocumentFormat = 'rich-json'>(actor: Actor, documentRef: string, format?: F): Promise<Extract<DocumentRead, { format: F }>>;
  /** A read whose format is only known at run time (undefined: rich-json; outside the three: INVALID_REQUEST). */
  read(actor: Actor, documentRef: string, format?: string): Promise<DocumentRead>;
  /** POST /documents/{ref}/mutations. */
  mutate(
    actor: Actor,
    documentRef: string,
    input: { idempotencyKey: string | undefined; ifRevision: string | undefined; body: unknown },
  ): Promise<MutationOutcome>;
  /**
   * Live co-editing (in-process only, not part of the HTTP contract): commit a BlockNote editor's
   * blocks as the document's next version, through the same path as a mutation (Service-If-Revision
   * precondition, one operationRef, idempotency record, change notification).
   * @param input.editorBlocks the editor's `blocks` (BlockNote JSON); only the blocks that differ
   * from the document are written, blocks it no longer holds are deleted.
   * @returns null when the editor's blocks equal the document's (no version is made).
   * @remarks PRECONDITION_FAILED when `ifRevision` is stale: merge the newer version first, then retry.
   */
  commitEditorBlocks(
    actor: Actor,
    documentRef: string,
    input: { idempotencyKey: string; ifRevision: string; editorBlocks: unknown },
  ): Promise<MutationOutcome | null>;
  /** GET /documents. `limit`: 1-50, default 20; `cursor`: the nextCursor of the prior page. */
  list(actor: Actor, query: { limit?: number | undefined; cursor?: string | undefined }): Promise<DocumentPage>;
  /**
   * Follow a document: `onChange` is called after each committed change of it (a version, a
   * compaction, its creation), in this process and — on a storage shared by processes — in the
   * others, without payload (read the document to see what changed). Several changes may come as one
   * call; none is called for a refused write.
   * @returns a function that stops following (calling it again does nothing).
   * @remarks For an edge that keeps a live copy (live co-editing, a page following versions). It
   * checks nothing about who asks: read through {@link DocumentsService.read} with an actor.
   */
  watch(documentRef: string, onChange: () => void): () => void;
}
