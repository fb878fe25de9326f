import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryStorage } from '../../adapters/memory/index.ts';
import type { Storage } from '../ports.ts';
import { Feed, type LiveChannel } from './event-feed.ts';
import { createEventHub, type EventFeed, type EventHubOptions } from './event-hub.ts';
import type { ResearchJobEvent } from './schemas.ts';
import { eventStreamOf } from './store.ts';

const JOB = 'kjob_hub';

/** Memory storage that counts live subscriptions and stream reads. */
function countingStorage() {
  const inner = memoryStorage();
  const counts = { subscriptions: 0, reads: 0 };
  const storage: Storage = {
    ...inner,
    readStream(stream, afterSeq, limit) {
      counts.reads++;
      return inner.readStream(stream, afterSeq, limit);
    },
    subscribe(topic, listener) {
      const off = inner.subscribe(topic, listener);
      counts.subscriptions++;
      let on = true;
      return () => {
        if (on) counts.subscriptions--;
        on = false;
        off();
      };
    },
  };
  let head = 0;
  /** Append events `head+1 … head+n` in one batch (the last one terminal when asked). */
  const append = (n: number, terminal = false) =>
    storage.commit(
      Array.from({ length: n }, (_, i) => {
        const seq = ++head;
        const kind = terminal && i === n - 1 ? 'job.succeeded' : 'job.progress';
        return { kind: 'stream.append' as const, stream: eventStreamOf(JOB), seq, value: { eventId: String(seq), kind } };
      }),
    );
  return { storage, counts, append };
}

/** A feed recorder: every batch, every event id, and whether it ended or failed. */
function recorder() {
  const batches: (readonly ResearchJobEvent[])[] = [];
  const ids: number[] = [];
  const state = { ended: false, failure: null as unknown };
  let waiters: (() => void)[] = [];
  const wake = () => {
    const w = waiters;
    waiters = [];
    w.forEach((f) => f());
  };
  return {
    batches,
    ids,
    state,
    sink: {
      events(batch: readonly ResearchJobEvent[]) {
        batches.push(batch);
        for (const e of batch) ids.push(Number(e.eventId));
        wake();
      },
      end() {
        state.ended = true;
        wake();
      },
      error(cause: unknown) {
        state.failure = cause;
        wake();
      },
    },
    /** Wait until `probe()` holds (bounded). */
    async until(probe: () => boolean, ms = 2000): Promise<void> {
      const deadline = Date.now() + ms;
      while (!probe()) {
        if (Date.now() > deadline) throw new Error(`timed out with ids ${ids.join(',')}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 20);
        });
      }
    },
  };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const fast: EventHubOptions = { maxCoalesceMs: 0 };

test('many feeds on one job share one subscription, one read per change and the very same event objects', async () => {
  const { storage, counts, append } = countingStorage();
  const hub = createEventHub(storage, fast);
  const feeds = Array.from({ length: 50 }, () => recorder());
  for (const f of feeds) hub.open(JOB, 0, f.sink);
  await Promise.all(feeds.map((f) => f.until(() => f.batches.length === 0 && counts.subscriptions === 1)));
  await new Promise((r) => setTimeout(r, 10));
  assert.is(counts.subscriptions, 1);
  assert.is(hub.channels, 1);
  const readsBefore = counts.reads;
  await append(1);
  await Promise.all(feeds.map((f) => f.until(() => f.ids.length === 1)));
  assert.is(counts.reads - readsBefore, 1, 'one read for all feeds');
  await append(3);
  await Promise.all(feeds.map((f) => f.until(() => f.ids.length === 4)));
  for (const f of feeds) {
    assert.equal(f.ids, [1, 2, 3, 4]);
    assert.is(f.batches.at(-1), feeds[0]!.batches.at(-1), 'the same batch array for every feed');
  }
  assert.ok(Object.isFrozen(feeds[0]!.batches[0]![0]), 'shared events are frozen');
});

test('a late joiner from an old cursor gets the backlog in pages, then live events, without gaps or duplicates', async () => {
  const { storage, append } = countingStorage();
  const hub = createEventHub(storage, fast);
  const early = recorder();
  hub.open(JOB, 0, early.sink);
  await append(600); // more than two pages
  await early.until(() => early.ids.length === 600);
  const late = recorder();
  hub.open(JOB, 5, late.sink);
  // Appends keep coming while the late feed catches up.
  for (let i = 0; i < 20; i++) {
    await append(7);
    await new Promise((r) => setImmediate(r));
  }
  await append(1, true);
  await late.until(() => late.ids.at(-1) === 741);
  await early.until(() => early.ids.at(-1) === 741);
  assert.equal(late.ids, range(6, 741));
  assert.equal(early.ids, range(1, 741));
  assert.is(hub.channels, 0, 'both feeds closed themselves after the terminal event');
});

test('the hub unsubscribes when the last feed leaves, and subscribes again for the next one', async () => {
  const { storage, counts, append } = countingStorage();
  const hub = createEventHub(storage, fast);
  const a = recorder();
  const b = recorder();
  const fa = hub.open(JOB, 0, a.sink);
  const fb = hub.open(JOB, 0, b.sink);
  await append(1);
  await a.until(() => a.ids.length === 1);
  await b.until(() => b.ids.length === 1);
  fa.close();
  assert.is(counts.subscriptions, 1);
  fb.close();
  fb.close();
  assert.is(counts.subscriptions, 0);
  assert.is(hub.channels, 0);
  const c = recorder();
  hub.open(JOB, 1, c.sink);
  await append(1);
  await c.until(() => c.ids.length === 1);
  assert.equal(c.ids, [2]);
  assert.is(counts.subscriptions, 1);
});

test('a feed closed midway does not disturb the others; a paused feed catches up without loss', async () => {
  const { storage, append } = countingStorage();
  const hub = createEventHub(storage, fast);
  const recs = [recorder(), recorder(), recorder()];
  const feeds: EventFeed[] = recs.map((r) => hub.open(JOB, 0, r.sink));
  await append(2);
  await Promise.all(recs.map((r) => r.until(() => r.ids.length === 2)));
  feeds[1]!.close();
  feeds[2]!.pause();
  await append(2);
  await recs[0]!.until(() => recs[0]!.ids.length === 4);
  assert.is(recs[2]!.ids.length, 2, 'paused: nothing delivered');
  feeds[2]!.resume();
  await append(1);
  await recs[0]!.until(() => recs[0]!.ids.length === 5);
  await recs[2]!.until(() => recs[2]!.ids.length === 5);
  assert.equal(recs[0]!.ids, [1, 2, 3, 4, 5]);
  assert.equal(recs[1]!.ids, [1, 2]);
  assert.equal(recs[2]!.ids, [1, 2, 3, 4, 5]);
});

test('a burst is handed over in one batch per window; a feed starting after the terminal event just ends', async () => {
  const { storage, counts, append } = countingStorage();
  const hub = createEventHub(storage, { writesPerSecond: 1, maxCoalesceMs: 60 });
  const r = recorder();
  hub.open(JOB, 0, r.sink);
  await append(1);
  await r.until(() => r.ids.length === 1);
  const reads = counts.reads;
  for (let i = 0; i < 5; i++) await append(1);
  await r.until(() => r.ids.length === 6);
  assert.is(r.batches.length, 2, 'the burst came as one batch');
  assert.is(counts.reads - reads, 1);
  await append(1, true);
  await r.until(() => r.ids.length === 7);
  const after = recorder();
  hub.open(JOB, 7, after.sink);
  await after.until(() => after.state.ended);
  assert.equal(after.ids, []);
  assert.is(hub.channels, 0);
});

test('a storage failure reaches every feed as an error', async () => {
  const { storage, append } = countingStorage();
  const hub = createEventHub(storage, fast);
  const r = recorder();
  hub.open(JOB, 0, r.sink);
  await append(1);
  await r.until(() => r.ids.length === 1);
  await storage.close();
  const late = recorder();
  hub.open(JOB, 0, late.sink);
  await late.until(() => late.state.failure !== null);
  assert.instance(late.state.failure, Error);
});

test('a live batch that would leave a gap is read from storage instead of skipped', async () => {
  const { storage, append } = countingStorage();
  await append(2);
  const channel: LiveChannel & { lastSeq: number; feeds: Set<Feed> } = { lastSeq: 2, feeds: new Set(), attach: (f) => channel.feeds.add(f), detach: (f) => channel.feeds.delete(f) };
  const r = recorder();
  const feed = new Feed({ storage, channelOf: () => channel }, JOB, 0, r.sink);
  feed.resume();
  await r.until(() => channel.feeds.size === 1);
  await append(3);
  const [fifth] = await storage.readStream<ResearchJobEvent>(eventStreamOf(JOB), 4, 1);
  channel.lastSeq = 5;
  feed.live([fifth!.value], 5); // events 3 and 4 never came live
  await r.until(() => r.ids.length === 5);
  assert.equal(r.ids, [1, 2, 3, 4, 5]);
});

test.run();
