/**
 * Reading a job's events: bounded pages after a cursor, and following them live. Following waits on
 * the storage port's change notification for the job's stream (no polling sleep loop) and ends
 * after the terminal event.
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import { invalid } from '../errors.ts';
import { streamTopic } from '../ports.ts';
import { TERMINAL_EVENT_KINDS, isTerminal } from './states.ts';
import type { ResearchJobEvent, ResearchJobEventPage } from './schemas.ts';
import { eventStreamOf, type StoredJob } from './store.ts';

/** The most events one page holds. */
export const EVENT_PAGE_MAX = 256;

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

/**
 * Follow a job's events after `afterSeq` until its terminal event, or until `signal` aborts (then the
 * iterator just ends).
 * @remarks Subscribes before each read, so an append between the read and the wait is not missed.
 */
export async function* followEvents(deps: EngineDeps, jobId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<ResearchJobEvent, void, undefined> {
  const stream = eventStreamOf(jobId);
  if (afterSeq > 0) {
    // Resuming after the terminal event: the history is complete, there is nothing to wait for.
    const [last] = await deps.storage.readStream<ResearchJobEvent>(stream, afterSeq - 1, 1);
    if (last && TERMINAL_EVENT_KINDS.has(last.value.kind)) return;
  }
  let cursor = afterSeq;
  let wake: (() => void) | null = null;
  let changed = true;
  const unsubscribe = deps.storage.subscribe(streamTopic(stream), () => {
    changed = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    while (!signal?.aborted) {
      if (!changed) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
        continue;
      }
      changed = false;
      const entries = await deps.storage.readStream<ResearchJobEvent>(stream, cursor, EVENT_PAGE_MAX);
      if (entries.length === EVENT_PAGE_MAX) changed = true; // more may be waiting already
      for (const entry of entries) {
        if (signal?.aborted) return;
        cursor = entry.seq;
        yield entry.value;
        if (TERMINAL_EVENT_KINDS.has(entry.value.kind)) return;
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}
