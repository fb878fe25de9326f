import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sseFrame, sseStream, type SseEvent } from './sse.ts';

const decoder = new TextDecoder();

/** A source fed by the test: push events, end it; it ends when its signal aborts. */
function source() {
  const queue: SseEvent[] = [];
  let wake: (() => void) | null = null;
  let opened: AbortSignal | null = null;
  return {
    push(e: SseEvent) {
      queue.push(e);
      wake?.();
    },
    get signal() {
      return opened;
    },
    open(signal: AbortSignal): AsyncIterator<SseEvent> {
      opened = signal;
      signal.addEventListener('abort', () => wake?.());
      return (async function* () {
        while (!signal.aborted) {
          const e = queue.shift();
          if (e) {
            yield e;
            continue;
          }
          await new Promise<void>((r) => (wake = r));
          wake = null;
        }
      })();
    },
  };
}

async function collect(stream: AsyncIterable<Uint8Array>): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += decoder.decode(chunk);
  return text;
}

const ev = (id: number, terminal = false): SseEvent => ({ id: String(id), json: `{"eventId":"${id}"}`, terminal });

test('a frame is id, event and one data line, then a blank line', () => {
  assert.is(sseFrame(ev(7)), 'id: 7\nevent: research-job\ndata: {"eventId":"7"}\n\n');
});

test('the stream opens with retry: 5000 and closes after the terminal event, aborting its source', async () => {
  const src = source();
  src.push(ev(1));
  src.push(ev(2, true));
  src.push(ev(3));
  const text = await collect(sseStream((s) => src.open(s), undefined));
  assert.ok(text.startsWith('retry: 5000\n\n'));
  assert.ok(text.includes('id: 1\n') && text.includes('id: 2\n'));
  assert.not.ok(text.includes('id: 3\n'));
  assert.ok(src.signal?.aborted);
});

test('the stream closes after maxEvents events', async () => {
  const src = source();
  for (let i = 1; i <= 5; i++) src.push(ev(i));
  const text = await collect(sseStream((s) => src.open(s), undefined, { maxEvents: 3 }));
  assert.is(text.match(/^id: /gm)?.length, 3);
});

test('an idle stream sends keep-alive comments and closes after maxMs', async () => {
  const src = source();
  const started = Date.now();
  const text = await collect(sseStream((s) => src.open(s), undefined, { keepAliveMs: 20, maxMs: 110 }));
  assert.ok((text.match(/^: keep-alive$/gm)?.length ?? 0) >= 3, text);
  assert.ok(Date.now() - started >= 100);
  assert.ok(src.signal?.aborted);
});

test('the client going away ends the stream and its source', async () => {
  const src = source();
  const client = new AbortController();
  const stream = sseStream((s) => src.open(s), client.signal, { keepAliveMs: 1000 });
  const first = await stream.next();
  assert.ok(decoder.decode(first.value as Uint8Array).startsWith('retry:'));
  const next = stream.next();
  src.push(ev(1));
  assert.ok(decoder.decode((await next).value as Uint8Array).includes('id: 1'));
  const after = stream.next();
  client.abort();
  assert.is((await after).done, true);
  assert.ok(src.signal?.aborted);
});

test.run();
