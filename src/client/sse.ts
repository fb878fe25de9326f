/**
 * A server-sent events parser (the WHATWG event-stream format): bytes in, events out. Lines end in
 * CRLF, LF or CR; `data` lines join with LF; comments (`:`) are skipped; `id` persists across events;
 * `retry` sets the reconnection time.
 * @module
 */

/** One dispatched event. */
export interface SseEvent {
  /** The last event id seen so far (persists across events, as EventSource's lastEventId does). */
  id: string | null;
  event: string;
  data: string;
}

/** What the stream carries: events and reconnection times. */
export type SseItem = { type: 'event'; event: SseEvent } | { type: 'retry'; ms: number };

/** Parse a byte stream into events. */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseItem> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let lastId: string | null = null;
  let event = '';
  let data: string[] = [];
  let first = true;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (first && buffer.length > 0) {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
        first = false;
      }
      for (;;) {
        const m = /\r\n|\n|\r/.exec(buffer);
        // A lone CR at the end may be the first half of CRLF: wait for more unless the stream ended.
        if (m === null || (m[0] === '\r' && m.index === buffer.length - 1 && !done)) break;
        const line = buffer.slice(0, m.index);
        buffer = buffer.slice(m.index + m[0].length);
        if (line === '') {
          if (data.length > 0) yield { type: 'event', event: { id: lastId, event: event || 'message', data: data.join('\n') } };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
        else if (field === 'id' && !value.includes('\0')) lastId = value;
        else if (field === 'retry' && /^\d+$/.test(value)) yield { type: 'retry', ms: Number(value) };
      }
      if (done) return; // an event without its closing blank line is not dispatched
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}
