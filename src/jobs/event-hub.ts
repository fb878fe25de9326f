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
import { Feed, PAGE, type EventFeed, type EventSink, type HubInternals, type LiveChannel } from './event-feed.ts';
import type { ResearchJobEvent } from './schemas.ts';
import { eventStreamOf } from './store.ts';

export type { EventFeed, EventSink } from './event-feed.ts';

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

/** The default pacing of a job's reads under fan-out (see `createEventHub`). */
import { DEFAULT_PACING } from '../limits.ts';
export { DEFAULT_PACING };

/** Build a hub over `storage` (one per process and storage). */
export function createEventHub(storage: Storage, options: EventHubOptions = {}): EventHub {
  const pacing: Pacing = { writesPerSecond: options.writesPerSecond ?? DEFAULT_PACING.writesPerSecond, maxCoalesceMs: options.maxCoalesceMs ?? DEFAULT_PACING.maxCoalesceMs };
  if (!(pacing.writesPerSecond > 0) || !(pacing.maxCoalesceMs >= 0)) throw new RangeError('writesPerSecond must be positive and maxCoalesceMs at least 0');
  const channels = new Map<string, Channel>();
  const hub: HubInternals = {
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

/** One job's live subscription and the feeds attached to it. */
class Channel implements LiveChannel {
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
