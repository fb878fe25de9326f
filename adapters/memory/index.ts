/**
 * The in-process storage adapter: `memoryStorage()`.
 * @module
 */
export { memoryStorage } from './memory-storage.ts';
