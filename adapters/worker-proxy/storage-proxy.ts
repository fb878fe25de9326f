/**
 * The storage port across threads: one thread owns a {@link Storage} (e.g. lowdb, which takes an
 * exclusive folder lock) and serves it over MessagePorts; engines in other threads use
 * {@link remoteStorage}, a Storage whose every call is a message. This is how several engine
 * workers share one lowdb folder.
 * @remarks Change notifications cross too: a remote `subscribe` registers the topic with the owner,
 * which forwards each notification (payload-free, as the port defines it). A remote storage says it
 * is shared (`sharedByProcesses`): the engines of several threads share it, so what one engine
 * would count in memory (request budgets) goes through `takeCount`, run by the owner (the owner
 * storage's own, or a compare-and-set over its records), exact across every thread. Errors keep their name
 * (`StorageConflictError` with its `opIndex`, `RangeError`, `TypeError`), so callers recognise them.
 * @module
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { loadHeadAndUpdates, StorageConflictError, type Storage } from '../../src/ports.ts';
import { takeCountByRevision } from '../core/take-count.ts';

const METHODS = [
  'getDocumentHead',
  'loadDocument',
  'loadUpdates',
  'loadHeadAndUpdates',
  'listDocumentHeads',
  'getRecord',
  'listRecords',
  'listPage',
  'readStream',
  'streamHead',
  'commit',
  'takeCount',
] as const;
type Method = (typeof METHODS)[number];
const METHOD_SET: ReadonlySet<string> = new Set(METHODS);

type ToOwner = { t: 'call'; id: number; method: Method; args: unknown[] } | { t: 'sub' | 'unsub'; topic: string };
type FromOwner =
  | { t: 'ok'; id: number; value: unknown }
  | { t: 'err'; id: number; name: string; message: string; opIndex?: number }
  | { t: 'changed'; topic: string };

/** A storage served to other threads. */
export interface StorageServer {
  /** A new connection: hand the returned port to a worker (transfer it) and build {@link remoteStorage} on it there. */
  connect(): MessagePort;
  /** Close every connection (the storage itself stays open: its owner closes it). */
  close(): void;
}

/** Serve `storage` to other threads. */
export function serveStorage(storage: Storage): StorageServer {
  const ports = new Set<MessagePort>();
  return {
    connect() {
      const { port1, port2 } = new MessageChannel();
      const subscriptions = new Map<string, () => void>();
      ports.add(port1);
      port1.on('message', (message: ToOwner) => {
        if (message.t === 'sub') {
          if (!subscriptions.has(message.topic)) subscriptions.set(message.topic, storage.subscribe(message.topic, () => port1.postMessage({ t: 'changed', topic: message.topic } satisfies FromOwner)));
        } else if (message.t === 'unsub') {
          subscriptions.get(message.topic)?.();
          subscriptions.delete(message.topic);
        } else if (message.t === 'call' && METHOD_SET.has(message.method)) {
          const run =
            message.method === 'loadHeadAndUpdates'
              ? loadHeadAndUpdates(storage, ...(message.args as [string, number]))
              : message.method === 'takeCount' && storage.takeCount === undefined
              ? takeCountByRevision(storage, ...(message.args as [string, string, number, number]))
              : (storage[message.method] as (...args: unknown[]) => Promise<unknown>).apply(storage, message.args);
          run.then(
            (value) => port1.postMessage({ t: 'ok', id: message.id, value } satisfies FromOwner),
            (e: unknown) => {
              const err = e instanceof Error ? e : new Error(String(e));
              const reply: FromOwner = { t: 'err', id: message.id, name: err.name, message: err.message };
              if (typeof (e as { opIndex?: unknown }).opIndex === 'number') reply.opIndex = (e as { opIndex: number }).opIndex;
              port1.postMessage(reply);
            },
          );
        }
      });
      port1.on('close', () => {
        for (const off of subscriptions.values()) off();
        subscriptions.clear();
        ports.delete(port1);
      });
      return port2;
    },
    close() {
      for (const port of ports) port.close();
      ports.clear();
    },
  };
}

function revive(reply: Extract<FromOwner, { t: 'err' }>): Error {
  if (reply.name === 'StorageConflictError') return new StorageConflictError(reply.message, reply.opIndex ?? 0);
  if (reply.name === 'RangeError') return new RangeError(reply.message);
  if (reply.name === 'TypeError') return new TypeError(reply.message);
  const e = new Error(reply.message);
  e.name = reply.name;
  return e;
}

/**
 * A {@link Storage} that forwards every call over `port` to a {@link serveStorage} owner.
 * @remarks `close()` closes this connection only; the owner's storage stays open for others.
 */
export function remoteStorage(port: MessagePort): Storage {
  let nextId = 1;
  let closed = false;
  const pending = new Map<number, { resolve(value: unknown): void; reject(e: Error): void }>();
  const listeners = new Map<string, Set<() => void>>();
  port.on('message', (message: FromOwner) => {
    if (message.t === 'changed') {
      for (const listener of [...(listeners.get(message.topic) ?? [])]) {
        try {
          listener();
        } catch {
          // a listener that throws is ignored (the port's rule)
        }
      }
      return;
    }
    const p = pending.get(message.id);
    if (!p) return;
    pending.delete(message.id);
    if (message.t === 'ok') p.resolve(message.value);
    else p.reject(revive(message));
  });
  port.on('close', () => {
    closed = true;
    for (const p of pending.values()) p.reject(new Error('remote storage: the connection to the storage owner closed'));
    pending.clear();
  });
  const inflight = new Set<Promise<unknown>>();
  const call = (method: Method, args: unknown[]): Promise<never> => {
    if (closed) return Promise.reject(new Error('remote storage: closed'));
    const id = nextId++;
    const promise = new Promise<never>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      port.postMessage({ t: 'call', id, method, args } satisfies ToOwner);
    });
    inflight.add(promise);
    const forget = () => inflight.delete(promise);
    promise.then(forget, forget);
    return promise;
  };
  const storage: Record<string, unknown> = { sharedByProcesses: true };
  for (const method of METHODS) storage[method] = (...args: unknown[]) => call(method, args);
  storage.subscribe = (topic: string, listener: () => void) => {
    if (closed) throw new Error('remote storage: closed');
    let set = listeners.get(topic);
    if (!set) {
      set = new Set();
      listeners.set(topic, set);
      port.postMessage({ t: 'sub', topic } satisfies ToOwner);
    }
    set.add(listener);
    return () => {
      const s = listeners.get(topic);
      if (!s?.delete(listener) || s.size > 0) return;
      listeners.delete(topic);
      if (!closed) port.postMessage({ t: 'unsub', topic } satisfies ToOwner);
    };
  };
  let closing: Promise<void> | null = null;
  // Calls already sent finish (a commit under way is applied and answered); later calls reject.
  storage.close = () =>
    (closing ??= (async () => {
      closed = true;
      await Promise.allSettled([...inflight]);
      port.close();
    })());
  return storage as unknown as Storage;
}
