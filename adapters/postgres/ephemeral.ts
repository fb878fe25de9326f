/**
 * {@link Storage.publishEphemeral} and {@link Storage.subscribeEphemeral} on PostgreSQL: NOTIFY on a
 * channel of its own per ephemeral channel (`kw_e_` and 40 hex digits of the name's SHA-256), so a
 * process LISTENs, and is woken, only for the channels it subscribed to. Nothing is written to a
 * table: a payload travels in the notification itself, base64; one longer than a notification holds
 * (PostgreSQL's limit is 8000 bytes) travels as numbered chunks sent by one statement, hence one
 * transaction, whose notifications PostgreSQL delivers together and in order.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Storage } from '../../src/ports.ts';
import { isConnectionFailure, unavailable, type SqlDriver } from './driver.ts';

/** Base64 characters per notification (under PostgreSQL's 8000-byte payload limit with the chunk header). */
const CHUNK = 7_000;
/** A chunked payload not complete after this long is dropped (its transaction's notifications arrive together). */
const PARTIAL_MS = 30_000;
/** At most this many chunked payloads being put together per channel. */
const MAX_PARTIAL = 64;

/** The PostgreSQL channel of an ephemeral channel. */
export function ephemeralChannel(channel: string): string {
  return `kw_e_${createHash('sha256').update(channel).digest('hex').slice(0, 40)}`;
}

/** A Buffer's bytes as a plain Uint8Array (what the port hands out). */
const plain = (b: Buffer) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

interface Listener {
  deliver: (payload: Uint8Array) => void;
  lost?: () => void;
}

interface Channel {
  listeners: Set<Listener>;
  partial: Map<string, { parts: (string | undefined)[]; got: number; at: number }>;
}

/** The two port members on `driver`; `closed` says when the storage was closed (the driver then ends every LISTEN). */
export function postgresEphemeral(driver: SqlDriver, closed: () => boolean): Pick<Required<Storage>, 'publishEphemeral' | 'subscribeEphemeral'> {
  const channels = new Map<string, Channel>();

  const deliver = (ch: Channel, bytes: Uint8Array) => {
    for (const l of [...ch.listeners]) {
      try {
        l.deliver(bytes);
      } catch {
        // Listeners must not throw; one that does must not stop the others.
      }
    }
  };
  const lost = (ch: Channel) => {
    ch.partial.clear();
    for (const l of [...ch.listeners]) {
      try {
        l.lost?.();
      } catch {
        // as above
      }
    }
  };

  function onNotify(ch: Channel, payload: string): void {
    if (payload.startsWith('=')) return deliver(ch, plain(Buffer.from(payload.slice(1), 'base64')));
    // `~id:index:count:piece`
    const m = /^~([0-9a-f]+):(\d+):(\d+):/.exec(payload);
    if (m === null) return;
    const [head, id, i, n] = [m[0], m[1]!, Number(m[2]), Number(m[3])];
    if (!(n > 1 && n <= 100_000 && i < n)) return;
    const now = Date.now();
    for (const [k, p] of ch.partial) if (now - p.at > PARTIAL_MS) ch.partial.delete(k);
    let p = ch.partial.get(id);
    if (p === undefined) {
      if (ch.partial.size >= MAX_PARTIAL) ch.partial.delete(ch.partial.keys().next().value!);
      p = { parts: new Array<string | undefined>(n), got: 0, at: now };
      ch.partial.set(id, p);
    }
    if (p.parts.length !== n || p.parts[i] !== undefined) return;
    p.parts[i] = payload.slice(head.length);
    if (++p.got < n) return;
    ch.partial.delete(id);
    deliver(ch, plain(Buffer.from(p.parts.join(''), 'base64')));
  }

  return {
    async publishEphemeral(channel, payload) {
      if (closed()) throw new Error('postgres storage is closed');
      if (typeof channel !== 'string') throw new TypeError('publishEphemeral: channel must be a string');
      if (!(payload instanceof Uint8Array)) throw new TypeError('publishEphemeral: payload must be a Uint8Array');
      const wire = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('base64');
      const name = ephemeralChannel(channel);
      try {
        if (wire.length <= CHUNK) {
          await driver.query('SELECT pg_notify($1, $2)', [name, `=${wire}`]);
          return;
        }
        const id = randomBytes(8).toString('hex');
        const n = Math.ceil(wire.length / CHUNK);
        const pieces = Array.from({ length: n }, (_, i) => `~${id}:${i}:${n}:${wire.slice(i * CHUNK, (i + 1) * CHUNK)}`);
        // One statement: one transaction, whose notifications arrive together, in order.
        await driver.query('SELECT count(pg_notify($1, p)) AS sent FROM unnest($2::text[]) AS p', [name, pieces]);
      } catch (error) {
        throw isConnectionFailure(error) ? unavailable(error) : error;
      }
    },

    subscribeEphemeral(channel, listener, onLost) {
      if (closed()) throw new Error('postgres storage is closed');
      if (typeof channel !== 'string') throw new TypeError('subscribeEphemeral: channel must be a string');
      if (typeof listener !== 'function') throw new TypeError('subscribeEphemeral: listener must be a function');
      const name = ephemeralChannel(channel);
      let ch = channels.get(name);
      if (ch === undefined) {
        const created: Channel = { listeners: new Set(), partial: new Map() };
        ch = created;
        channels.set(name, created);
        // The LISTEN connection stays until the storage closes (the driver reconnects it and then
        // reports a loss); a first LISTEN that fails is a loss too, and is tried again.
        const start = (): void => {
          driver.listen(name, (payload) => onNotify(created, payload), () => lost(created)).catch(() => {
            lost(created);
            if (!closed()) setTimeout(start, 1_000).unref?.();
          });
        };
        start();
      }
      const entry: Listener = { deliver: (p) => listener(p), ...(onLost ? { lost: onLost } : {}) };
      ch.listeners.add(entry);
      return () => {
        ch.listeners.delete(entry);
      };
    },
  };
}
