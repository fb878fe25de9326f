/**
 * A storage adapter over a MessagePort: `serveStorage(storage)` lends a storage to another thread (a
 * worker transport's engine), `remoteStorage(port)` is that storage seen from the worker.
 * @module
 */
export { remoteStorage, serveStorage, type StorageServer } from './storage-proxy.ts';
