/**
 * {@link Storage.publishEphemeral} and {@link Storage.subscribeEphemeral} within one process (the
 * memory and lowdb adapters): listeners by channel, each payload copied and delivered on a later
 * turn of the event loop, in publish order.
 * @module
 */
import type { Storage } from '../../src/ports.ts';

/** The ephemeral channel of an in-process adapter. */
export class EphemeralHub {
  private readonly channels = new Map<string, Set<(payload: Uint8Array) => void>>();

  publish(channel: string, payload: Uint8Array): Promise<void> {
    if (typeof channel !== 'string') return Promise.reject(new TypeError('publishEphemeral: channel must be a string'));
    if (!(payload instanceof Uint8Array)) return Promise.reject(new TypeError('publishEphemeral: payload must be a Uint8Array'));
    const set = this.channels.get(channel);
    if (set !== undefined && set.size > 0) {
      const copy = payload.slice();
      const listeners = [...set];
      setImmediate(() => {
        for (const l of listeners) {
          if (!set.has(l)) continue;
          try {
            l(copy);
          } catch {
            // Listeners must not throw; one that does must not stop the others.
          }
        }
      });
    }
    return Promise.resolve();
  }

  subscribe(channel: string, listener: (payload: Uint8Array) => void): () => void {
    if (typeof channel !== 'string') throw new TypeError('subscribeEphemeral: channel must be a string');
    if (typeof listener !== 'function') throw new TypeError('subscribeEphemeral: listener must be a function');
    const entry = (payload: Uint8Array) => listener(payload);
    let set = this.channels.get(channel);
    if (set === undefined) {
      set = new Set();
      this.channels.set(channel, set);
    }
    set.add(entry);
    return () => {
      const current = this.channels.get(channel);
      if (current === undefined || !current.delete(entry)) return;
      if (current.size === 0) this.channels.delete(channel);
    };
  }

  clear(): void {
    this.channels.clear();
  }
}

/** The two port members over a hub; `closed` says when the storage was closed. */
export function ephemeralMembers(hub: EphemeralHub, closed: () => boolean): Pick<Required<Storage>, 'publishEphemeral' | 'subscribeEphemeral'> {
  return {
    publishEphemeral: (channel, payload) => (closed() ? Promise.reject(new Error('storage is closed')) : hub.publish(channel, payload)),
    subscribeEphemeral: (channel, listener) => {
      if (closed()) throw new Error('storage is closed');
      return hub.subscribe(channel, listener);
    },
  };
}
