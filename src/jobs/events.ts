/**
 * Reading a job's events: bounded pages after a cursor, and following them live. Following goes
 * through the process's event hub (one change subscription per job, see event-hub.ts) and ends
 * after the terminal event.
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import { invalid } from '../errors.ts';
import type { EventHub } from './event-hub.ts';
import { TERMINAL_EVENT_KINDS, isTerminal } from './states.ts';
import type { ResearchJobEvent, ResearchJobEventPage } from './schemas.ts';
import { eventStreamOf, type StoredJob } from './store.ts';

/** The most events one page holds. */
import { EVENT_PAGE_MAX } from '../limits.ts';
export { EVENT_PAGE_MAX };

const CURSOR = /^(0|[1-9][0-9]{0,15})$/;

/**
 * Check an event cursor (`after`, or Last-Event-ID at the edge) against the job's stream.
 * @returns the sequence it names (0 for "from the start").
 * @throws INVALID_REQUEST for anything but a decimal sequence of an existing event (or 0).
 * @param field the field to name in the error (the edge may pass `headers.Last_Event_ID`).
 */
export function parseEventCursor(after: string | undefined, head: number, field = 'after'): number {
  if (after === undefined) return 0;
  if (typeof after !== 'string' || !CURSOR.test(after)) {
    throw invalid('An event cursor is the decimal eventId of an earlier event of this job.', [{ field, message: 'must be a decimal event sequence' }]);
  }
  const seq = Number(after);
  if (seq > head) {
    throw invalid(`Event ${after} does not exist in this job's history (its last event is ${head}).`, [
      { field, message: 'is not an event of this job' },
    ]);
  }
  return seq;
}

/** Parse a page size: 1-256, default 256. */
export function parseEventLimit(limit: number | undefined): number {
  if (limit === undefined) return EVENT_PAGE_MAX;
  if (!Number.isInteger(limit) || limit < 1 || limit > EVENT_PAGE_MAX) {
    throw invalid(`limit must be an integer from 1 to ${EVENT_PAGE_MAX}.`, [{ field: 'limit', message: `must be an integer from 1 to ${EVENT_PAGE_MAX}` }]);
  }
  return limit;
}

/** One page of events of `stored` after `afterSeq`. */
export async function eventPage(deps: EngineDeps, stored: StoredJob, afterSeq: number, limit: number): Promise<ResearchJobEventPage> {
  const entries = await deps.storage.readStream<ResearchJobEvent>(eventStreamOf(stored.job.jobId), afterSeq, limit);
  const items = entries.map((e) => e.value);
  const lastSeq = entries.length ? entries[entries.length - 1]!.seq : afterSeq;
  const finished = isTerminal(stored.job.state) && lastSeq >= stored.seq;
  return { items, nextCursor: finished ? null : String(lastSeq) };
}

/** A follower that has this many events waiting pauses its feed, and resumes below half of it. */
const FOLLOW_BUFFER = 512;

/**
 * Follow a job's events after `afterSeq` through the process's {@link EventHub} until its terminal
 * event, or until `signal` aborts (then the iterator just ends). Ends at once when `afterSeq` is the
 * terminal event.
 */
export async function* followEvents(hub: EventHub, jobId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<ResearchJobEvent, void, undefined> {
  let queue: ResearchJobEvent[] = [];
  let at = 0;
  let ended = false;
  let failure: { cause: unknown } | null = null;
  let paused = false;
  let wake: (() => void) | null = null;
  const feed = hub.open(jobId, afterSeq, {
    events(batch) {
      for (const event of batch) queue.push(event);
      if (!paused && queue.length - at >= FOLLOW_BUFFER) {
        paused = true;
        feed.pause();
      }
      wake?.();
    },
    end() {
      ended = true;
      wake?.();
    },
    error(cause) {
      failure = { cause };
      wake?.();
    },
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    while (!signal?.aborted) {
      if (at < queue.length) {
        const event = queue[at++]!;
        if (at === queue.length) [queue, at] = [[], 0];
        if (paused && queue.length - at < FOLLOW_BUFFER / 2) {
          paused = false;
          feed.resume();
        }
        yield event;
        if (TERMINAL_EVENT_KINDS.has(event.kind)) return;
        continue;
      }
      if (failure) throw (failure as { cause: unknown }).cause;
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    feed.close();
  }
}
