/**
 * The worker thread's entry: imports the host-named engine module, builds the handler, then serves
 * requests that arrive as messages. Responses go back as a head plus, for event streams, chunks
 * pulled one at a time, so a stream only advances as fast as its consumer reads it.
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PlainRequest } from '../../src/api/types.ts';
import type { HostMessage, WorkerBoot, WorkerEngine, WorkerEngineModule, WorkerMessage } from './protocol.ts';

const port = parentPort;
if (port === null) throw new Error('transports/worker/worker-main.ts runs only as a worker thread');
const boot = workerData as WorkerBoot;
const send = (message: WorkerMessage) => port.postMessage(message);

interface Live {
  abort: AbortController;
  stream?: AsyncIterator<string | Uint8Array>;
}
const live = new Map<number, Live>();

async function serve(engine: WorkerEngine, id: number, request: PlainRequest, entry: Live): Promise<void> {
  try {
    const response = await engine.handler(request);
    if (entry.abort.signal.aborted && response.stream) {
      await response.stream[Symbol.asyncIterator]().return?.();
      live.delete(id);
      return;
    }
    const head: WorkerMessage = { t: 'res', id, status: response.status, headers: response.headers, stream: response.stream !== undefined };
    if (response.body !== undefined) head.body = response.body;
    if (response.stream) entry.stream = response.stream[Symbol.asyncIterator]();
    else live.delete(id);
    send(head);
  } catch (e) {
    live.delete(id);
    send({ t: 'fail', id, message: e instanceof Error ? e.message : String(e) });
  }
}

async function pull(id: number): Promise<void> {
  const entry = live.get(id);
  if (!entry?.stream) return;
  try {
    const next = await entry.stream.next();
    if (next.done) {
      live.delete(id);
      send({ t: 'end', id });
    } else send({ t: 'chunk', id, chunk: next.value });
  } catch (e) {
    live.delete(id);
    send({ t: 'end', id, error: e instanceof Error ? e.message : String(e) });
  }
}

function abort(id: number): void {
  const entry = live.get(id);
  if (!entry) return;
  live.delete(id);
  entry.abort.abort();
  void entry.stream?.return?.()?.catch(() => undefined);
}

async function start(): Promise<void> {
  let engine: WorkerEngine;
  try {
    const mod = (await import(boot.module)) as Partial<WorkerEngineModule>;
    if (typeof mod.createWorkerHandler !== 'function') throw new Error(`${boot.module} does not export createWorkerHandler(options, context)`);
    engine = await mod.createWorkerHandler(boot.options, { generation: boot.generation, recovering: boot.generation > 0, ports: boot.ports });
  } catch (e) {
    send({ t: 'fatal', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    process.exit(1);
  }
  port!.on('message', (message: HostMessage) => {
    switch (message.t) {
      case 'req': {
        const entry: Live = { abort: new AbortController() };
        live.set(message.id, entry);
        void serve(engine, message.id, { ...message.req, signal: entry.abort.signal }, entry);
        break;
      }
      case 'pull':
        void pull(message.id);
        break;
      case 'abort':
        abort(message.id);
        break;
      case 'close':
        for (const id of [...live.keys()]) abort(id);
        engine.close().then(
          () => send({ t: 'closed' }),
          (e: unknown) => send({ t: 'fatal', message: `close failed: ${e instanceof Error ? e.message : String(e)}` }),
        );
        break;
      case 'crash':
        if (boot.testHooks) process.exit(message.exitCode);
        break;
    }
  });
  send({ t: 'ready' });
}

void start();
