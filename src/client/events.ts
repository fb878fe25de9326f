/**
 * Following a research job's events over SSE as an async iterator: it opens the stream form,
 * yields each event, reconnects after the server's `retry` time with `Last-Event-ID` when a stream
 * closes before the terminal event, and ends after `job.succeeded`, `job.failed` or `job.cancelled`
 * (or on 204, which says the job is terminal and nothing follows the cursor).
 *
 * A quiet job is not a dead one: the server closes every stream after a while (the contract's 20 s)
 * and sends keep-alive comments while nothing happens, so a connection that delivered any byte (a
 * `retry:` line, a keep-alive, an event) or closed cleanly proves the server alive and the follower
 * keeps following, however long the job waits, until its terminal event or the caller's abort.
 * Only connections that fail before delivering anything count towards giving up.
 * @module
 */
import type { AnyOperation } from '../contract/define.ts';
import type { ResearchJobEvent } from '../jobs/schemas.ts';
import { sendWithRetries, type CallSettings } from './call.ts';
import { ApiClientError, isApiClientError } from './errors.ts';
import { sleep } from './retry.ts';
import { parseSse } from './sse.ts';
import { TERMINAL_EVENT_KINDS } from '../jobs/event-kinds.ts';

/** One research-job event. */
export type JobEvent = ResearchJobEvent;

/** Event kinds after which a job sends nothing more. */
export { TERMINAL_EVENT_KINDS } from '../jobs/event-kinds.ts';

/** Options of {@link followJobEvents}. */
export interface FollowOptions {
  /** Start after this event id (exclusive); default: from the first event. */
  lastEventId?: string;
  signal?: AbortSignal;
  /** Reconnection delay when the server named none; default 5000 ms (the contract's `retry`). */
  reconnectDelayMs?: number;
  /** Cap on the server's reconnection delay (tests use a small one); default none. */
  maxReconnectDelayMs?: number;
  /**
   * Consecutive connections that break before delivering a single byte (no `retry:`, no keep-alive,
   * no event, no clean close) before giving up; default 5. Clean closes and keep-alives never count.
   */
  maxIdleReconnects?: number;
}

/** Follow the events of `jobId` (see the module description). Errors are `ApiClientError`s. */
export async function* followJobEvents(op: AnyOperation, settings: CallSettings, jobId: string, options: FollowOptions = {}): AsyncGenerator<JobEvent> {
  let lastId = options.lastEventId;
  let delay = options.reconnectDelayMs ?? 5000;
  let idle = 0;
  const signal = options.signal;
  for (;;) {
    const headers: Record<string, string> = {};
    if (lastId !== undefined) headers.lastEventId = lastId;
    const { response, attempts } = await sendWithRetries(op, settings, { path: { jobId }, headers }, signal ? { signal } : {}, 'text/event-stream');
    if (response.status === 204) return;
    if (response.status >= 400 || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream') || response.body === null) {
      const text = await response.text();
      let error: { code?: string; message?: string; retryable?: boolean } = {};
      try {
        error = (JSON.parse(text) as { error?: typeof error }).error ?? {};
      } catch {
        // reported as INVALID_RESPONSE
      }
      throw new ApiClientError({
        status: response.status,
        code: (error.code as ApiClientError['code'] | undefined) ?? 'INVALID_RESPONSE',
        message: error.message ?? `expected an event stream, got ${response.status} ${response.headers.get('content-type')}`,
        retryable: error.retryable ?? false,
        requestId: response.headers.get('x-request-id') ?? undefined,
        operationId: op.operationId,
        attempts,
      });
    }
    let alive = false;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (chunk.byteLength > 0) alive = true;
          controller.enqueue(chunk);
        },
      }),
    );
    try {
      for await (const item of parseSse(body)) {
        if (item.type === 'retry') {
          delay = item.ms;
          continue;
        }
        if (item.event.id !== null) lastId = item.event.id;
        if (item.event.event !== 'research-job') continue;
        let event: JobEvent;
        try {
          event = JSON.parse(item.event.data) as JobEvent;
        } catch (e) {
          throw new ApiClientError({ status: 200, code: 'INVALID_RESPONSE', message: `event ${item.event.id ?? '?'} carries data that is not JSON`, retryable: false, operationId: op.operationId, attempts, cause: e });
        }
        yield event;
        if (TERMINAL_EVENT_KINDS.has(event.kind)) return;
      }
      alive = true; // a clean close: the server ends every stream after a while
    } catch (e) {
      if (signal?.aborted || isApiClientError(e)) throw e;
      // the connection dropped mid-stream: resume below
    }
    idle = alive ? 0 : idle + 1;
    if (idle > (options.maxIdleReconnects ?? 5)) {
      throw new ApiClientError({
        status: 0,
        code: 'NETWORK_ERROR',
        message: `the event stream of ${jobId} broke ${idle} times in a row before delivering anything`,
        retryable: true,
        operationId: op.operationId,
        attempts: idle,
      });
    }
    await sleep(Math.min(delay, options.maxReconnectDelayMs ?? Number.POSITIVE_INFINITY), signal);
  }
}
