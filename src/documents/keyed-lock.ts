/**
 * Per-key serialisation: tasks for one key run one after another, tasks for different keys freely.
 * @module
 */

/** A map of promise chains keyed by string. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Run `task` after every earlier task of `key` has settled. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key);
    const next = prev ? prev.then(task, task) : task();
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** Settles when every task queued so far has settled. */
  async idle(): Promise<void> {
    while (this.tails.size) await Promise.all([...this.tails.values()]);
  }
}
