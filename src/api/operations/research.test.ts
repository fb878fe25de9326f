import http from 'node:http';
import { EventSource } from 'eventsource';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startServer, type TestServer } from '../../../fixtures/http-kit.ts';
import { engineInternals } from '../../engine.ts';
import { HAPPY_STEPS, ScriptedRunner, specBody, untilAborted } from '../../jobs/jobs-kit.ts';
import { JOBS_COLLECTION, type StoredJob } from '../../jobs/store.ts';

const SCOPES = ['research:read', 'research:run', 'inquiry:create', 'knowledge:propose', 'document:read'];
let keys = 0;
const key = () => `research-http-key-${String(++keys).padStart(6, '0')}`;

function start(s: TestServer, token: string, idempotencyKey = key(), body: object = specBody()) {
  return s.req('/api/v1/research-jobs', { method: 'POST', token, headers: { 'idempotency-key': idempotencyKey }, body });
}

/** An open event stream read as raw text, chunk by chunk. */
function openStream(url: string, token: string, headers: Record<string, string> = {}) {
  let text = '';
  let status = 0;
  let responseHeaders: http.IncomingHttpHeaders = {};
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  let ended = false;
  const req = http.get(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
    status = res.statusCode ?? 0;
    responseHeaders = res.headers;
    res.on('data', (c: Buffer) => {
      text += c.toString('utf8');
      wake();
    });
    res.on('end', () => {
      ended = true;
      wake();
    });
  });
  const opened = new Promise<void>((resolve, reject) => {
    req.on('response', () => resolve());
    req.on('error', reject);
  });
  return {
    opened,
    get status() {
      return status;
    },
    get headers() {
      return responseHeaders;
    },
    get text() {
      return text;
    },
    get ended() {
      return ended;
    },
    /** Wait until `probe(text)` holds or the stream ends (bounded). */
    async until(probe: (text: string) => boolean, ms = 3000): Promise<void> {
      const deadline = Date.now() + ms;
      while (!probe(text) && !ended) {
        if (Date.now() > deadline) throw new Error(`stream: timed out; got ${JSON.stringify(text)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
    },
    close: () => req.destroy(),
  };
}

function frames(text: string): { id: string; event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('id: '))
    .map((block) => {
      const lines = block.split('\n');
      assert.is(lines.length, 3, `a frame is three lines: ${block}`);
      return { id: lines[0]!.slice(4), event: lines[1]!.slice(7), data: JSON.parse(lines[2]!.slice(6)) as Record<string, unknown> };
    });
}

test('without a runner a fresh start is 410 FEATURE_RETIRED after validation, and creates nothing', async () => {
  const s = await startServer();
  try {
    const { token } = await s.credential({ scopes: SCOPES });
    assert.is((await start(s, token, key(), { v: 1 })).status, 400);
    const r = await start(s, token);
    assert.is(r.status, 410);
    assert.is(r.json.error.code, 'FEATURE_RETIRED');
    const list = await s.req('/api/v1/research-jobs', { token });
    assert.equal(list.json.data, { items: [], nextCursor: null });
    assert.is(list.headers['x-service-research-runs-remaining'], '0', 'no runner: no research run can start');
    assert.is(r.headers['x-service-research-runs-remaining'], '0');
    assert.is((await s.req('/api/v1/documents', { token })).headers['x-service-research-runs-remaining'], undefined, 'only research operations carry it');
  } finally {
    await s.close();
  }
});

test('a job over HTTP: start, replay, read with ETag, live SSE, JSON pages, report, 204 after the end', async () => {
  const runner = new ScriptedRunner(HAPPY_STEPS);
  const s = await startServer({ engine: { runner } });
  try {
    const { token } = await s.credential({ scopes: SCOPES });
    const k = key();
    const started = await start(s, token, k);
    assert.is(started.status, 202);
    assert.is(started.json.receipt.idempotency, 'created');
    const job = started.json.data;
    assert.is(job.state, 'queued');
    assert.ok(started.headers['service-revision']);
    assert.is(started.headers.location, `/api/v1/research-jobs/${job.jobId}`);
    assert.is(started.headers['x-service-research-runs-remaining'], undefined, 'the scripted runner does not say how many runs remain');
    const replay = await start(s, token, k);
    assert.is(replay.status, 202);
    assert.is(replay.json.receipt.idempotency, 'replayed');
    assert.is(replay.json.data.jobId, job.jobId);
    const conflict = await start(s, token, k, specBody({ question: 'Another question entirely?' }));
    assert.is(conflict.json.error.code, 'IDEMPOTENCY_CONFLICT');

    const read = await s.req(`/api/v1/research-jobs/${job.jobId}`, { token });
    assert.is(read.status, 200);
    const etag = String(read.headers.etag);
    assert.is((await s.req(`/api/v1/research-jobs/${job.jobId}`, { token, headers: { 'if-none-match': etag } })).status, 304);

    const notReady = await s.req(`/api/v1/research-jobs/${job.jobId}/report?format=markdown`, { token });
    assert.is(notReady.status, 409);
    assert.is(notReady.json.error.code, 'REPORT_NOT_READY');
    assert.is(notReady.json.error.retryable, true);
    assert.is(notReady.headers['retry-after'], '5');

    const stream = openStream(`${s.url}/api/v1/research-jobs/${job.jobId}/events`, token);
    await stream.opened;
    assert.is(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    await stream.until((t) => frames(t).length >= 1);
    assert.ok(stream.text.startsWith('retry: 5000\n\n'), stream.text);
    for (let step = 0; step < HAPPY_STEPS.length; step++) {
      const before = frames(stream.text).length;
      runner.release(1);
      await stream.until((t) => frames(t).length > before);
    }
    await stream.until(() => false); // ends by itself after the terminal event
    const live = frames(stream.text);
    assert.ok(live.every((f) => f.event === 'research-job'));
    assert.equal(live.map((f) => f.id), live.map((_, i) => String(i + 1)), 'ids are 1, 2, 3 …');
    assert.equal(live.map((f) => f.data.eventId), live.map((f) => f.id));
    assert.is(live.at(-1)!.data.kind, 'job.succeeded');
    assert.is(live[0]!.data.kind, 'job.created');

    const page = await s.req(`/api/v1/research-jobs/${job.jobId}/events`, { token });
    assert.equal(page.json.data.items.map((e: { eventId: string }) => e.eventId), live.map((f) => f.id));
    assert.is(page.json.data.nextCursor, null);
    const after2 = await s.req(`/api/v1/research-jobs/${job.jobId}/events?after=2`, { token });
    assert.is(after2.json.data.items[0].eventId, '3');

    const head = await s.req(`/api/v1/research-jobs/${job.jobId}/events?after=0`, { method: 'HEAD', token, headers: { accept: 'text/event-stream' } });
    assert.is(head.status, 200);
    assert.match(String(head.headers['content-type']), /^text\/event-stream/);
    assert.is(head.text, '', 'a HEAD of a stream has no body');

    const last = live.at(-1)!.id;
    const done = await s.req(`/api/v1/research-jobs/${job.jobId}/events`, { token, headers: { accept: 'text/event-stream', 'last-event-id': last } });
    assert.is(done.status, 204);
    assert.is(done.text, '');
    const replayed = await s.req(`/api/v1/research-jobs/${job.jobId}/events?after=0`, { token, headers: { accept: 'text/event-stream' } });
    assert.is(frames(replayed.text).length, live.length);

    assert.equal((await s.req(`/api/v1/research-jobs/${job.jobId}/events?after=x1`, { token })).json.error.fieldErrors[0].field, 'query.after');
    const badResume = await s.req(`/api/v1/research-jobs/${job.jobId}/events`, { token, headers: { accept: 'text/event-stream', 'last-event-id': 'abc' } });
    assert.is(badResume.status, 400);
    assert.equal(badResume.json.error.fieldErrors[0].field, 'Last_Event_ID');
    const beyond = await s.req(`/api/v1/research-jobs/${job.jobId}/events?after=999`, { token });
    assert.is(beyond.status, 400);

    const md = await s.req(`/api/v1/research-jobs/${job.jobId}/report?format=markdown`, { token });
    assert.is(md.status, 200);
    assert.match(String(md.headers['content-type']), /^text\/markdown/);
    assert.ok(md.headers['x-service-markdown-loss-count'] !== undefined);
    assert.match(md.text, /CRDT convergence/);
    const rich = await s.req(`/api/v1/research-jobs/${job.jobId}/report?format=rich-json`, { token });
    assert.is(rich.status, 200);
    assert.is(rich.json.data.format, 'service-rich-document');
    assert.is((await s.req(`/api/v1/research-jobs/${job.jobId}/report?format=rich-json`, { token, headers: { 'if-none-match': String(rich.headers.etag) } })).status, 304);
    const noDocRead = (await s.credential({ scopes: ['research:read'] })).token;
    assert.is((await s.req(`/api/v1/research-jobs/${job.jobId}/report?format=rich-json`, { token: noDocRead })).status, 403);

    const other = (await s.credential({ scopes: SCOPES })).token;
    for (const path of ['', '/events', '/report?format=markdown']) {
      assert.is((await s.req(`/api/v1/research-jobs/${job.jobId}${path}`, { token: other })).status, 404, `another credential: ${path}`);
    }
    const list = await s.req('/api/v1/research-jobs', { token });
    assert.equal(list.json.data.items.map((j: { jobId: string }) => j.jobId), [job.jobId]);
    assert.equal((await s.req('/api/v1/research-jobs', { token: other })).json.data.items, []);

    const revision = String((await s.req(`/api/v1/research-jobs/${job.jobId}`, { token })).headers['service-revision']);
    const terminal = await s.req(`/api/v1/research-jobs/${job.jobId}/cancellations`, {
      method: 'POST',
      token,
      headers: { 'idempotency-key': key(), 'service-if-revision': revision },
      body: { v: 1 },
    });
    assert.is(terminal.status, 409);
    assert.is(terminal.json.error.code, 'CONFLICT');
  } finally {
    await s.close();
  }
});

test('cancellation: 400 without a key or with another body, 428 without a revision, 412 stale, 200 with a receipt, replayed', async () => {
  const runner = new ScriptedRunner([(ctx) => ctx.setPhase('planning', 'Planning'), untilAborted]);
  const s = await startServer({ engine: { runner } });
  try {
    const { token } = await s.credential({ scopes: SCOPES });
    const job = (await start(s, token)).json.data;
    const stale = String((await s.req(`/api/v1/research-jobs/${job.jobId}`, { token })).headers['service-revision']);
    runner.release(2);
    await new Promise((r) => setTimeout(r, 50));
    const cancel = (headers: Record<string, string>, body: object = { v: 1 }) =>
      s.req(`/api/v1/research-jobs/${job.jobId}/cancellations`, { method: 'POST', token, headers, body });
    assert.is((await cancel({ 'service-if-revision': stale })).json.error.code, 'IDEMPOTENCY_REQUIRED');
    assert.is((await cancel({ 'idempotency-key': key() })).status, 428);
    assert.is((await cancel({ 'idempotency-key': key(), 'service-if-revision': stale })).status, 412);
    const current = String((await s.req(`/api/v1/research-jobs/${job.jobId}`, { token })).headers['service-revision']);
    assert.is((await cancel({ 'idempotency-key': key(), 'service-if-revision': current }, { v: 2 })).status, 400);
    const k = key();
    const done = await cancel({ 'idempotency-key': k, 'service-if-revision': current });
    assert.is(done.status, 200);
    assert.is(done.json.data.state, 'cancelled');
    assert.is(done.json.receipt.idempotency, 'created');
    assert.is.not(done.headers['service-revision'], current);
    const again = await cancel({ 'idempotency-key': k, 'service-if-revision': current });
    assert.is(again.status, 200);
    assert.is(again.json.receipt.idempotency, 'replayed');
    const events = (await s.req(`/api/v1/research-jobs/${job.jobId}/events`, { token })).json.data.items;
    assert.is(events.at(-1).kind, 'job.cancelled');
  } finally {
    await s.close();
  }
});

test('an idle stream sends keep-alive comments and closes after its lifetime; a busy one after maxEvents', async () => {
  const runner = new ScriptedRunner([(ctx) => ctx.setPhase('planning', 'a'), (ctx) => ctx.progress(10, 'b'), (ctx) => ctx.progress(20, 'c'), untilAborted]);
  const s = await startServer({ engine: { runner }, eventStreams: { keepAliveMs: 40, maxMs: 250, maxEvents: 2 } });
  try {
    const { token } = await s.credential({ scopes: SCOPES });
    const job = (await start(s, token)).json.data;
    const idle = openStream(`${s.url}/api/v1/research-jobs/${job.jobId}/events?after=1`, token);
    await idle.until(() => false);
    assert.ok((idle.text.match(/^: keep-alive$/gm)?.length ?? 0) >= 3, idle.text);
    assert.is(frames(idle.text).length, 0);
    runner.release(3);
    await new Promise((r) => setTimeout(r, 50));
    const busy = openStream(`${s.url}/api/v1/research-jobs/${job.jobId}/events?after=0`, token);
    await busy.until(() => false);
    assert.equal(frames(busy.text).map((f) => f.id), ['1', '2']);
  } finally {
    await s.close();
  }
});

test('an EventSource client follows a job across reconnections with Last-Event-ID and stops at the terminal event', async () => {
  const runner = new ScriptedRunner(HAPPY_STEPS, true);
  const s = await startServer({ engine: { runner }, eventStreams: { retryMs: 20, maxEvents: 2 } });
  try {
    const { token } = await s.credential({ scopes: SCOPES });
    const job = (await start(s, token)).json.data;
    const seen: string[] = [];
    const source = new EventSource(`${s.url}/api/v1/research-jobs/${job.jobId}/events`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${token}` } }),
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`EventSource did not stop; saw ${seen.join(',')}`)), 5000);
      source.addEventListener('research-job', (e) => seen.push((e as MessageEvent).lastEventId));
      source.addEventListener('error', () => {
        if (source.readyState === EventSource.CLOSED) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    source.close();
    const all = (await s.req(`/api/v1/research-jobs/${job.jobId}/events`, { token })).json.data.items.map((e: { eventId: string }) => e.eventId);
    assert.equal(seen, all, 'every event exactly once, in order, over several connections');
    assert.ok(all.length > 2);
  } finally {
    await s.close();
  }
});

test('a runner that knows the research-run budget sets X-Service-Research-Runs-Remaining', async () => {
  const runner = Object.assign(new ScriptedRunner(HAPPY_STEPS, true), { remainingRuns: (accountId: string) => (accountId === 'owner' ? 7 : 0) });
  const s = await startServer({ engine: { runner } });
  try {
    const { token } = await s.credential({ scopes: SCOPES });
    const r = await start(s, token);
    assert.is(r.status, 202);
    assert.is(r.headers['x-service-research-runs-remaining'], '7');
    assert.is((await s.req(`/api/v1/research-jobs/${r.json.data.jobId}`, { token })).headers['x-service-research-runs-remaining'], '7');
  } finally {
    await s.close();
  }
});


test('a staged report: the job answers its export links (rendered by the edge), also for a job record that stored them', async () => {
  const runner = new ScriptedRunner(HAPPY_STEPS);
  const s = await startServer({ engine: { runner } });
  try {
    const { token } = await s.credential({ scopes: SCOPES });
    const job = (await start(s, token)).json.data;
    runner.release(HAPPY_STEPS.length);
    await s.engine.jobs.idle();
    const internals = engineInternals(s.engine);
    const base = `${internals.baseUrl}/api/v1/research-jobs/${job.jobId}/report`;
    const read = await s.req(`/api/v1/research-jobs/${job.jobId}`, { token });
    assert.is(read.status, 200);
    const report = read.json.data.artifacts.report;
    assert.equal(Object.keys(report), ['documentRef', 'jsonHref', 'markdownHref']);
    assert.equal(report, { documentRef: report.documentRef, jsonHref: `${base}?format=rich-json`, markdownHref: `${base}?format=markdown` });
    // The domain keeps the logical reference only.
    const actor = (await s.engine.credentials.authenticate(token)).actor;
    assert.equal((await s.engine.jobs.read(actor, job.jobId)).job.artifacts.report, { documentRef: report.documentRef });
    // A record written when the domain stored the links reads the same, on the wire and in the domain.
    const storage = internals.deps.storage;
    const stored = (await storage.getRecord<StoredJob>(JOBS_COLLECTION, job.jobId))!;
    const old = { ...stored.value, job: { ...stored.value.job, artifacts: { ...stored.value.job.artifacts, report: { ...report } } } };
    await storage.commit([{ kind: 'record.put', collection: JOBS_COLLECTION, key: job.jobId, value: old, expectedRevision: stored.revision }]);
    const again = await s.req(`/api/v1/research-jobs/${job.jobId}`, { token });
    assert.equal(again.json.data.artifacts.report, report);
    assert.equal((await s.engine.jobs.read(actor, job.jobId)).job.artifacts.report, { documentRef: report.documentRef });
    assert.is((await s.req(report.markdownHref.slice(internals.baseUrl.length), { token })).status, 200);
  } finally {
    await s.close();
  }
});
test.run();
