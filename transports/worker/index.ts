/**
 * The worker transport: the engine in a worker thread (node:worker_threads); the host gets the same
 * handler and fetch as in-process. See host.ts for crash handling and protocol.ts for the module the
 * worker imports. The storage a host lends its worker travels through `knowledge-workspace/adapters/worker-proxy`
 * (`serveStorage` on the host, `remoteStorage` in the worker): a storage adapter like the others.
 * @module
 */
export { startWorkerHost, type WorkerHost, type WorkerHostEvent, type WorkerHostOptions } from './host.ts';
export type { WorkerEngine, WorkerEngineModule, WorkerStartContext } from './protocol.ts';
