/**
 * The API scenario suite (../conformance/) over the worker transport: the engine (memory storage)
 * in a worker thread, reached through the host's fetch.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { apiScenarios } from '../conformance/index.ts';
import { startWorkerHost } from './index.ts';

apiScenarios('worker thread', async () => {
  const baseUrl = 'http://kw.local';
  const operatorKey = randomBytes(32).toString('base64url');
  const host = await startWorkerHost({ module: new URL('../../fixtures/worker-engine.ts', import.meta.url), options: { storage: 'memory', operatorKey, baseUrl } });
  return { fetch: host.fetch, baseUrl, operatorKey, teardown: () => host.close() };
});
