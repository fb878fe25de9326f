/**
 * A queue that takes turns between holders: each holder's items leave in the order they came, and
 * holders with items waiting are served one item each in turn (round robin), so that one holder's
 * many items cannot keep another's waiting behind all of them.
 * @module
 */
export class FairQueue<T> {
  /** Items by holder; a holder is here only while it has items (in the order of its turn). */
  private readonly queues = new Map<string, T[]>();
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(holder: string, item: T): void {
    const queue = this.queues.get(holder);
    if (queue) queue.push(item);
    else this.queues.set(holder, [item]);
    this.size++;
  }

  /** The next item: the first of the holder whose turn it is (that holder then goes last). */
  shift(): T | undefined {
    const first = this.queues.entries().next();
    if (first.done) return undefined;
    const [holder, queue] = first.value;
    const item = queue.shift()!;
    this.queues.delete(holder);
    if (queue.length > 0) this.queues.set(holder, queue);
    this.size--;
    return item;
  }

  /** Every item, emptying the queue. */
  drain(): T[] {
    const all = [...this.queues.values()].flat();
    this.queues.clear();
    this.size = 0;
    return all;
  }
}
