/**
 * Server-Sent Events framing for the research-job event stream: `retry: 5000` first, one frame per
 * event (`id:`, `event: research-job`, one `data:` JSON line), `: keep-alive` comments while idle, and
 * the three closing rules (after a terminal event, after `maxEvents` events, after `maxMs`).
 *
 * Built for fan-out: a source pushes frames that were encoded once for all streams
 * ({@link frameCache}), a stream hands queued chunks to its reader without an async generator per
 * frame, one shared ticker per keep-alive interval serves every idle stream (no timer per frame),
 * and a backed-up stream pauses its source instead of queueing without bound.
 * @module
 */
import { concatBytes } from '../text.ts';
import { SseStream, type SseBatch, type OutgoingSseEvent, type SseFrame, type SseLimits } from './sse-stream.ts';

export { SseStream } from './sse-stream.ts';
export type { SseBatch, OutgoingSseEvent, SseFrame, SseLimits, SseSource } from './sse-stream.ts';

const encoder = new TextEncoder();

/** The frame of one event. `json` is one line (JSON.stringify never emits raw newlines). */
export function sseFrame(event: OutgoingSseEvent): string {
  return `id: ${event.id}\nevent: research-job\ndata: ${event.json}\n\n`;
}

/** Encode one event's frame. */
export function encodeFrame(event: OutgoingSseEvent): SseFrame {
  return { bytes: encoder.encode(sseFrame(event)), terminal: event.terminal };
}

/**
 * A memo that frames each event object once and joins each batch array once, however many streams
 * receive them (sources hand the same objects and arrays to every stream). Entries live as long as
 * the events and batches do.
 */
export function frameCache<E extends object>(toEvent: (event: E) => OutgoingSseEvent): (batch: readonly E[]) => SseBatch {
  const frames = new WeakMap<E, SseFrame>();
  const batches = new WeakMap<readonly E[], SseBatch>();
  const frameOf = (event: E): SseFrame => {
    let frame = frames.get(event);
    if (!frame) frames.set(event, (frame = encodeFrame(toEvent(event))));
    return frame;
  };
  return (batch) => {
    let out = batches.get(batch);
    if (!out) {
      const list = batch.map(frameOf);
      batches.set(batch, (out = { frames: list, bytes: concatBytes(list.map((f) => f.bytes)) }));
    }
    return out;
  };
}

/**
 * Frame a pull source as an SSE stream (for sources that are async iterators; job event streams use
 * {@link SseStream} with a pushing feed instead).
 * @param open - opens the source: an async iterator that yields events as they happen and ends when
 *   the signal it was given aborts. The signal aborts when the stream closes for any reason (a limit,
 *   the terminal event, the client gone). It is pulled only while the stream's reader keeps up.
 * @param clientSignal - aborted when the client disconnects.
 * @param now - the clock (ms), injectable for tests.
 */
export function sseStream(
  open: (signal: AbortSignal) => AsyncIterator<OutgoingSseEvent>,
  clientSignal: AbortSignal | undefined,
  limits: SseLimits = {},
  now: () => number = Date.now,
): SseStream {
  const controller = new AbortController();
  const stream = new SseStream(limits, clientSignal, now);
  let resumed: (() => void) | null = null;
  let paused = false;
  stream.bind({
    close: () => {
      controller.abort();
      resumed?.();
    },
    pause: () => void (paused = true),
    resume: () => {
      paused = false;
      resumed?.();
    },
  });
  if (controller.signal.aborted) return stream;
  const events = open(controller.signal);
  void (async () => {
    try {
      while (!controller.signal.aborted) {
        if (paused) {
          await new Promise<void>((resolve) => (resumed = resolve));
          resumed = null;
          continue;
        }
        const next = await events.next();
        if (next.done || controller.signal.aborted) break;
        const frame = encodeFrame(next.value);
        stream.push({ frames: [frame], bytes: frame.bytes });
      }
      stream.end();
    } catch (cause) {
      stream.fail(cause);
    }
  })();
  return stream;
}
