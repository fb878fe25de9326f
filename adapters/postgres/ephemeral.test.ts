/**
 * The storage's ephemeral channel (publishEphemeral / subscribeEphemeral), as live co-editing
 * across processes uses it: on PostgreSQL between two storages on one database (two processes'
 * worth), a payload reaches the other storage's listener of its channel and no other channel's; one
 * far past NOTIFY's 8000-byte limit arrives whole (chunks of one transaction); payloads one storage
 * publishes one after another arrive in order. The in-process adapters (memory) keep the same shape.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../memory/index.ts';
import type { Storage } from '../../src/ports.ts';
import { storageHome, suiteStorages } from './postgres-kit.ts';

const home = await storageHome();
const { open } = suiteStorages(home, test);

/** Wait until `ready` holds, polling; at most `ms`. */
async function until(ready: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!ready()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function exercise(a: Storage, b: Storage): Promise<void> {
  const got: Uint8Array[] = [];
  const other: Uint8Array[] = [];
  b.subscribeEphemeral!('kw-sync:one', (p) => got.push(p));
  b.subscribeEphemeral!('kw-sync:two', (p) => other.push(p));
  // The LISTEN of a new channel starts in the background: publish until the first arrives.
  await until(() => {
    if (got.length === 0) void a.publishEphemeral!('kw-sync:one', Uint8Array.of(0));
    return got.length > 0;
  }, 'the first payload');
  got.length = 0;
  const big = new Uint8Array(200_000).map((_, i) => (i * 7919) % 251);
  for (let i = 1; i <= 20; i++) await a.publishEphemeral!('kw-sync:one', Uint8Array.of(i, i));
  await a.publishEphemeral!('kw-sync:one', big);
  // (late probes of one byte may still come in: only the payloads of two bytes and the big one count)
  const ours = () => got.filter((p) => p.byteLength > 1);
  await until(() => ours().length >= 21, 'twenty-one payloads');
  assert.equal(ours().slice(0, 20).map((p) => p[0]), Array.from({ length: 20 }, (_, i) => i + 1), 'in the order published');
  assert.equal(ours()[20], big, 'a payload 25× the NOTIFY limit arrives whole');
  assert.is(other.length, 0, 'nothing on another channel');
}

test('ephemeral channel: memory storage (one process)', async () => {
  const s = memoryStorage();
  await exercise(s, s);
  await s.close();
  const after = await s.publishEphemeral!('x', Uint8Array.of(1)).then(() => 'published', (e: Error) => e.message);
  assert.is(after, 'storage is closed');
});

test(`ephemeral channel: two PostgreSQL storages on one database (${home.kind})`, async () => {
  const a = await open();
  const b = await open();
  await exercise(a, b);
});

test.run();
