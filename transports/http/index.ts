/**
 * The HTTP transport: the node:http listener over the plain handler. The dev server of `kw serve`
 * (storage choice, demo seed, operator key) is composed in app/, not here.
 * @module
 */
export { listen, type ListenOptions, type Listening } from './listener.ts';
