/**
 * Per-key serialisation: tasks for one key run one after another, tasks for different keys freely.
 * @module
 */

/**
 * A lock per string key, handed from task to task in arrival order.
 * @remarks An uncontended `run` starts its task synchronously and hands back the task's own promise
 * (no extra async frame or promise hop): the lock is held while the key has a queue (empty when
 * nobody waits), released by a reaction registered on the task's promise before the caller's own
 * (so the caller resumes with the key free), and passed on directly to the next waiter.
 */
export class KeyedLock {
  /** Held keys, each with the wake-ups of the tasks waiting for it. */
  private readonly queues = new Map<string, (() => void)[]>();
  private idleWaiters: (() => void)[] = [];

  /** Run `task` after every earlier task of `key` has settled. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const queue = this.queues.get(key);
    if (queue !== undefined) return new Promise<void>((wake) => queue.push(wake)).then(() => this.hold(key, task));
    this.queues.set(key, []);
    return this.hold(key, task);
  }

  /** Run `task` with `key` held; release it when the task settles (or throws synchronously). */
  private hold<T>(key: string, task: () => Promise<T>): Promise<T> {
    let running: Promise<T>;
    try {
      running = task();
    } catch (error) {
      this.release(key);
      return Promise.reject(error);
    }
    const release = () => this.release(key);
    void running.then(release, release);
    return running;
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
