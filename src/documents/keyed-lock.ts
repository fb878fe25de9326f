/**
 * Per-key serialisation: tasks for one key run one after another, tasks for different keys freely.
 * @module
 */

/**
 * A lock per string key, handed from task to task in arrival order.
 * @remarks An uncontended `run` starts its task synchronously and costs one async frame: the lock is
 * held while the key has a queue (empty when nobody waits) and passed on directly to the next waiter.
 */
export class KeyedLock {
  /** Held keys, each with the wake-ups of the tasks waiting for it. */
  private readonly queues = new Map<string, (() => void)[]>();
  private idleWaiters: (() => void)[] = [];

  /** Run `task` after every earlier task of `key` has settled. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const queue = this.queues.get(key);
    if (queue === undefined) this.queues.set(key, []);
    else await new Promise<void>((wake) => queue.push(wake));
    try {
      return await task();
    } finally {
      this.release(key);
    }
  }

  private release(key: string): void {
    const queue = this.queues.get(key)!;
    const next = queue.shift();
    if (next !== undefined) {
      next(); // the lock passes to the next waiter; the key stays held
      return;
    }
    this.queues.delete(key);
    if (this.queues.size === 0 && this.idleWaiters.length) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** True while a task of `key` runs or waits. */
  busy(key: string): boolean {
    return this.queues.has(key);
  }

  /** Settles when every task queued so far (and any queued meanwhile) has settled. */
  idle(): Promise<void> {
    if (this.queues.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
