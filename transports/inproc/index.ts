/**
 * The in-process transport: a `fetch` over the plain handler, for embedding the engine in a
 * program, a worker or a test with no socket.
 * @module
 */
export { createFetch, toPlainRequest, toResponse } from './fetch-adapter.ts';
