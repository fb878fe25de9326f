/**
 * The API scenario suite (../conformance/) over the node:http transport: engine (memory storage) and
 * API handler behind the listener on a real socket, port 0, reached with the global fetch.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import { createEngine } from '../../src/engine.ts';
import { apiScenarios } from '../conformance/index.ts';
import { listen } from './listener.ts';

apiScenarios('node:http', async () => {
  const operatorKey = randomBytes(32).toString('base64url');
  const storage = memoryStorage();
  // Bind first so the engine's baseUrl (browserHref) is the socket's real URL.
  let handler: Parameters<typeof listen>[0] = async () => ({ status: 503, headers: { 'retry-after': '1' } });
  const listener = await listen((request) => handler(request), { host: '127.0.0.1', port: 0 });
  const engine = createEngine({ storage, baseUrl: listener.url });
  handler = createApiHandler({ engine, operatorKey });
  return {
    fetch: globalThis.fetch,
    baseUrl: listener.url,
    operatorKey,
    teardown: async () => {
      try {
        await listener.close();
      } finally {
        await engine.close();
      }
    },
  };
});
