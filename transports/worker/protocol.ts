/**
 * The messages the worker transport exchanges between the host thread and the engine's worker
 * thread. Every message is a plain, structured-cloneable value.
 * @module
 */
import type { MessagePort } from 'node:worker_threads';
import type { Handler, PlainRequest } from '../../src/api/types.ts';

/** A request as it crosses the boundary: a {@link PlainRequest} without its signal (aborts travel as messages). */
export type WireRequest = Omit<PlainRequest, 'signal'>;

/** Host → worker. */
export type HostMessage =
  | { t: 'req'; id: number; req: WireRequest }
  /** The consumer wants the next chunk of a streamed response. */
  | { t: 'pull'; id: number }
  /** The host-side signal aborted, or the consumer stopped reading a stream. */
  | { t: 'abort'; id: number }
  | { t: 'close' }
  /** Test hook (honoured only when the host started the worker with `testHooks`): exit the thread at once. */
  | { t: 'crash'; exitCode: number };

/** Worker → host. */
export type WorkerMessage =
  | { t: 'ready' }
  /** The engine factory failed; the worker exits after sending this. */
  | { t: 'fatal'; message: string }
  /** A response head; `stream` true means chunks follow on `pull`. */
  | { t: 'res'; id: number; status: number; headers: Record<string, string>; body?: string | Uint8Array; stream: boolean }
  | { t: 'chunk'; id: number; chunk: string | Uint8Array }
  /** A stream ended; `error` when it failed. */
  | { t: 'end'; id: number; error?: string }
  /** The handler threw (it should not): the host answers 500 INTERNAL_ERROR. */
  | { t: 'fail'; id: number; message: string }
  | { t: 'closed' };

/** Where the worker's engine comes from: `workerData` of the thread. */
export interface WorkerBoot {
  /** URL of the module that exports {@link WorkerEngineModule.createWorkerHandler}. */
  module: string;
  /** The host's options for that factory, passed through unchanged (structured-cloneable). */
  options: unknown;
  testHooks: boolean;
  /** 0 for the first start, then 1, 2 … for each restart after a crash. */
  generation: number;
  /** Ports the host made for this start (transferred), e.g. a connection to a shared storage. */
  ports: Record<string, MessagePort>;
}

/** What the factory learns about the start. */
export interface WorkerStartContext {
  /** 0 for the first start, n after the n-th crash. */
  generation: number;
  /**
   * True when the previous worker of this host crashed: resources it held (a folder lock taken by
   * this process) are known to be abandoned, so the factory may reclaim them.
   */
  recovering: boolean;
  /** The ports of `WorkerHostOptions.ports` for this start, by name (e.g. `storage`: see adapters/worker-proxy). */
  ports: Record<string, MessagePort>;
}

/** The engine a worker serves, and how to stop it. */
export interface WorkerEngine {
  handler: Handler;
  /** Flush and close storage; called on a graceful host close. */
  close(): Promise<void>;
}

/**
 * The module a host names: it builds the engine inside the worker thread.
 * @example
 * export async function createWorkerHandler(options: { dir: string }) {
 *   const engine = createEngine({ storage: await lowdbStorage({ dir: options.dir }) });
 *   return { handler: createApiHandler({ engine }), close: () => engine.close() };
 * }
 */
export interface WorkerEngineModule<O = unknown> {
  createWorkerHandler(options: O, context: WorkerStartContext): Promise<WorkerEngine> | WorkerEngine;
}
