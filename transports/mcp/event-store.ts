/**
 * Resumable MCP streams (MCP 2025-11-25, Streamable HTTP, "Resumability and Redelivery"): a bounded,
 * in-memory event store per session. Every SSE event the session sends gets an id unique in the
 * session (`<streamId>_<sequence>`); a client whose connection dropped sends a GET with
 * `Last-Event-ID` and receives the events of that stream after it — the answer to its request
 * included, when the drop came before it. With this store the SDK's transport also opens each POST
 * stream with a priming event (an id and empty data, plus `retry`), so a client can resume at once.
 * @remarks Bounded: at most `maxEvents` events per session (the oldest go first; a Last-Event-ID older
 * than what is kept is refused by the transport, 400) and messages over `maxEventBytes` are not kept
 * for replay (they are still sent live). The store lives and dies with its session.
 * @module
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Bounds of {@link memoryEventStore}. */
export const MCP_EVENT_STORE_DEFAULTS = { maxEvents: 256, maxEventBytes: 256 * 1024 } as const;

/** A session's event store: the SDK's {@link EventStore}, bounded. */
export function memoryEventStore(options: { maxEvents?: number; maxEventBytes?: number } = {}): EventStore & { size(): number } {
  const maxEvents = options.maxEvents ?? MCP_EVENT_STORE_DEFAULTS.maxEvents;
  const maxEventBytes = options.maxEventBytes ?? MCP_EVENT_STORE_DEFAULTS.maxEventBytes;
  const events = new Map<string, { streamId: string; seq: number; message: JSONRPCMessage | null }>();
  let seq = 0;
  return {
    async storeEvent(streamId, message) {
      const eventId = `${streamId}_${++seq}`;
      // A priming event's message is empty; one too large to keep is sent live but not replayed.
      const kept = Object.keys(message).length === 0 || JSON.stringify(message).length > maxEventBytes ? null : message;
      events.set(eventId, { streamId, seq, message: kept });
      while (events.size > maxEvents) events.delete(events.keys().next().value!);
      return eventId;
    },
    async getStreamIdForEventId(eventId) {
      return events.get(eventId)?.streamId; // an id not kept (never sent, or expired): the transport answers 400
    },
    async replayEventsAfter(lastEventId, { send }) {
      const last = events.get(lastEventId);
      if (!last) throw new Error(`unknown or expired event id ${lastEventId.slice(0, 64)}`);
      for (const [eventId, e] of events) {
        if (e.streamId === last.streamId && e.seq > last.seq && e.message !== null) await send(eventId, e.message);
      }
      return last.streamId;
    },
    size: () => events.size,
  };
}
