/**
 * A small pool of worker threads that read HTML and PDF pages, so that no page — however hostile —
 * runs on the engine's thread.
 * @remarks
 * - Size: by default one thread per spare core (`availableParallelism() - 1`, at least 1). Threads
 *   start on first use, are reused page after page, and do not keep the process alive while idle.
 * - Time: a thread gets `timeLimitMs` for one page, counted from the moment the page is handed to it
 *   (waiting for a free thread does not count, nor does a thread's start). Node 20 has no per-thread
 *   CPU clock, so this is the thread's busy time on that page; a thread never waits for I/O while it
 *   reads a page, so on a machine with a free core it is its CPU time. Past the limit the thread is
 *   terminated (V8 stops it even inside a synchronous loop) and a fresh one is started for the next
 *   page; the page fails with code `timeout`.
 * - Memory: each thread runs under `resourceLimits` (`maxHeapMb` of old generation, a proportionate
 *   young generation). A page that needs more kills only its thread; it fails with code `too-large`.
 * - A thread that dies otherwise fails its page with `extract-failed`; the next page gets a new one.
 * @module
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CaptureFailure, type ExtractedText } from '../../src/library/capture-port.ts';
import { EXTRACT_WORKER_ROLE, type ExtractReply, type ExtractRequest } from './extract-thread.ts';
import { FairQueue } from './fair-queue.ts';

/** Options of {@link ExtractorPool}. */
export interface ExtractorPoolOptions {
  /** Threads (default: one per spare core, at least 1). */
  threads?: number;
  /** Time one thread may spend reading one page, in ms (default 20,000). */
  timeLimitMs?: number;
  /** Heap of each thread in MiB: `resourceLimits.maxOldGenerationSizeMb` (default 256). */
  maxHeapMb?: number;
  /**
   * The module the threads run. Default: `extract-worker` beside this file; the bundled `kw` command
   * runs itself (it serves extractions when started as an extraction thread).
   */
  entry?: URL;
}

/** Set to true by the `kw` bundle (esbuild `define`): the bundle is its own thread entry. */
declare const __KW_BUNDLED_CAPTURE_WORKER__: boolean | undefined;

const here = import.meta.url;
const extension = /\.[cm]?[jt]s$/.exec(new URL(here).pathname)?.[0] ?? '.js';

function defaultEntry(): URL {
  if (typeof __KW_BUNDLED_CAPTURE_WORKER__ !== 'undefined' && __KW_BUNDLED_CAPTURE_WORKER__) return new URL(here);
  return new URL(`./extract-worker${extension}`, here);
}

/**
 * Module loader hooks do not reach worker threads on Node 20: a TypeScript entry (tests, `tsx` runs)
 * registers tsx's loader in the thread first, then imports the entry.
 */
function tsBootstrap(entry: string): string {
  let api = 'tsx/esm/api';
  try {
    api = import.meta.resolve('tsx/esm/api');
  } catch {
    // resolved by the thread from its working directory instead
  }
  return `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
}

interface Job {
  request: Omit<ExtractRequest, 'id'>;
  resolve: (text: ExtractedText) => void;
  reject: (error: unknown) => void;
}

/** One thread of the pool and the page it is reading. */
interface Slot {
  worker: Worker | null;
  ready: boolean;
  job: (Job & { id: number; timer: ReturnType<typeof setTimeout> | null }) | null;
}

/** Figures of a pool, for tests and benchmarks. */
export interface ExtractorPoolStats {
  /** Threads started so far (a thread replaced after a time-out or a memory kill counts again). */
  started: number;
  /** Pages that ran past the time limit / the memory limit. */
  timedOut: number;
  outOfMemory: number;
}

/** See the module remarks. */
export class ExtractorPool {
  readonly threads: number;
  readonly timeLimitMs: number;
  readonly maxHeapMb: number;
  private readonly entry: URL;
  private readonly slots: Slot[];
  /** Pages waiting for a thread, taking turns between holders (accounts): one cannot hold everyone's. */
  private readonly waiting = new FairQueue<Job>();
  private nextId = 1;
  private closed = false;
  readonly stats: ExtractorPoolStats = { started: 0, timedOut: 0, outOfMemory: 0 };

  constructor(options: ExtractorPoolOptions = {}) {
    this.threads = Math.max(1, Math.floor(options.threads ?? availableParallelism() - 1));
    this.timeLimitMs = options.timeLimitMs ?? 20_000;
    this.maxHeapMb = options.maxHeapMb ?? 256;
    this.entry = options.entry ?? defaultEntry();
    this.slots = Array.from({ length: this.threads }, () => ({ worker: null, ready: false, job: null }));
  }

  /**
   * Read one page on a pool thread. Rejects with a {@link CaptureFailure} past the limits. Pages
   * wait for a thread taking turns between `holder`s (whose page it is: an account), so that one
   * holder's pages — hostile ones that run to the time limit — delay another's by one page at most.
   */
  extract(kind: 'html' | 'pdf', bytes: Uint8Array, url: string, charset: string | null, holder = ''): Promise<ExtractedText> {
    if (this.closed) return Promise.reject(new CaptureFailure('not-configured', 'The extraction pool is closed.'));
    return new Promise((resolve, reject) => {
      this.waiting.push(holder, { request: { kind, bytes, url, charset }, resolve, reject });
      this.pump();
    });
  }

  /** Stop every thread; pages not yet read fail. */
  async close(): Promise<void> {
    this.closed = true;
    const failure = new CaptureFailure('extract-failed', 'The extraction pool closed before the page was read.');
    for (const job of this.waiting.drain()) job.reject(failure);
    await Promise.all(
      this.slots.map(async (slot) => {
        const { worker, job } = slot;
        slot.worker = null;
        slot.job = null;
        if (job) {
          if (job.timer) clearTimeout(job.timer);
          job.reject(failure);
        }
        await worker?.terminate();
      }),
    );
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (!this.waiting.length) return;
      if (slot.job) continue;
      if (!slot.worker) this.start(slot);
      if (!slot.ready) continue;
      this.dispatch(slot, this.waiting.shift()!);
    }
  }

  private dispatch(slot: Slot, job: Job): void {
    const id = this.nextId++;
    // The thread gets its own exact copy (a view may sit on a larger pooled buffer), transferred.
    const bytes = job.request.bytes.slice();
    const timer = setTimeout(() => this.timeOut(slot), this.timeLimitMs);
    slot.job = { ...job, id, timer };
    slot.worker!.ref();
    slot.worker!.postMessage({ ...job.request, id, bytes } satisfies ExtractRequest, [bytes.buffer]);
  }

  private settle(slot: Slot): NonNullable<Slot['job']> | null {
    const job = slot.job;
    if (!job) return null;
    slot.job = null;
    if (job.timer) clearTimeout(job.timer);
    return job;
  }

  /** Drop a slot's thread (it is terminated if still running); the next page starts a fresh one. */
  private discard(slot: Slot): void {
    const worker = slot.worker;
    slot.worker = null;
    slot.ready = false;
    if (worker) {
      worker.removeAllListeners('message');
      void worker.terminate();
    }
  }

  private timeOut(slot: Slot): void {
    const job = this.settle(slot);
    if (!job) return;
    this.stats.timedOut++;
    this.discard(slot);
    job.reject(new CaptureFailure('timeout', `Reading the page took longer than the ${this.timeLimitMs} ms limit of one capture; it was stopped.`));
    this.pump();
  }

  private start(slot: Slot): void {
    const entry = this.entry.href;
    const options = {
      workerData: { role: EXTRACT_WORKER_ROLE },
      resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb, maxYoungGenerationSizeMb: Math.max(4, Math.min(64, Math.floor(this.maxHeapMb / 8))), stackSizeMb: 4 },
      stdout: false,
      stderr: false,
    };
    const worker = /\.[cm]?ts$/.test(this.entry.pathname) ? new Worker(tsBootstrap(entry), { ...options, eval: true }) : new Worker(this.entry, options);
    this.stats.started++;
    slot.worker = worker;
    slot.ready = false;
    worker.unref();
    worker.on('message', (reply: ExtractReply) => {
      if (slot.worker !== worker) return;
      if ('ready' in reply) {
        slot.ready = true;
        this.pump();
        return;
      }
      const job = slot.job?.id === reply.id ? this.settle(slot) : null;
      worker.unref();
      if (job) {
        if (reply.ok) job.resolve(reply.text);
        else job.reject(new CaptureFailure('extract-failed', `The page could not be read: ${reply.message}`));
      }
      this.pump();
    });
    worker.on('error', (error: Error & { code?: string }) => this.died(slot, worker, error));
    worker.on('exit', (code) => this.died(slot, worker, new Error(`the extraction thread exited with code ${code}`)));
  }

  private died(slot: Slot, worker: Worker, error: Error & { code?: string }): void {
    if (slot.worker !== worker) return;
    const job = this.settle(slot);
    const started = slot.ready;
    this.discard(slot);
    if (job) {
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        this.stats.outOfMemory++;
        job.reject(new CaptureFailure('too-large', `Reading the page needed more than the ${this.maxHeapMb} MiB memory limit of one capture; it was stopped.`, { cause: error }));
      } else {
        job.reject(new CaptureFailure('extract-failed', `The page could not be read: ${error.message}`, { cause: error }));
      }
    } else if (!this.closed && !started) {
      // The thread could not even start: fail the waiting pages rather than retrying forever.
      for (const waiting of this.waiting.drain()) waiting.reject(new CaptureFailure('extract-failed', `The extraction thread could not start: ${error.message}`, { cause: error }));
      return;
    }
    if (!this.closed) this.pump();
  }
}
