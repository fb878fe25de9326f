/**
 * A lock per key: functions run one after another for the same key, at once for different keys.
 * @module
 */

/** Runs functions one after another per key (prepare-upload per credential). */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Run `fn` after every earlier `run` of the same key has settled. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(fn, fn);
    const tail = next.catch(() => {});
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
