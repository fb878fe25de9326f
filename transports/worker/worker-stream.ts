/**
 * The host-side view of a response stream produced in the worker: an async iterator that asks the
 * worker for one chunk at a time (`pull`) and stops it on `return` (the consumer went away).
 * @module
 */

/** A chunk stream fed by worker messages. */
export class WorkerStream implements AsyncIterable<string | Uint8Array>, AsyncIterator<string | Uint8Array> {
  private readonly queue: (string | Uint8Array)[] = [];
  private waiting: { resolve(r: IteratorResult<string | Uint8Array>): void; reject(e: Error): void } | null = null;
  private done = false;
  private error: Error | null = null;

  constructor(
    private readonly requestChunk: () => void,
    private readonly cancel: () => void,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<string | Uint8Array>> {
    const chunk = this.queue.shift();
    if (chunk !== undefined) return Promise.resolve({ done: false, value: chunk });
    if (this.error) return Promise.reject(this.error);
    if (this.done) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.requestChunk();
    });
  }

  return(): Promise<IteratorResult<string | Uint8Array>> {
    if (!this.done) {
      this.done = true;
      this.cancel();
    }
    this.queue.length = 0;
    return Promise.resolve({ done: true, value: undefined });
  }

  /** A chunk arrived from the worker. */
  push(chunk: string | Uint8Array): void {
    if (this.done) return;
    const w = this.waiting;
    this.waiting = null;
    if (w) w.resolve({ done: false, value: chunk });
    else this.queue.push(chunk);
  }

  /** The stream ended in the worker (error null) or failed (the worker crashed, the stream threw). */
  finish(error: Error | null): void {
    if (this.done) return;
    this.done = true;
    this.error = error;
    const w = this.waiting;
    this.waiting = null;
    if (!w) return;
    if (error) w.reject(error);
    else w.resolve({ done: true, value: undefined });
  }
}
