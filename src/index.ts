/**
 * knowledge-workspace: the embeddable engine of the agent-facing knowledge workspace API.
 * Public exports only; storage adapters and transports have their own entry points
 * (`knowledge-workspace/adapters/memory`, `…/adapters/lowdb`, `…/transports/http`, `…/transports/inproc`,
 * and the storage conformance suite at `knowledge-workspace/testing`).
 * @module
 */
export { createEngine, type Engine, type EngineOptions } from './engine.ts';
export type { Actor, EngineDeps } from './deps.ts';
export {
  ServiceError,
  isServiceError,
  ErrorCode,
  type ApiError,
  type FieldError,
  type RequiredAction,
  type ServiceErrorOptions,
} from './errors.ts';
export { systemClock, manualClock, isoTimestamp, type Clock, type ManualClock } from './clock.ts';
export {
  Patterns,
  randomIds,
  seededIds,
  refMinter,
  type IdSource,
} from './ids.ts';
export {
  StorageConflictError,
  isStorageConflict,
  freezeRecordValue,
  type Storage,
  type BatchOp,
  type DocumentHead,
  type StoredDocument,
  type StoredUpdate,
  type StoredRecord,
  type HeadCursor,
} from './ports.ts';
export type {
  DocumentsService,
  DocumentView,
  DocumentSummary,
  DocumentRead,
  DocumentPage,
  DocumentFormat,
  FlatBlock,
  MarkdownLoss,
  MutationReceipt,
  MutationOutcome,
  CreateOutcome,
  IdempotencyReceipt,
} from './documents/types.ts';
export { documentDataJson, documentData } from './api/document-json.ts';
export { BLOCK_TYPES, type BlockType, type BlockInput } from './blocks/model.ts';
export { importBlockNote } from './blocks/blocknote-import.ts';
export { sha256Hex, type Sha256Hex } from './hash.ts';
export { createApiHandler, type ApiHandlerOptions } from './api/handler.ts';
export type { Handler, PlainRequest, PlainResponse } from './api/types.ts';
export { buildOpenApi, listOperations, defineOperation } from './api/registry/index.ts';
export type { AnyOperation, OperationDef, OperationInput, InputDef, ParamDef, HeaderDef, BodyDef, ResponseDef, Audience } from './api/registry/index.ts';
export type { ResponseEvent } from './api/handler.ts';
export type {
  ResearchRunner,
  ResearchRunContext,
  ReportInput,
  ArtifactInput,
  WaitingInput,
  FailureInput,
  SuccessInput,
  JobsService,
  JobRead,
  JobWriteResult,
} from './jobs/index.ts';
export type { ResearchJob, ResearchJobEvent, ResearchJobSummary, ResearchReportSpec } from './jobs/schemas.ts';
export type { ResearchJobPage, ResearchJobEventPage, ResearchAuditDiagnostic, PublicArtifactRef } from './jobs/schemas.ts';
export type { ProposalSink, SubmittedProposal } from './jobs/runner.ts';
export { fixtureRunner, type FixtureRunnerOptions, type ReviewOutcomes } from './jobs/fixture-runner.ts';
export type { KnowledgeService, KnowledgeOperator } from './knowledge/service.ts';
export { publishFromAcceptedProposal, type PublishInput, type PublishedArtifacts } from './knowledge/publish.ts';
export type { ProposalRequest, ProposalSubmissionResult } from './knowledge/proposal-schema.ts';
export type { LibraryService, LibraryOptions, LibraryResult, LibraryCommand, LibraryItem, ReaderPage, Fetcher, Extractor } from './library/index.ts';
export { checkAddress, type AddressVerdict } from './library/index.ts';
export type { ErrorReporter } from './deps.ts';
