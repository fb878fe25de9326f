/**
 * The client's view of the operation registry: for every public operation its declaration (method,
 * path, inputs by logical name, body schema) and the schemas of its success bodies, so that inputs
 * are typed with `v.InferInput` of the body schema and results with `v.InferOutput` of the response
 * schema.
 * @remarks The registry keeps each operation's input types but publishes responses as plain
 * `ResponseDef`s, so the success schemas are named here once; a test proves this table holds exactly
 * the registry's public operations and their 2xx JSON schemas (the same objects).
 * @module
 */
import type * as v from 'valibot';
import type { ApiResult, CallOptions } from './call.ts';
import type { readPrincipal } from '../api/operations/auth.ts';
import type { createDocument, listDocuments, mutateDocument, readDocument } from '../api/operations/documents.ts';
import type { readPublicArtifact, readReview, search, submitProposal } from '../api/operations/knowledge.ts';
import type { libraryCommand, putUploadBytes } from '../api/operations/library.ts';
import type { getOpenApi } from '../api/operations/meta.ts';
import type { cancelJob, listJobs, readJob, readJobEvents, readJobReport, startJob } from '../api/operations/research.ts';
import { listOperations, type AnyOperation, type OperationDef } from '../api/registry/index.ts';
import {
  BlocksEnvelopeSchema,
  DocumentEnvelopeSchema,
  DocumentMutationEnvelopeSchema,
  DocumentPageEnvelopeSchema,
  LibraryResultEnvelopeSchema,
  ReceivedUploadEnvelopeSchema,
  PrincipalEnvelopeSchema,
  ProposalSubmissionEnvelopeSchema,
  PublicArtifactEnvelopeSchema,
  ReportEnvelopeSchema,
  ReviewEnvelopeSchema,
  SearchPageEnvelopeSchema,
  ResearchJobEnvelopeSchema,
  ResearchJobEventPageEnvelopeSchema,
  ResearchJobPageEnvelopeSchema,
} from '../api/response-schemas.ts';

/** Every public operation: `def` its declaration, `ok` the schema of its JSON success body. */
export interface OperationTypes {
  getAuth: { def: typeof readPrincipal; ok: typeof PrincipalEnvelopeSchema };
  listDocuments: { def: typeof listDocuments; ok: typeof DocumentPageEnvelopeSchema };
  createDocument: { def: typeof createDocument; ok: typeof DocumentEnvelopeSchema };
  getDocument: { def: typeof readDocument; ok: typeof DocumentEnvelopeSchema | typeof BlocksEnvelopeSchema };
  mutateDocument: { def: typeof mutateDocument; ok: typeof DocumentMutationEnvelopeSchema };
  listResearchJobs: { def: typeof listJobs; ok: typeof ResearchJobPageEnvelopeSchema };
  startResearchJob: { def: typeof startJob; ok: typeof ResearchJobEnvelopeSchema };
  getResearchJob: { def: typeof readJob; ok: typeof ResearchJobEnvelopeSchema };
  listResearchJobEvents: { def: typeof readJobEvents; ok: typeof ResearchJobEventPageEnvelopeSchema };
  cancelResearchJob: { def: typeof cancelJob; ok: typeof ResearchJobEnvelopeSchema };
  getResearchJobReport: { def: typeof readJobReport; ok: typeof ReportEnvelopeSchema };
  submitProposal: { def: typeof submitProposal; ok: typeof ProposalSubmissionEnvelopeSchema };
  getPublicArtifact: { def: typeof readPublicArtifact; ok: typeof PublicArtifactEnvelopeSchema };
  getReview: { def: typeof readReview; ok: typeof ReviewEnvelopeSchema };
  search: { def: typeof search; ok: typeof SearchPageEnvelopeSchema };
  libraryCommand: { def: typeof libraryCommand; ok: typeof LibraryResultEnvelopeSchema };
  putLibraryUpload: { def: typeof putUploadBytes; ok: typeof ReceivedUploadEnvelopeSchema };
  getOpenApi: { def: typeof getOpenApi; ok: v.GenericSchema<unknown> };
}

/** The operationId of a public operation. */
export type OperationId = keyof OperationTypes;

/** The success body schemas of each operation (a union lists its members), at run time. */
export const SUCCESS_SCHEMAS: { readonly [K in OperationId]: readonly v.GenericSchema[] } = {
  getAuth: [PrincipalEnvelopeSchema],
  listDocuments: [DocumentPageEnvelopeSchema],
  createDocument: [DocumentEnvelopeSchema],
  getDocument: [DocumentEnvelopeSchema, BlocksEnvelopeSchema],
  mutateDocument: [DocumentMutationEnvelopeSchema],
  listResearchJobs: [ResearchJobPageEnvelopeSchema],
  startResearchJob: [ResearchJobEnvelopeSchema],
  getResearchJob: [ResearchJobEnvelopeSchema],
  listResearchJobEvents: [ResearchJobEventPageEnvelopeSchema],
  cancelResearchJob: [ResearchJobEnvelopeSchema],
  getResearchJobReport: [ReportEnvelopeSchema],
  submitProposal: [ProposalSubmissionEnvelopeSchema],
  getPublicArtifact: [PublicArtifactEnvelopeSchema],
  getReview: [ReviewEnvelopeSchema],
  search: [SearchPageEnvelopeSchema],
  libraryCommand: [LibraryResultEnvelopeSchema],
  putLibraryUpload: [ReceivedUploadEnvelopeSchema],
  getOpenApi: [],
};

/** The public operations of the registry by operationId. */
export function publicOperations(): ReadonlyMap<string, AnyOperation> {
  return new Map(listOperations().filter((op) => op.audience === 'public').map((op) => [op.operationId, op]));
}

type InputOf<K extends OperationId> = OperationTypes[K]['def'] extends OperationDef<infer I> ? I : never;
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** A query value: what the URL carries (numbers and booleans are written in decimal / as words). */
export type QueryValue = string | number | boolean;

type PathPart<I> = I extends { path: infer P } ? { path: { [N in keyof P]: string } } : unknown;
type QueryPart<I> = I extends { query: infer Q } ? { query?: { [N in keyof Q]?: QueryValue | undefined } } : unknown;
type HeaderPart<I> = I extends { headers: infer H }
  ? Exclude<keyof H, 'idempotencyKey'> extends never
    ? unknown
    : { headers?: { [N in Exclude<keyof H, 'idempotencyKey'>]?: string | undefined } }
  : unknown;
type KeyPart<I> = I extends { headers: { idempotencyKey: unknown } }
  ? {
      /** The idempotency key of this intent; default a fresh one per call (every retry of the call reuses it). */
      idempotencyKey?: string;
    }
  : unknown;
type BodyPart<I> = I extends { body: { schema: infer S } } ? (S extends v.GenericSchema ? { body: v.InferInput<S> } : unknown) : unknown;
type BytesPart<I> = I extends { bytes: object } ? { /** The raw request body (sent as application/octet-stream). */ bytes: Uint8Array } : unknown;

/** The typed input of an operation: path parameters, query values, headers by logical name, the JSON body or raw bytes. */
export type CallInput<K extends OperationId> = Simplify<
  PathPart<InputOf<K>> & QueryPart<InputOf<K>> & HeaderPart<InputOf<K>> & KeyPart<InputOf<K>> & BodyPart<InputOf<K>> & BytesPart<InputOf<K>>
>;

/** The parsed JSON success body of an operation. */
export type SuccessBody<K extends OperationId> = v.InferOutput<OperationTypes[K]['ok']>;

/** The method of one operation on the client. */
export type OperationMethod<K extends OperationId> = {} extends CallInput<K>
  ? (input?: CallInput<K>, options?: CallOptions) => Promise<ApiResult<SuccessBody<K>>>
  : (input: CallInput<K>, options?: CallOptions) => Promise<ApiResult<SuccessBody<K>>>;
