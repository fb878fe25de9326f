/**
 * The options and the handle of a worker host (see host.ts).
 * @module
 */
import type { MessagePort } from 'node:worker_threads';
import type { Handler } from '../../src/api/types.ts';

/** Options of {@link startWorkerHost}. */
export interface WorkerHostOptions {
  /** The module the worker imports; it exports `createWorkerHandler(options, context)` (see protocol.ts). */
  module: string | URL;
  /** Passed to `createWorkerHandler` unchanged; must be structured-cloneable (e.g. `{ storage: 'lowdb', dir, operatorKey }`). */
  options?: unknown;
  /** Restart the worker after a crash; default true. */
  restart?: boolean;
  /** Retry-After of the 503 answers given while the worker is down; default 1000 ms. */
  retryAfterMs?: number;
  /** How long a request waits for a (re)starting worker before it gets 503; default 10 s. */
  readyTimeoutMs?: number;
  /** How long {@link WorkerHost.close} waits for the engine to flush before terminating; default 10 s. */
  closeTimeoutMs?: number;
  /**
   * Called before each (re)start: ports to transfer to the new worker, by name; its factory gets them
   * as `context.ports`. E.g. `() => ({ storage: storageServer.connect() })` to share one storage.
   */
  ports?: () => Record<string, MessagePort>;
  /** Allow {@link WorkerHost.crashForTest}; default false. */
  testHooks?: boolean;
  /** Told about each crash and restart (for logs). */
  onEvent?: (event: WorkerHostEvent) => void;
}

/** What {@link WorkerHostOptions.onEvent} receives. */
export type WorkerHostEvent =
  | { kind: 'crash'; generation: number; exitCode: number; failedRequests: number }
  | { kind: 'restarted'; generation: number }
  | { kind: 'restart-failed'; generation: number; message: string };

/** A running worker host. */
export interface WorkerHost {
  /** The API handler; every call crosses to the worker. */
  handler: Handler;
  /** A fetch over {@link handler} (like transports/inproc's `createFetch`). */
  fetch: typeof fetch;
  /** The current worker's generation (0, then +1 per restart) and the crash count. */
  stats(): { generation: number; crashes: number; inFlight: number };
  /** Resolves once the current worker answers requests. */
  ready(): Promise<void>;
  /** Test hook: the worker calls `process.exit(exitCode)` at once. Needs `testHooks: true`. */
  crashForTest(exitCode?: number): void;
  /**
   * Graceful stop: new requests get 503 at once, streams end, requests under way may finish (up to
   * `closeTimeoutMs`), then the engine flushes and closes and the thread ends.
   */
  close(): Promise<void>;
}
