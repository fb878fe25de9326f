/**
 * The HTTP transport: the node:http listener over the plain handler, and the same API as a node
 * `(req, res)` handler to mount in Express, Fastify or Hono's node server (docs/mounting.md). The
 * dev server of `kw serve` (storage choice, demo seed, operator key) is composed in app/, not here.
 * @module
 */
export { listen, requestListener, type ListenOptions, type Listening, type RequestListener, type RequestListenerOptions } from './listener.ts';
export { createNodeHandler, type NodeHandler, type NodeHandlerOptions } from './node-handler.ts';
