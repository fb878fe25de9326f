/**
 * The API scenario suite (../conformance.ts) over the node:http transport: the dev server of
 * `kw serve` with memory storage on a real socket, port 0, reached with the global fetch.
 * @module
 */
import { apiScenarios } from '../conformance.ts';
import { serve } from './serve.ts';

apiScenarios('node:http', async () => {
  const server = await serve({ port: 0, storage: 'memory', seed: 'none' });
  return {
    fetch: globalThis.fetch,
    baseUrl: server.url,
    operatorKey: server.operatorKey,
    teardown: () => server.close(),
  };
});
