/**
 * The API scenario suite (../conformance/) over the in-process fetch: engine (memory storage) and
 * API handler behind createFetch, no socket.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import { createEngine } from '../../src/engine.ts';
import { apiScenarios } from '../conformance/index.ts';
import { createFetch } from './index.ts';

apiScenarios('in-process fetch', async () => {
  const baseUrl = 'http://kw.local';
  const operatorKey = randomBytes(32).toString('base64url');
  const engine = createEngine({ storage: memoryStorage(), baseUrl });
  const handler = createApiHandler({ engine, operatorKey });
  return {
    fetch: createFetch(handler),
    baseUrl,
    operatorKey,
    teardown: () => engine.close(),
  };
});
