/**
 * knowledge-workspace: the embeddable engine of the agent-facing knowledge workspace API.
 * The root exports the engine (and what configures it), the HTTP handler, the errors and the port
 * types: the storage port, the research runner, the library's fetcher and extractor, the clock and id
 * sources. The contract (every operation as data) and the OpenAPI helpers are at
 * `knowledge-workspace/contract`; the storage port in full (batch ops, heads, conflicts, change
 * topics: what an adapter's author writes against) at `knowledge-workspace/ports`; storage adapters
 * and transports have their own entry points (`knowledge-workspace/adapters/memory`,
 * `…/adapters/lowdb`, `…/transports/http`, `…/transports/inproc`, and the storage conformance suite
 * at `knowledge-workspace/testing`).
 * @module
 */
import { createEngine as createWholeEngine, type EngineOptions, type PublicEngine } from './engine.ts';

/** The engine: the only door to the state. */
export type Engine = PublicEngine;
export type { EngineOptions } from './engine.ts';

/**
 * Build an engine over a storage adapter.
 * @example
 * const engine = createEngine({ storage: memoryStorage() });
 * const { document } = await engine.documents.create(actor, { idempotencyKey, body: { v: 1, title: 'Notes' } });
 * const md = await engine.documents.read(actor, document.documentRef, 'markdown'); // md.markdown, md.lossCount
 */
export const createEngine: (options: EngineOptions) => Engine = createWholeEngine;

// The handler
export { createApiHandler, type ApiHandlerOptions, type ResponseEvent } from './api/handler.ts';
export type { Handler, PlainRequest, PlainResponse } from './api/types.ts';

// Errors
export {
  ServiceError,
  isServiceError,
  StorageUnavailableError,
  isStorageUnavailable,
  ErrorCode,
  type ApiError,
  type FieldError,
  type RequiredAction,
  type ServiceErrorOptions,
} from './errors.ts';

// Ports: storage, clock and ids, hashing, background errors. What a storage adapter's author needs
// beyond `Storage` (batch ops, heads, conflicts, change topics) is the subpath `knowledge-workspace/ports`.
export type { Storage } from './ports.ts';
export { manualClock, type Clock, type ManualClock } from './clock.ts';
export { seededIds, type IdSource } from './ids.ts';
export type { Sha256Hex } from './hash.ts';
export type { Actor } from './actor.ts';
export type { ErrorReporter } from './deps.ts';

// Ports: the research runner and the library's fetcher and extractor
export type { ResearchRunner, ResearchRunContext, ReportInput, ArtifactInput, WaitingInput, FailureInput, SuccessInput } from './jobs/index.ts';
export type { ProposalSink, SubmittedProposal } from './jobs/runner.ts';
export type { Fetcher, Extractor } from './library/index.ts';

// The engine's services (what they answer is typed through them)
export type { DocumentsService, DocumentView, DocumentRead, DocumentFormat } from './documents/types.ts';
export type { JobsService } from './jobs/index.ts';
export { fixtureRunner, type FixtureRunnerOptions, type ReviewOutcomes } from './jobs/fixture-runner.ts';
export type { KnowledgeService, KnowledgeOperator } from './knowledge/service.ts';
export type { LibraryService, UploadSpool } from './library/index.ts';
