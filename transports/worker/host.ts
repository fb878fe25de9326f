/**
 * The host side of the worker transport: runs the engine in a worker thread and hands the host the
 * same {@link Handler} (and, through `createFetch`, the same fetch) as an in-process engine.
 * @remarks A crash of the worker (it exits while the host did not ask it to) answers 503
 * TEMPORARILY_UNAVAILABLE with Retry-After to every request still waiting for its answer, fails
 * streams already under way (the client resumes with Last-Event-ID), and starts a new worker. A write
 * is acknowledged only after the worker's handler answered it, which for durable storage is after it
 * is synced, so a crash loses no acknowledged write.
 * @module
 */
import type { Worker } from 'node:worker_threads';
import { bodyLimitOf, createRouter } from '../../src/api/router.ts';
import type { Handler, PlainRequest, PlainResponse } from '../../src/api/types.ts';
import { contractOperations } from '../../src/contract/operations.ts';
import { createFetch } from '../inproc/fetch-adapter.ts';
import { internalError, hostUnavailable } from './host-errors.ts';
import type { WorkerHost, WorkerHostOptions } from './host-options.ts';
import type { HostMessage, WireRequest, WorkerBoot, WorkerMessage } from './protocol.ts';
import { spawnEngineWorker } from './spawn.ts';
import { WorkerStream } from './worker-stream.ts';

export type { WorkerHost, WorkerHostEvent, WorkerHostOptions } from './host-options.ts';

interface Pending {
  request: PlainRequest;
  resolve(response: PlainResponse): void;
  stream?: WorkerStream;
  detach(): void;
}

interface Connection {
  worker: Worker;
  generation: number;
  ready: Promise<void>;
  up: boolean;
}

/** Copy a body that is a view into a larger buffer (node's pooled Buffers), so only its bytes are cloned. */
function ownBytes(body: Uint8Array | null): Uint8Array | null {
  if (body === null || (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength)) return body;
  return body.slice();
}

/**
 * Start the engine in a worker thread.
 * @throws Error when the first start fails (the module is missing, or its factory threw).
 * @example
 * const host = await startWorkerHost({ module: new URL('./engine.ts', import.meta.url), options: { storage: 'lowdb', dir } });
 * const res = await host.fetch('http://kw.local/api/v1/auth', { headers: { authorization: `Bearer ${token}` } });
 */
export async function startWorkerHost(options: WorkerHostOptions): Promise<WorkerHost> {
  const moduleUrl = String(options.module instanceof URL ? options.module.href : options.module);
  const retryAfterMs = options.retryAfterMs ?? 1000;
  const readyTimeoutMs = options.readyTimeoutMs ?? 10_000;
  const restart = options.restart ?? true;
  const onEvent = options.onEvent ?? (() => undefined);
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let crashes = 0;
  let closing = false;
  let conn: Connection;

  const post = (message: HostMessage) => conn.worker.postMessage(message);

  function onMessage(message: WorkerMessage): void {
    if (message.t === 'res') {
      const p = pending.get(message.id);
      if (!p) return;
      const response: PlainResponse = { status: message.status, headers: message.headers };
      if (message.body !== undefined) response.body = message.body;
      if (message.stream) {
        const id = message.id;
        p.stream = new WorkerStream(
          () => post({ t: 'pull', id }),
          () => {
            if (pending.delete(id)) post({ t: 'abort', id });
            p.detach();
          },
        );
        response.stream = p.stream;
      } else {
        pending.delete(message.id);
        p.detach();
      }
      p.resolve(response);
    } else if (message.t === 'chunk' || message.t === 'end') {
      const p = pending.get(message.id);
      if (!p?.stream) return;
      if (message.t === 'chunk') p.stream.push(message.chunk);
      else {
        pending.delete(message.id);
        p.detach();
        p.stream.finish(message.error === undefined ? null : new Error(`event stream failed in the engine worker: ${message.error}`));
      }
    } else if (message.t === 'fail') {
      const p = pending.get(message.id);
      if (!p) return;
      pending.delete(message.id);
      p.detach();
      p.resolve(internalError(p.request));
    }
  }

  function failInFlight(reason: string): number {
    const failed = pending.size;
    for (const [id, p] of pending) {
      pending.delete(id);
      p.detach();
      if (p.stream) p.stream.finish(new Error(reason));
      else p.resolve(hostUnavailable(p.request, reason, retryAfterMs));
    }
    return failed;
  }

  function connect(generation: number): Connection {
    const boot: WorkerBoot = { module: moduleUrl, options: options.options ?? null, testHooks: options.testHooks ?? false, generation, ports: options.ports?.() ?? {} };
    const worker = spawnEngineWorker(boot);
    let settle!: { resolve(): void; reject(e: Error): void };
    const ready = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    ready.catch(() => undefined);
    const c: Connection = { worker, generation, ready, up: false };
    let fatal: string | null = null;
    worker.on('message', (message: WorkerMessage) => {
      if (message.t === 'ready') {
        c.up = true;
        settle.resolve();
      } else if (message.t === 'fatal') fatal = message.message;
      else if (message.t !== 'closed') onMessage(message);
    });
    worker.on('error', (e) => {
      fatal ??= e.stack ?? e.message;
    });
    worker.on('exit', (exitCode) => {
      const wasUp = c.up;
      c.up = false;
      if (!wasUp) {
        // A start that failed: its ready promise says so, and scheduleRestart retries with backoff.
        settle.reject(new Error(`the engine worker did not start: ${fatal ?? `exit code ${exitCode}`}`));
        return;
      }
      if (c !== conn) return;
      if (closing) {
        failInFlight('The engine worker stopped while shutting down.');
        return;
      }
      crashes++;
      const failed = failInFlight('The engine worker stopped unexpectedly while handling this request; it is restarting. Retry after Retry-After with the same idempotency key.');
      onEvent({ kind: 'crash', generation, exitCode, failedRequests: failed });
      if (restart) scheduleRestart(generation + 1, 0);
    });
    return c;
  }

  function scheduleRestart(generation: number, attempt: number): void {
    conn = connect(generation);
    conn.ready.then(
      () => onEvent({ kind: 'restarted', generation }),
      (e: Error) => {
        onEvent({ kind: 'restart-failed', generation, message: e.message });
        if (closing) return;
        const delay = Math.min(30_000, 250 * 2 ** attempt);
        setTimeout(() => {
          if (!closing && conn.generation === generation) scheduleRestart(generation + 1, attempt + 1);
        }, delay).unref();
      },
    );
  }

  /** Wait for the current (or a newer) worker to be up, at most readyTimeoutMs. */
  async function whenReady(): Promise<boolean> {
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      const c = conn;
      if (c.up) return true;
      const left = deadline - Date.now();
      if (left <= 0 || closing) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const outcome = await Promise.race([
        c.ready.then(() => 'up' as const, () => 'failed' as const),
        new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), left))),
      ]);
      clearTimeout(timer);
      if (closing) return false;
      if (outcome === 'up' && c.up) return true;
      if (c !== conn) continue; // a newer worker is starting
      if (outcome === 'timeout' || !restart) return false;
      // This start failed; another is scheduled (with backoff): wait for it within the deadline.
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(0, deadline - Date.now()))));
    }
  }

  const handler: Handler = async function handler(request: PlainRequest): Promise<PlainResponse> {
    if (closing) return hostUnavailable(request, 'The engine worker is shutting down.', retryAfterMs);
    if (!conn.up && !(await whenReady())) {
      return hostUnavailable(request, 'The engine worker is restarting; retry after Retry-After.', retryAfterMs);
    }
    if (closing) return hostUnavailable(request, 'The engine worker is shutting down.', retryAfterMs);
    const id = nextId++;
    const wire: WireRequest = { method: request.method, url: request.url, headers: request.headers, body: ownBytes(request.body) };
    if (request.bodyTooLarge) wire.bodyTooLarge = true;
    if (request.remoteAddress !== undefined) wire.remoteAddress = request.remoteAddress;
    const signal = request.signal;
    return new Promise<PlainResponse>((resolve) => {
      const onAbort = () => {
        const p = pending.get(id);
        if (!p) return;
        pending.delete(id);
        post({ t: 'abort', id });
        if (p.stream) p.stream.finish(null);
        else resolve(hostUnavailable(request, 'The request was aborted before the engine answered.', retryAfterMs));
      };
      const detach = () => signal?.removeEventListener('abort', onAbort);
      pending.set(id, { request, resolve, detach });
      signal?.addEventListener('abort', onAbort, { once: true });
      post({ t: 'req', id, req: wire });
      if (signal?.aborted) onAbort();
    });
  };

  // The body limit is the contract's, by the edge's own rule, known without asking the worker (transports read no more).
  handler.bodyLimit = bodyLimitOf(createRouter(contractOperations));

  conn = connect(0);
  try {
    await conn.ready;
  } catch (e) {
    closing = true;
    await conn.worker.terminate();
    throw e;
  }

  return {
    handler,
    fetch: createFetch(handler),
    stats: () => ({ generation: conn.generation, crashes, inFlight: pending.size }),
    ready: async () => {
      if (!(await whenReady())) throw new Error('the engine worker is not running');
    },
    crashForTest(exitCode = 1) {
      if (!options.testHooks) throw new Error('crashForTest needs startWorkerHost({ testHooks: true })');
      post({ t: 'crash', exitCode });
    },
    async close() {
      if (closing) return;
      closing = true;
      const c = conn;
      const deadline = Date.now() + (options.closeTimeoutMs ?? 10_000);
      // Streams end now; requests under way may finish, so their writes are answered rather than cut.
      for (const [id, p] of pending) {
        if (!p.stream) continue;
        pending.delete(id);
        p.detach();
        if (c.up) post({ t: 'abort', id });
        p.stream.finish(null);
      }
      while (pending.size > 0 && c.up && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      failInFlight('The engine worker is shutting down.');
      if (!c.up) {
        await c.worker.terminate();
        return;
      }
      const closed = new Promise<void>((resolve) => {
        c.worker.on('message', (m: WorkerMessage) => (m.t === 'closed' || m.t === 'fatal') && resolve());
        c.worker.once('exit', () => resolve());
      });
      post({ t: 'close' });
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
      clearTimeout(timer);
      await c.worker.terminate();
    },
  };
}
