import http from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startServer } from '../../fixtures/http-kit.ts';
import { ScriptedRunner, specBody, untilAborted, type Step } from '../jobs/jobs-kit.ts';

const SCOPES = ['research:read', 'research:run', 'inquiry:create', 'knowledge:propose', 'document:read'];

/** A raw event stream over node:http, one socket each. */
function open(url: string, token: string, headers: Record<string, string> = {}) {
  const state = { text: '', ended: false };
  const req = http.get(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (c: string) => (state.text += c));
    res.on('end', () => (state.ended = true));
  });
  req.on('error', () => undefined);
  return { state, close: () => req.destroy() };
}

async function until(probe: () => boolean, what: string, ms = 4000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

test('many streams on one job: one subscription, identical bytes; a stream leaving midway and a late joiner disturb nothing', async () => {
  const steps: Step[] = [(ctx) => ctx.setPhase('planning', 'p'), ...Array.from({ length: 8 }, (_, i): Step => (ctx) => ctx.progress(10 + i, `step ${i}`)), untilAborted];
  const runner = new ScriptedRunner(steps);
  const s = await startServer({ engine: { runner } });
  try {
    const { token } = await s.credential({ scopes: SCOPES });
    const job = (await s.req('/api/v1/research-jobs', { method: 'POST', token, headers: { 'idempotency-key': 'fanout-key-000001' }, body: specBody() })).json.data;
    const url = `${s.url}/api/v1/research-jobs/${job.jobId}/events`;
    const streams = Array.from({ length: 20 }, () => open(url, token));
    await until(() => streams.every((x) => ids(x.state.text).length === 1), 'the first event on every stream');
    assert.is(s.engine.jobs.followedJobs, 1, 'one subscription for 20 streams');
    runner.release(3);
    await until(() => streams.every((x) => ids(x.state.text).length === 4), 'four events everywhere');
    streams[7]!.close(); // a client leaves midway
    const late = open(url, token, { 'last-event-id': '2' });
    runner.release(6);
    await until(() => streams.every((x, i) => i === 7 || ids(x.state.text).length === 10), 'ten events on the streams still open');
    await until(() => ids(late.state.text).at(-1) === 10, 'the late joiner reaching event 10');
    assert.equal(ids(late.state.text), [3, 4, 5, 6, 7, 8, 9, 10], 'backlog then live, no gap, no duplicate');
    for (const [i, x] of streams.entries()) if (i !== 7) assert.is(x.state.text, streams[0]!.state.text, `stream ${i} got the same bytes`);
    assert.equal(ids(streams[0]!.state.text), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const x of [...streams, late]) x.close();
    await until(() => s.engine.jobs.followedJobs === 0, 'the subscription released after the last stream left');
  } finally {
    await s.close();
  }
});

test.run();
