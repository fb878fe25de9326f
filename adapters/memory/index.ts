/**
 * The in-process storage adapter: `memoryStorage()`, and `memoryUploadSpool()` for unfinished upload
 * bytes (the engine's default).
 * @module
 */
export { memoryStorage } from './memory-storage.ts';
export { memoryUploadSpool } from '../../src/library/upload-spool.ts';
