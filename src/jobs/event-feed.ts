/**
 * One follower's feed of a job's events for the event hub (event-hub.ts): catches up from storage in pages,
 * joins the job's live channel once level with it, leaves it while paused, and closes itself after
 * the terminal event.
 * @module
 */
import type { Storage } from '../ports.ts';
import type { ResearchJobEvent } from './schemas.ts';
import { TERMINAL_EVENT_KINDS } from './states.ts';
import { eventStreamOf } from './store.ts';

/** Entries read per storage call (the job event page size). */
export const PAGE = 256;

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

/** What a feed needs of a job's live channel. */
export interface LiveChannel {
  /** The sequence of the last entry the channel delivered (or that every attached feed has). */
  readonly lastSeq: number;
  attach(feed: Feed): void;
  detach(feed: Feed): void;
}

/** What a feed needs of its hub. */
export interface HubInternals {
  storage: Storage;
  /** The job's channel, created at `position` (subscribed, reading once at once) when it has none. */
  channelOf(jobId: string, position: number): LiveChannel;
}

const isTerminalEvent = (event: ResearchJobEvent | undefined) => event !== undefined && TERMINAL_EVENT_KINDS.has(event.kind);

type FeedState = 'catching-up' | 'live' | 'paused' | 'closed';

/** A feed (see {@link EventFeed}); created paused, {@link Feed.resume} starts it. */
export class Feed implements EventFeed {
  private state: FeedState = 'paused';
  private reading = false;
  /** The first read also fetches the entry at the start position, to see whether it was the terminal one. */
  private checkStart: boolean;
  private channel: LiveChannel | null = null;

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
    if (skip < 0) {
      // Cannot happen while feeds join only level with their channel; were it to, a gap is read, not skipped.
      this.leave();
      this.state = 'catching-up';
      void this.catchUp();
      return;
    }
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
