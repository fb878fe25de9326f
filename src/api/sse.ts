/**
 * Server-Sent Events framing for the research-job event stream: `retry: 5000` first, one frame per
 * event (`id:`, `event: research-job`, one `data:` JSON line), `: keep-alive` comments while idle, and
 * the three closing rules (after a terminal event, after `maxEvents` events, after `maxMs`).
 * @module
 */

/** Limits of one stream connection (the contract's values are the defaults). */
export interface SseLimits {
  /** Reconnection delay sent first (`retry:`), in ms. Default 5000. */
  retryMs?: number;
  /** Longest silence before a `: keep-alive` comment, in ms. Default 15000. */
  keepAliveMs?: number;
  /** Events per connection. Default 1024. */
  maxEvents?: number;
  /** Connection lifetime in ms. Default 20000. */
  maxMs?: number;
}

/** One event to frame: its id (the decimal cursor), its JSON text, and whether it ends the job. */
export interface SseEvent {
  id: string;
  json: string;
  terminal: boolean;
}

const encoder = new TextEncoder();

/** The frame of one event. `json` is one line (JSON.stringify never emits raw newlines). */
export function sseFrame(event: SseEvent): string {
  return `id: ${event.id}\nevent: research-job\ndata: ${event.json}\n\n`;
}

/**
 * Frame `events` as an SSE byte stream.
 * @param open - opens the source: an async iterator that yields events as they happen and ends when
 *   the signal it was given aborts. It is asked for the next event while a timer runs, so an idle
 *   source still gets keep-alives. The signal aborts when the stream closes for any reason (a limit,
 *   the terminal event, the client gone).
 * @param clientSignal - aborted when the client disconnects.
 * @param now - the clock (ms), injectable for tests.
 */
export async function* sseStream(
  open: (signal: AbortSignal) => AsyncIterator<SseEvent>,
  clientSignal: AbortSignal | undefined,
  limits: SseLimits = {},
  now: () => number = Date.now,
): AsyncGenerator<Uint8Array> {
  const controller = new AbortController();
  const signal = controller.signal;
  const forward = () => controller.abort();
  if (clientSignal?.aborted) controller.abort();
  else clientSignal?.addEventListener('abort', forward, { once: true });
  const events = open(signal);
  const keepAliveMs = limits.keepAliveMs ?? 15_000;
  const maxEvents = limits.maxEvents ?? 1024;
  const deadline = now() + (limits.maxMs ?? 20_000);
  let sent = 0;
  let pending: Promise<IteratorResult<SseEvent>> | null = null;
  yield encoder.encode(`retry: ${limits.retryMs ?? 5000}\n\n`);
  try {
    while (!signal.aborted) {
      const left = deadline - now();
      if (left <= 0) return;
      pending ??= events.next();
      const tick = await raceWithTimer(pending, Math.min(keepAliveMs, left), signal);
      if (tick === 'aborted') return;
      if (tick === 'timeout') {
        if (deadline - now() <= 0) return;
        yield encoder.encode(': keep-alive\n\n');
        continue;
      }
      pending = null;
      if (tick.done) return;
      yield encoder.encode(sseFrame(tick.value));
      sent++;
      if (tick.value.terminal || sent >= maxEvents) return;
    }
  } finally {
    clientSignal?.removeEventListener('abort', forward);
    controller.abort(); // ends the source; a next() still pending settles into nothing
    pending?.catch(() => undefined);
  }
}

function raceWithTimer<T>(promise: Promise<T>, ms: number, signal: AbortSignal): Promise<T | 'timeout' | 'aborted'> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish('timeout'), ms);
    const onAbort = () => finish('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    function finish(value: T | 'timeout' | 'aborted') {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    }
    promise.then(finish, (error: unknown) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
  });
}
