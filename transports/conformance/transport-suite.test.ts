/**
 * The transport-conformance suite over node:http, the in-process fetch and the worker thread: each
 * runs a deterministic engine (seeded ids, fixed clock, memory storage, the scripted research runner)
 * built the same way, so the answers must match, event streams included.
 */
import { memoryStorage } from '../../adapters/memory/index.ts';
import { scriptedRunner } from '../../fixtures/worker-engine.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import { manualClock } from '../../src/clock.ts';
import { createEngine } from '../../src/engine.ts';
import { seededIds } from '../../src/ids.ts';
import { listen } from '../http/index.ts';
import { createFetch } from '../inproc/index.ts';
import { startWorkerHost } from '../worker/index.ts';
import { transportConformance, type TransportUnderTest } from './transport-suite.ts';

const operatorKey = 'conformance-operator-key-0123456789abcdef';
const SEED = 7;

function engineHandler() {
  const engine = createEngine({ storage: memoryStorage(), ids: seededIds(SEED), clock: manualClock(), onError: () => undefined, runner: scriptedRunner() });
  return { engine, handler: createApiHandler({ engine, operatorKey, log: () => undefined }) };
}

const inproc: TransportUnderTest = {
  name: 'in-process fetch',
  async start() {
    const { engine, handler } = engineHandler();
    return { fetch: createFetch(handler), baseUrl: 'http://kw.local', close: () => engine.close() };
  },
};

const http: TransportUnderTest = {
  name: 'node:http',
  async start() {
    const { engine, handler } = engineHandler();
    const server = await listen(handler, { port: 0 });
    return {
      fetch: globalThis.fetch,
      baseUrl: server.url,
      close: async () => {
        await server.close();
        await engine.close();
      },
    };
  },
};

const worker: TransportUnderTest = {
  name: 'worker thread',
  async start() {
    const host = await startWorkerHost({ module: new URL('../../fixtures/worker-engine.ts', import.meta.url), options: { storage: 'memory', operatorKey, seed: SEED, runner: 'scripted' } });
    return { fetch: host.fetch, baseUrl: 'http://kw.local', close: () => host.close() };
  },
};

transportConformance({ operatorKey, transports: [inproc, http, worker] });
