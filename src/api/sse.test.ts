import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SseStream, frameCache, sseFrame, sseStream, type OutgoingSseEvent } from './sse.ts';

const decoder = new TextDecoder();

/** A source fed by the test: push events, end it; it ends when its signal aborts. */
function source() {
  const queue: OutgoingSseEvent[] = [];
  let wake: (() => void) | null = null;
  let opened: AbortSignal | null = null;
  return {
    push(e: OutgoingSseEvent) {
      queue.push(e);
      wake?.();
    },
    get signal() {
      return opened;
    },
    open(signal: AbortSignal): AsyncIterator<OutgoingSseEvent> {
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

const ev = (id: number, terminal = false): OutgoingSseEvent => ({ id: String(id), json: `{"eventId":"${id}"}`, terminal });

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

/** A source stub recording what the stream asked of it. */
function control() {
  const calls: string[] = [];
  return { calls, source: { close: () => calls.push('close'), pause: () => calls.push('pause'), resume: () => calls.push('resume') } };
}

interface Ev {
  n: number;
  end?: boolean;
  big?: string;
}
const framesOf = frameCache((e: Ev): OutgoingSseEvent => ({ id: String(e.n), json: JSON.stringify(e), terminal: e.end === true }));

test('a batch is framed once: every stream gets the very same bytes', async () => {
  const batch: Ev[] = [{ n: 1 }, { n: 2 }];
  const a = new SseStream();
  const b = new SseStream();
  await a.next();
  await b.next(); // retry
  a.push(framesOf(batch));
  b.push(framesOf(batch));
  const [ca, cb] = [(await a.next()).value as Uint8Array, (await b.next()).value as Uint8Array];
  assert.is(ca, cb, 'one Uint8Array for both streams');
  assert.is(decoder.decode(ca), sseFrame({ id: '1', json: '{"n":1}', terminal: false }) + sseFrame({ id: '2', json: '{"n":2}', terminal: false }));
  assert.is(framesOf([batch[1]!]).frames[0], framesOf(batch).frames[1], 'each event framed once');
  await a.return();
  await b.return();
});

test('a pushed stream closes inside a batch at maxEvents or at the terminal frame, closing its source', async () => {
  const limited = new SseStream({ maxEvents: 3 });
  const c1 = control();
  limited.bind(c1.source);
  limited.push(framesOf([{ n: 1 }, { n: 2 }]));
  limited.push(framesOf([{ n: 3 }, { n: 4 }]));
  limited.push(framesOf([{ n: 5 }]));
  assert.equal(c1.calls, ['close']);
  const text = await collect(limited);
  assert.equal(text.match(/^id: \d+$/gm), ['id: 1', 'id: 2', 'id: 3']);
  const ending = new SseStream();
  const c2 = control();
  ending.bind(c2.source);
  ending.push(framesOf([{ n: 1 }, { n: 2, end: true }, { n: 3 }]));
  assert.equal(c2.calls, ['close']);
  assert.equal((await collect(ending)).match(/^id: \d+$/gm), ['id: 1', 'id: 2']);
});

test('a reader that falls behind pauses the source; reading resumes it; a source error comes after the queued bytes', async () => {
  const stream = new SseStream();
  const c = control();
  stream.bind(c.source);
  const big = 'x'.repeat(1000);
  for (let n = 1; n <= 80; n++) stream.push(framesOf([{ n, big }]));
  assert.equal(c.calls, ['pause']);
  const chunk = (await stream.next()).value as Uint8Array;
  assert.is(decoder.decode(chunk).match(/^id: /gm)?.length, 80, 'the queue comes as one chunk');
  assert.equal(c.calls, ['pause', 'resume']);
  stream.push(framesOf([{ n: 81 }]));
  stream.fail(new Error('storage gone'));
  assert.ok(decoder.decode((await stream.next()).value as Uint8Array).includes('id: 81'));
  await stream.next().then(
    () => assert.unreachable('should reject'),
    (e: Error) => assert.is(e.message, 'storage gone'),
  );
  assert.equal(c.calls, ['pause', 'resume', 'close']);
});

test('idle pushed streams share keep-alives; the client going away closes the source at once', async () => {
  const client = new AbortController();
  const streams = [new SseStream({ keepAliveMs: 20 }, client.signal), new SseStream({ keepAliveMs: 20 }, client.signal)];
  const controls = streams.map((s) => {
    const c = control();
    s.bind(c.source);
    return c;
  });
  for (const s of streams) await s.next(); // retry
  for (const s of streams) assert.is(decoder.decode((await s.next()).value as Uint8Array), ': keep-alive\n\n');
  const pending = streams[0]!.next();
  client.abort();
  assert.is((await pending).done, true);
  assert.equal(controls.map((c) => c.calls), [['close'], ['close']]);
  assert.is((await streams[1]!.next()).done, true);
});

test.run();
