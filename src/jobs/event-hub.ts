/**
 * The process's event hub: one change subscription per followed job, however many followers it has.
 * Each job's channel subscribes once to the job's stream topic, reads the new entries once per
 * notification and hands the same (frozen) event objects, in the same array, to every attached feed.
 * A feed that starts from an older position first catches up from storage in pages, then joins the
 * channel; a feed whose consumer is backed up pauses (leaves the channel) and catches up again when
 * it resumes. Either way a feed's events are strictly increasing, without gaps or duplicates.
 * @module
 */
import type { Storage } from '../ports.ts';
import { freezeRecordValue, streamTopic } from '../ports.ts';
import type { ResearchJobEvent } from './schemas.ts';
import { TERMINAL_EVENT_KINDS } from './states.ts';
import { eventStreamOf } from './store.ts';

/** Entries read per storage call (the job event page size). */
const PAGE = 256;

/** Where a feed's events go. The hub never calls a sink synchronously from {@link EventHub.open}. */
export interface EventSink {
  /**
   * The next events, in order, right after the previous ones. The array and its events may be shared
   * with other sinks: read them, never mutate them (live events are frozen).
   */
  events(batch: readonly ResearchJobEvent[]): void;
  /** Nothing will follow: the feed started at or after the job's terminal event. */
  end(): void;
  /** Reading the job's events failed; the feed is closed. */
  error(cause: unknown): void;
}

/** One follower's position in a job's events. */
export interface EventFeed {
  /** The sequence of the last event handed to the sink (the starting position before any). */
  readonly position: number;
  /** Stop delivering (the consumer is backed up); nothing is lost, {@link resume} continues from storage. */
  pause(): void;
  /** Continue after {@link pause}: catch up from storage, then rejoin the live channel. */
  resume(): void;
  /** Stop for good and release the job's subscription if this was its last feed. Idempotent. */
  close(): void;
}

/** The hub: feeds over shared per-job channels. */
export interface EventHub {
  /** Follow `jobId`'s events after `afterSeq` (0 = from the start) into `sink`. The feed closes itself after the terminal event. */
  open(jobId: string, afterSeq: number, sink: EventSink): EventFeed;
  /** The number of jobs with a live storage subscription right now. */
  readonly channels: number;
}

/** Options of {@link createEventHub}. */
export interface EventHubOptions {
  /**
   * Stream deliveries per second one job's channel aims to stay under (default 20,000). A channel
   * with n feeds reads new events at most once per n / writesPerSecond seconds (capped by
   * `maxCoalesceMs`): an event after a quiet spell goes out at once, the events of a burst are
   * gathered and handed over together, so each stream gets one write per window instead of one per
   * event. With few followers the window is a fraction of a millisecond.
   */
  writesPerSecond?: number;
  /** The longest window, in ms (default 50): the most a burst's event waits for its batch. */
  maxCoalesceMs?: number;
}

/** Build a hub over `storage` (one per process and storage). */
export function createEventHub(storage: Storage, options: EventHubOptions = {}): EventHub {
  const pacing: Pacing = { writesPerSecond: options.writesPerSecond ?? 20_000, maxCoalesceMs: options.maxCoalesceMs ?? 50 };
  if (!(pacing.writesPerSecond > 0) || !(pacing.maxCoalesceMs >= 0)) throw new RangeError('writesPerSecond must be positive and maxCoalesceMs at least 0');
  const channels = new Map<string, Channel>();
  const hub = {
    storage,
    channelOf(jobId: string, position: number): Channel {
      let channel = channels.get(jobId);
      if (!channel) {
        channel = new Channel(storage, pacing, jobId, position, () => channels.delete(jobId));
        channels.set(jobId, channel);
      }
      return channel;
    },
  };
  return {
    open(jobId, afterSeq, sink) {
      const feed = new Feed(hub, jobId, afterSeq, sink);
      feed.resume();
      return feed;
    },
    get channels() {
      return channels.size;
    },
  };
}

interface Pacing {
  writesPerSecond: number;
  maxCoalesceMs: number;
}

interface HubInternals {
  storage: Storage;
  channelOf(jobId: string, position: number): Channel;
}

const isTerminalEvent = (event: ResearchJobEvent | undefined) => event !== undefined && TERMINAL_EVENT_KINDS.has(event.kind);

/** One job's live subscription and the feeds attached to it. */
class Channel {
  readonly feeds = new Set<Feed>();
  private dirty = false;
  private pumping = false;
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastPump = -Infinity;
  private readonly stream: string;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly storage: Storage,
    private readonly pacing: Pacing,
    jobId: string,
    /** The sequence of the last entry delivered (or known to every attached feed). */
    public lastSeq: number,
    private readonly onClose: () => void,
  ) {
    this.stream = eventStreamOf(jobId);
    this.unsubscribe = storage.subscribe(streamTopic(this.stream), () => this.changed());
    this.changed(); // appends between the creator's last read and the subscription are read now
  }

  attach(feed: Feed): void {
    this.feeds.add(feed);
  }

  detach(feed: Feed): void {
    if (!this.feeds.delete(feed) || this.feeds.size > 0) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.unsubscribe();
    this.onClose();
  }

  /** Pump now, or — within one window of the last pump (see {@link EventHubOptions}) — once it has passed. */
  private changed(): void {
    this.dirty = true;
    if (this.pumping || this.timer || this.closed) return;
    const { writesPerSecond, maxCoalesceMs } = this.pacing;
    const windowMs = Math.min(maxCoalesceMs, (this.feeds.size * 1000) / writesPerSecond);
    const wait = this.lastPump + windowMs - performance.now();
    if (wait <= 0) {
      this.pumping = true;
      queueMicrotask(() => void this.pump());
    } else {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.pumping = true;
        void this.pump();
      }, wait);
    }
  }

  private async pump(): Promise<void> {
    this.lastPump = performance.now();
    try {
      while (this.dirty && !this.closed) {
        this.dirty = false;
        const entries = await this.storage.readStream<ResearchJobEvent>(this.stream, this.lastSeq, PAGE);
        if (this.closed) return;
        if (entries.length === PAGE) this.dirty = true; // more may be waiting already
        if (entries.length === 0) continue;
        const first = this.lastSeq + 1;
        const batch = entries.map((entry) => freezeRecordValue(entry.value));
        this.lastSeq = entries[entries.length - 1]!.seq;
        for (const feed of this.feeds) feed.live(batch, first);
        if (entries.length < PAGE) break; // what arrived meanwhile waits for the next window
      }
    } catch (cause) {
      for (const feed of [...this.feeds]) feed.fail(cause);
    } finally {
      this.pumping = false;
    }
    if (this.dirty && !this.closed) this.changed();
  }
}

type FeedState = 'catching-up' | 'live' | 'paused' | 'closed';

class Feed implements EventFeed {
  private state: FeedState = 'paused';
  private reading = false;
  /** The first read also fetches the entry at the start position, to see whether it was the terminal one. */
  private checkStart: boolean;
  private channel: Channel | null = null;

  constructor(
    private readonly hub: HubInternals,
    private readonly jobId: string,
    public position: number,
    private readonly sink: EventSink,
  ) {
    this.checkStart = position > 0;
  }

  pause(): void {
    if (this.state === 'closed') return;
    this.leave();
    this.state = 'paused';
  }

  resume(): void {
    if (this.state !== 'paused') return;
    this.state = 'catching-up';
    void this.catchUp();
  }

  close(): void {
    this.leave();
    this.state = 'closed';
  }

  /** A batch of the channel: events `first`, `first + 1`, … */
  live(batch: readonly ResearchJobEvent[], first: number): void {
    if (this.state !== 'live') return;
    const skip = this.position - first + 1; // a feed that joined ahead of the channel already has these
    if (skip >= batch.length) return;
    this.deliver(skip > 0 ? batch.slice(skip) : batch, first + batch.length - 1);
  }

  fail(cause: unknown): void {
    if (this.state === 'closed') return;
    this.close();
    this.sink.error(cause);
  }

  private leave(): void {
    this.channel?.detach(this);
    this.channel = null;
  }

  private deliver(batch: readonly ResearchJobEvent[], last: number): void {
    this.position = last;
    if (isTerminalEvent(batch[batch.length - 1])) this.close(); // nothing can follow
    try {
      this.sink.events(batch);
    } catch (cause) {
      this.fail(cause);
    }
  }

  private async catchUp(): Promise<void> {
    if (this.reading) return; // the read in flight continues for the resumed feed
    this.reading = true;
    try {
      while (this.state === 'catching-up') {
        const from = this.checkStart ? this.position - 1 : this.position;
        const entries = await this.hub.storage.readStream<ResearchJobEvent>(eventStreamOf(this.jobId), from, PAGE);
        if (this.state !== 'catching-up') return;
        let rest = entries;
        if (this.checkStart) {
          this.checkStart = false;
          const start = entries[0];
          if (start?.seq === this.position && isTerminalEvent(start.value)) {
            this.close();
            this.sink.end();
            return;
          }
          rest = entries.filter((entry) => entry.seq > this.position);
        }
        if (rest.length > 0) {
          this.deliver(rest.map((entry) => entry.value), rest[rest.length - 1]!.seq);
          if (this.state !== 'catching-up') return;
        }
        if (entries.length < PAGE) {
          const channel = this.hub.channelOf(this.jobId, this.position);
          if (this.position >= channel.lastSeq) {
            // Every later batch of the channel starts at or before position + 1: no gap, and live() skips what we have.
            this.channel = channel;
            channel.attach(this);
            this.state = 'live';
            return;
          }
        }
      }
    } catch (cause) {
      this.fail(cause);
    } finally {
      this.reading = false;
    }
  }
}
