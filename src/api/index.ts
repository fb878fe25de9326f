/** The HTTP API as one handler over plain values. @module */
export { createApiHandler, type ApiHandlerOptions } from './handler.ts';
export { STATUS_BY_CODE, statusOf } from './status.ts';
export * from './types.ts';
