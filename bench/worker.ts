/**
 * Worker transport bench: the same workload through the handler in-process, through one engine
 * worker, and through N engine workers (one per core) sharing one lowdb folder.
 *
 * Workload: C clients, each with its own credential and document, alternate a blocks read and a
 * one-block edit (current revision, fresh idempotency key) for D seconds. Requests are handed to the
 * handler as plain requests (no sockets), so the figures are the engine plus the transport.
 *
 * Cases:
 * 1. in-process, memory storage;  2. one worker, memory storage;
 * 3. in-process, lowdb (fsync);   4. one worker, lowdb (fsync);
 * 5. N workers sharing lowdb through the storage proxy (the host thread owns the folder);
 * 6. N workers each opening the folder themselves: refused by lowdb's lock (reported, not measured).
 *
 * Run: `npx tsx bench/worker.ts [seconds] [clients]` (defaults 3 and 8). Not part of `npm run bench`.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { lowdbStorage } from '../adapters/lowdb/index.ts';
import { memoryStorage } from '../adapters/memory/index.ts';
import { createApiHandler } from '../src/api/handler.ts';
import type { Handler, PlainRequest } from '../src/api/types.ts';
import { createEngine } from '../src/engine.ts';
import type { Storage } from '../src/ports.ts';
import { serveStorage } from '../adapters/worker-proxy/index.ts';
import { startWorkerHost, type WorkerHost } from '../transports/worker/index.ts';

const seconds = Number(process.argv[2] ?? process.env.KW_BENCH_SECONDS ?? 3);
const clients = Number(process.argv[3] ?? 8);
const workers = availableParallelism();
const operatorKey = randomBytes(32).toString('base64url');
const engineModule = new URL('../fixtures/worker-engine.ts', import.meta.url);
/** Budget windows of 1 s: 10,000 requests per credential per second never run out here. */
const BUDGET_WINDOW_MS = 1000;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Target {
  /** One handler per engine; client i uses handlers[i % length]. */
  handlers: Handler[];
  close(): Promise<void>;
}

async function call(handler: Handler, method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const request: PlainRequest = { method, url, headers: { ...headers }, body: null };
  if (body !== undefined) {
    request.body = encoder.encode(JSON.stringify(body));
    request.headers['content-type'] = 'application/json';
  }
  const response = await handler(request);
  const text = response.body === undefined ? '' : typeof response.body === 'string' ? response.body : decoder.decode(response.body);
  return { status: response.status, headers: response.headers, json: text ? (JSON.parse(text) as { data: Record<string, unknown> }) : null };
}

async function prepareClient(handler: Handler, i: number) {
  const cred = await call(handler, 'POST', '/operator/v1/credentials', { authorization: `Bearer ${operatorKey}` }, { label: `bench ${i}`, scopes: ['document:create', 'document:read', 'document:write'] });
  const auth = { authorization: `Bearer ${String(cred.json!.data.token)}` };
  const created = await call(handler, 'POST', '/api/v1/documents', { ...auth, 'idempotency-key': `bench-create-${i}-${randomBytes(8).toString('hex')}` }, { v: 1, title: `Bench ${i}` });
  const ref = String(created.json!.data.documentRef);
  const made = await call(handler, 'POST', `/api/v1/documents/${ref}/mutations`, { ...auth, 'idempotency-key': `bench-seed-${i}-${randomBytes(8).toString('hex')}`, 'service-if-revision': created.headers['service-revision']! }, {
    v: 1,
    intent: 'seed',
    mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: Array.from({ length: 10 }, (_, n) => ({ type: 'paragraph', markdown: `Paragraph ${n}` })) },
  });
  const block = (made.json!.data.receipt as { affectedBlockIds: string[] }).affectedBlockIds[0]!;
  return { auth, ref, block, revision: made.headers['service-revision']! };
}

async function measure(name: string, target: Target): Promise<void> {
  const prepared = await Promise.all(Array.from({ length: clients }, (_, i) => prepareClient(target.handlers[i % target.handlers.length]!, i)));
  const latencies: number[] = [];
  const errors = new Map<number, number>();
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    prepared.map(async (c, i) => {
      const handler = target.handlers[i % target.handlers.length]!;
      for (let n = 0; performance.now() < end; n++) {
        const t0 = performance.now();
        const r =
          n % 2 === 0
            ? await call(handler, 'GET', `/api/v1/documents/${c.ref}?format=blocks`, c.auth)
            : await call(handler, 'POST', `/api/v1/documents/${c.ref}/mutations`, { ...c.auth, 'idempotency-key': `bench-${i}-${n}-${randomBytes(6).toString('hex')}`, 'service-if-revision': c.revision }, {
                v: 1,
                intent: 'edit',
                mutation: { kind: 'edit', blockId: c.block, block: { type: 'paragraph', markdown: `Edit ${n}` } },
              });
        latencies.push(performance.now() - t0);
        if (r.status >= 400) errors.set(r.status, (errors.get(r.status) ?? 0) + 1);
        else if (r.headers['service-revision']) c.revision = r.headers['service-revision'];
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(2);
  console.log(`${name.padEnd(52)} ${String(Math.round(latencies.length / seconds)).padStart(8)} req/s   p50 ${at(0.5).padStart(6)} ms   p99 ${at(0.99).padStart(7)} ms   errors ${errors.size ? [...errors].map(([status, n]) => `${n}×${status}`).join(' ') : 0}`);
}

function inProcess(storage: Storage): Target {
  const engine = createEngine({ storage, onError: () => undefined, budgetWindowMs: BUDGET_WINDOW_MS });
  return { handlers: [createApiHandler({ engine, operatorKey, log: () => undefined })], close: () => engine.close() };
}

function hostsTarget(hosts: WorkerHost[], after: () => Promise<void> = async () => undefined): Target {
  return {
    handlers: hosts.map((h) => h.handler),
    close: async () => {
      await Promise.all(hosts.map((h) => h.close()));
      await after();
    },
  };
}

async function run(name: string, make: () => Promise<Target>): Promise<void> {
  const target = await make();
  try {
    await measure(name, target);
  } finally {
    await target.close();
  }
}

console.log(`worker bench: ${clients} clients, ${seconds} s per case, ${workers} cores; reads and one-block edits alternate`);
const dirs: string[] = [];
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-worker-'));
  dirs.push(dir);
  return dir;
};
try {
  await run('in-process, memory', async () => inProcess(memoryStorage()));
  await run('1 worker, memory', async () => hostsTarget([await startWorkerHost({ module: engineModule, options: { storage: 'memory', operatorKey, budgetWindowMs: BUDGET_WINDOW_MS } })]));
  await run('in-process, lowdb (fsync)', async () => inProcess(await lowdbStorage({ dir: await freshDir() })));
  await run('1 worker, lowdb (fsync)', async () => hostsTarget([await startWorkerHost({ module: engineModule, options: { storage: 'lowdb', dir: await freshDir(), operatorKey, budgetWindowMs: BUDGET_WINDOW_MS } })]));
  await run(`${workers} workers sharing lowdb (fsync) via the storage proxy`, async () => {
    const storage = await lowdbStorage({ dir: await freshDir() });
    const server = serveStorage(storage);
    const hosts = await Promise.all(
      Array.from({ length: workers }, () => startWorkerHost({ module: engineModule, options: { storage: 'remote', operatorKey, budgetWindowMs: BUDGET_WINDOW_MS }, ports: () => ({ storage: server.connect() }) })),
    );
    return hostsTarget(hosts, async () => {
      server.close();
      await storage.close();
    });
  });
  const dir = await freshDir();
  const first = await startWorkerHost({ module: engineModule, options: { storage: 'lowdb', dir, operatorKey } });
  try {
    await startWorkerHost({ module: engineModule, options: { storage: 'lowdb', dir, operatorKey }, restart: false });
    console.log(`${workers} workers each opening lowdb: a second open was NOT refused (unexpected)`);
  } catch (e) {
    console.log(`${workers} workers each opening lowdb: refused, as designed: ${(e as Error).message.split('\n')[0]!.slice(0, 160)}`);
  } finally {
    await first.close();
  }
} finally {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
}
