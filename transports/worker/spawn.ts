/**
 * Starting the engine's worker thread. The worker entry sits beside this file with the same
 * extension, so it is `worker-main.ts` from source and `worker-main.js` from the compiled package.
 * @module
 */
import { Worker } from 'node:worker_threads';
import type { WorkerBoot } from './protocol.ts';

const here = import.meta.url;
const extension = /\.[cm]?[jt]s$/.exec(new URL(here).pathname)?.[0] ?? '.js';
const entry = new URL(`./worker-main${extension}`, here).href;

/**
 * Module loader hooks do not reach worker threads on Node 20, so when the worker entry is TypeScript
 * (tests, `tsx` runs) the thread first registers tsx's loader, then imports the entry.
 */
function tsBootstrap(): string {
  let api = 'tsx/esm/api';
  try {
    api = import.meta.resolve('tsx/esm/api');
  } catch {
    // resolved by the worker from its working directory instead
  }
  return `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
}

/** Start a worker thread that serves the engine named by `boot`. */
export function spawnEngineWorker(boot: WorkerBoot): Worker {
  const transferList = Object.values(boot.ports);
  if (extension.endsWith('ts')) return new Worker(tsBootstrap(), { eval: true, workerData: boot, transferList });
  return new Worker(new URL(entry), { workerData: boot, transferList });
}
