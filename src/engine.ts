/**
 * The composition root: `createEngine({ storage, clock, ids })` wires the domain services over the
 * ports. Everything concrete is passed in; nothing here imports a transport or a concrete store.
 * @module
 */
import { systemClock, type Clock } from './clock.ts';
import { logErrorToConsole, type EngineDeps, type ErrorReporter } from './deps.ts';
import { createActivation, type Activation } from './auth/activation.ts';
import { createCredentialService, type CredentialService } from './auth/credentials.ts';
import { createSessionService, type SessionService } from './auth/sessions.ts';
import { createDocumentsService, type DocumentsOptions, type DocumentsServiceImpl } from './documents/service.ts';
import { sha256Hex, type Sha256Hex } from './hash.ts';
import { createKnowledgeService, type KnowledgeOperator, type KnowledgeService } from './knowledge/service.ts';
import { randomIds, refMinter, type IdSource } from './ids.ts';
import type { Extractor, Fetcher } from './library/capture-port.ts';
import { createLibraryService, type LibraryOptions, type LibraryService } from './library/service.ts';
import type { Storage } from './ports.ts';
import type { DocumentsService } from './documents/types.ts';
import { IdempotencyStore } from './idempotency/idempotency.ts';
import { createJobsService, type JobsService } from './jobs/service.ts';
import type { ResearchRunner } from './jobs/runner.ts';
import type { LeaseTiming } from './jobs/lease.ts';
import { createPublicationService, type PublicationService } from './jobs/publication.ts';
import { linksAt } from './contract/links.ts';
import { createLiveEditingService, type LiveEditingService } from './live/service.ts';

/** Options of {@link createEngine}. Only `storage` is required. */
export interface EngineOptions {
  storage: Storage;
  clock?: Clock;
  ids?: IdSource;
  sha256?: Sha256Hex;
  /** Origin for browser links, e.g. `http://127.0.0.1:8787`; default '' (relative links). */
  baseUrl?: string;
  /** Length of a credential's request-budget window; default 24 hours. */
  budgetWindowMs?: number;
  /**
   * Failed background work with no caller to report to (compactions, budget saves, a research runner
   * that throws …), with the name of the work (`compaction`, `budgets`, `job kjob_…`); default: a JSON
   * line on stderr.
   */
  onError?: ErrorReporter;
  /** How long an idempotency record replays its write (ms); default 24 hours. After it the key is a new intent. */
  idempotencyRetentionMs?: number;
  /** Tuning of the documents service: loaded-document cache size and compaction thresholds. */
  documents?: Omit<DocumentsOptions, 'idempotencyRetentionMs'>;
  /** The research runner; without one, fresh research-job starts answer FEATURE_RETIRED. */
  runner?: ResearchRunner;
  /** Lease timing of the research jobs this process runs (several processes on one storage); default 15 s lease, renewed every 5 s. */
  jobLease?: LeaseTiming;
  /** Brings pages for library captures (adapters/capture `nodeFetcher()`); without one, link captures fail. */
  fetcher?: Fetcher;
  /** Reads captured HTML and PDF (adapters/capture `contentExtractor()`); without one, nothing is captured. */
  extractor?: Extractor;
  /** Let captures fetch private, loopback and link-local addresses (`--capture-allow-private`); default false. */
  captureAllowPrivate?: boolean;
  /** Further library limits (queue sizes, fetch limits, upload limits). */
  library?: Omit<LibraryOptions, 'fetcher' | 'extractor' | 'captureAllowPrivate'>;
}

/**
 * The engine: the only door to the state. This is the type the package exports (as `Engine`);
 * inside the package {@link Engine} adds the dependencies.
 */
export interface PublicEngine {
  /**
   * The absolute URL prefix of every link the engine's answers carry (`createEngine({ baseUrl })`;
   * '' when not given): an edge mounting the API under a path checks that the links point into it.
   */
  readonly baseUrl: string;
  /** The engine's clock (`createEngine({ clock })`): an edge stamps what it records and compares expiries with it. */
  readonly clock: Clock;
  /** Report failed work that has no caller to answer, by its name (`createEngine({ onError })`). */
  readonly reportError: ErrorReporter;
  readonly documents: DocumentsService;
  readonly credentials: CredentialService;
  readonly activation: Activation;
  /** Research jobs (recovery of jobs an earlier process left running starts with the engine). */
  readonly jobs: JobsService;
  /** The link library: commands, uploads and background capture (pending captures resume with the engine). */
  readonly library: LibraryService;
  /** Proposals, the space graph, releases, public artifacts, reviews and search. */
  readonly knowledge: KnowledgeService;
  /** The operator's in-process API: review decisions, publication enablement, releases, promotion. */
  readonly operator: KnowledgeOperator;
  /** The publication of an accepted proposal in its three steps (confirm rights, release, promote). */
  readonly publication: PublicationService;
  /** The person's sign-in links and sessions (the browser app's), shared by every process on the storage. */
  readonly sessions: SessionService;
  /** Live co-editing: a document's editing session, token grant checks, rooms across processes (transports/sync serves it). */
  readonly live: LiveEditingService;
  /** Flush pending state (budgets) and close storage. */
  close(): Promise<void>;
}

/**
 * The engine as this package's own code sees it (the edge, the tests): also its dependencies and the
 * documents service's lifecycle hooks. Not exported from the package root.
 */
export interface Engine extends PublicEngine {
  readonly deps: EngineDeps;
  readonly documents: DocumentsServiceImpl;
}

/**
 * The whole engine behind a {@link PublicEngine} made by {@link createEngine}.
 * @throws TypeError for any other object.
 */
export function engineInternals(engine: PublicEngine): Engine {
  if (!('deps' in engine)) throw new TypeError('not an engine made by createEngine');
  return engine as Engine;
}

/**
 * Build an engine over a storage adapter.
 * @example
 * const engine = createEngine({ storage: memoryStorage() });
 * const { document } = await engine.documents.create(actor, { idempotencyKey, body: { v: 1, title: 'Notes' } });
 */
export function createEngine(options: EngineOptions): Engine {
  const ids = options.ids ?? randomIds;
  const deps: EngineDeps = {
    storage: options.storage,
    clock: options.clock ?? systemClock,
    ids,
    refs: refMinter(ids),
    sha256: options.sha256 ?? sha256Hex,
    links: linksAt(options.baseUrl ?? ''),
    reportError: options.onError ?? logErrorToConsole,
  };
  // One idempotency store for every domain: one retention window, one expiry sweep.
  const idempotency = new IdempotencyStore(deps.storage, deps.clock, { retentionMs: options.idempotencyRetentionMs, onError: deps.reportError });
  const documents = createDocumentsService(deps, { ...options.documents, idempotency });
  const credentials = createCredentialService(deps, { budgetWindowMs: options.budgetWindowMs ?? 24 * 3600_000, idempotency });
  const activation = createActivation(deps);
  const knowledge = createKnowledgeService(deps, { idempotency });
  const jobs = createJobsService(deps, {
    runner: options.runner ?? null,
    documents,
    proposals: knowledge,
    idempotency,
    onError: (error, jobId) => deps.reportError(error, jobId === null ? 'jobs' : `job ${jobId}`),
    lease: options.jobLease,
  });
  const library = createLibraryService(deps, {
    idempotency,
    ...options.library,
    onError: options.library?.onError ?? ((error) => deps.reportError(error, 'library capture')),
    fetcher: options.fetcher ?? null,
    extractor: options.extractor ?? null,
    captureAllowPrivate: options.captureAllowPrivate ?? false,
  });
  const publication = createPublicationService(deps, { documents, operator: knowledge.operator });
  const live = createLiveEditingService(deps, { documents, credentials });
  let closed: Promise<void> | null = null;
  return {
    deps,
    baseUrl: deps.links.baseUrl,
    clock: deps.clock,
    reportError: deps.reportError,
    documents,
    credentials,
    activation,
    jobs,
    library,
    knowledge,
    operator: knowledge.operator,
    publication,
    sessions: createSessionService(deps),
    live,
    close() {
      closed ??= (async () => {
        await library.close();
        await jobs.recovered;
        await jobs.close();
        await credentials.flush();
        await documents.flush();
        await deps.storage.close();
      })();
      return closed;
    },
  };
}
