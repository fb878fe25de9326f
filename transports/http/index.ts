/**
 * The HTTP transport: the node:http listener over the plain handler, and the dev server of `kw serve`.
 * @module
 */
export { listen } from './listener.ts';
export { serve, generateOperatorKey, DEMO_RECORD_FILE, type DevServer, type ServeOptions } from './serve.ts';
