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

const isId = (id: unknown): id is number => typeof id === 'number' && Number.isSafeInteger(id);

/**
 * The request of a `req` message, checked: the host is trusted code, but a message that is not
 * what the protocol says must not crash the thread (and with it every request in flight). Header
 * values that are not strings are dropped.
 */
function requestOf(message: { id: number; req?: unknown }, signal: AbortSignal): PlainRequest | string {
  const req = message.req as Partial<PlainRequest> | null | undefined;
  if (req === null || typeof req !== 'object') return 'the message carries no request';
  if (typeof req.method !== 'string' || typeof req.url !== 'string') return 'the request has no method or URL';
  if (req.headers === null || typeof req.headers !== 'object' || Array.isArray(req.headers)) return 'the request headers are not an object';
  if (req.body !== null && req.body !== undefined && !(req.body instanceof Uint8Array)) return 'the request body is neither bytes nor null';
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name.toLowerCase()] = value;
  const request: PlainRequest = { method: req.method, url: req.url, headers, body: req.body ?? null, signal };
  if (req.bodyTooLarge === true) request.bodyTooLarge = true;
  if (typeof req.remoteAddress === 'string') request.remoteAddress = req.remoteAddress;
  return request;
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
    if (message === null || typeof message !== 'object') return; // not a protocol message
    switch (message.t) {
      case 'req': {
        if (!isId(message.id) || live.has(message.id)) return;
        const entry: Live = { abort: new AbortController() };
        const request = requestOf(message, entry.abort.signal);
        if (typeof request === 'string') {
          send({ t: 'fail', id: message.id, message: request });
          return;
        }
        live.set(message.id, entry);
        void serve(engine, message.id, request, entry);
        break;
      }
      case 'pull':
        if (isId(message.id)) void pull(message.id);
        break;
      case 'abort':
        if (isId(message.id)) abort(message.id);
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
