/**
 * `createNodeHandler`: the whole API as one node `(req, res)` function, to mount in the frameworks
 * people use (Express, Fastify, Hono's node server; recipes in docs/mounting.md), optionally under a
 * path prefix such as `/kw`.
 * @module
 */
import type http from 'node:http';
import { createApiHandler, type ApiHandlerOptions } from '../../src/api/handler.ts';
import type { Handler } from '../../src/api/types.ts';
import type { PublicEngine } from '../../src/engine.ts';
import { requestListener } from './listener.ts';

/** Options of {@link createNodeHandler}: the API handler's options, a prefix and the body limit. */
export interface NodeHandlerOptions extends Omit<ApiHandlerOptions, 'engine'> {
  /**
   * The path the API is mounted under, e.g. `/kw` (no trailing slash); default none. Requests may
   * arrive with it (Fastify, Hono) or without it (Express's `app.use('/kw', …)` strips it); answers
   * carry it in `Location`. Links (`browserHref`, artifact hrefs) come from the engine's `baseUrl`,
   * which must therefore end with the prefix (e.g. `http://127.0.0.1:3000/kw`, or `/kw` for
   * relative links).
   */
  prefix?: string;
  /** Request body limit in bytes; default each operation's (256 KB for JSON bodies, the contract's). */
  maxBodyBytes?: number;
}

/** A mounted API: a node request listener (extra arguments, like Express's `next`, are ignored). */
export interface NodeHandler {
  (req: http.IncomingMessage, res: http.ServerResponse, ...rest: unknown[]): void;
  /** The mount path, normalized ('' for none). */
  readonly prefix: string;
  /**
   * Stop open event streams and answer further requests with `Connection: close`; call it before
   * closing the framework's server (event streams otherwise keep it open for up to 20 s).
   */
  close(): void;
}

/** `/kw/` → `/kw`, `kw` → `/kw`, `/` and '' → ''. */
function normalizePrefix(prefix: string | undefined): string {
  if (prefix === undefined) return '';
  const trimmed = prefix.replace(/\/+$/, '');
  if (trimmed === '') return '';
  const p = trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
  if (/[?#\s]/.test(p)) throw new TypeError(`createNodeHandler: the prefix "${prefix}" must be a plain path such as /kw`);
  return p;
}

/** The request target without the prefix (when it carries it). */
function stripPrefix(url: string, prefix: string): string {
  if (!url.startsWith(prefix)) return url;
  const rest = url.slice(prefix.length);
  if (rest === '') return '/';
  if (rest.startsWith('/')) return rest;
  if (rest.startsWith('?')) return `/${rest}`;
  return url; // `/kwx/...` is not under `/kw`
}

/** Put the prefix in front of path-absolute `Location` headers. */
function withPrefixedLocations(api: Handler, prefix: string): Handler {
  const handler: Handler = async (request) => {
    const response = await api(request);
    const location = response.headers.location;
    if (location !== undefined && location.startsWith('/') && !location.startsWith('//')) response.headers.location = `${prefix}${location}`;
    return response;
  };
  if (api.bodyLimit) handler.bodyLimit = api.bodyLimit;
  return handler;
}

/**
 * The API over `engine` as a node `(req, res)` handler.
 * @example
 * // Express 5: mount before any body parser (the handler reads the raw body itself).
 * const engine = createEngine({ storage: memoryStorage(), baseUrl: 'http://127.0.0.1:3000/kw' });
 * app.use('/kw', createNodeHandler(engine, { prefix: '/kw', operatorKey }));
 * @throws TypeError when `prefix` is given and the engine's `baseUrl` does not end with it (links
 * would point outside the mount).
 */
export function createNodeHandler(publicEngine: PublicEngine, options: NodeHandlerOptions = {}): NodeHandler {
  const engine = publicEngine;
  const { prefix: rawPrefix, maxBodyBytes, ...apiOptions } = options;
  const prefix = normalizePrefix(rawPrefix);
  const baseUrl = engine.baseUrl.replace(/\/+$/, '');
  if (prefix !== '' && !baseUrl.endsWith(prefix)) {
    throw new TypeError(`createNodeHandler: the engine's baseUrl "${engine.baseUrl}" must end with the prefix ${prefix} so that browserHref links point into the mount (e.g. createEngine({ baseUrl: "http://127.0.0.1:3000${prefix}" }))`);
  }
  const api = createApiHandler({ ...apiOptions, engine });
  const listener = requestListener(prefix ? withPrefixedLocations(api, prefix) : api, maxBodyBytes === undefined ? {} : { maxBodyBytes });
  const node = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (prefix !== '') req.url = stripPrefix(req.url ?? '/', prefix);
    listener(req, res);
  };
  return Object.assign(node, {
    prefix,
    close() {
      listener.closing = true;
      for (const c of listener.streams) c.abort();
    },
  });
}
