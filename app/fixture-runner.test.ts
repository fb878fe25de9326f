/**
 * `kw serve --research-runner fixture` end to end over HTTP: start → events (SSE) → the person's
 * decision → succeeded with a readable report; rejection → failed; the word "fail" → failed in
 * retrieving, retryable.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serve, type DevServer } from './serve.ts';

const SCOPES = ['document:read', 'inquiry:create', 'knowledge:propose', 'research:run', 'research:read'];

interface Event {
  eventId: string;
  kind: string;
  state: string;
  phase: string;
}

const spec = (question: string) => ({
  v: 1,
  question,
  profile: 'focused',
  visibilityIntent: 'private',
  deliverable: { kind: 'report', form: 'question-answer', language: 'en' },
  spaceRef: { kind: 'new-document', title: 'Fixture run' },
});

async function tokenOf(server: DevServer): Promise<string> {
  // No account: the local person's (owner without the demo seed).
  const res = await fetch(`${server.url}/operator/v1/credentials`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.operatorKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: 'fixture test', scopes: SCOPES }),
  });
  assert.is(res.status, 201);
  return ((await res.json()) as { data: { token: string } }).data.token;
}

/** Read SSE frames of the job's event stream (from `after`) until `until` says stop or the stream ends. */
async function follow(server: DevServer, token: string, jobId: string, after: string | null, until: (e: Event) => boolean): Promise<Event[]> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (after !== null) headers['last-event-id'] = after;
  const controller = new AbortController();
  const res = await fetch(`${server.url}/api/v1/research-jobs/${jobId}/events`, { headers, signal: controller.signal });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events: Event[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        if (!data) continue;
        const event = JSON.parse(data.slice(6)) as Event;
        events.push(event);
        if (until(event)) return events;
      }
    }
  } finally {
    controller.abort();
  }
  return events;
}

async function startJob(server: DevServer, token: string, question: string) {
  const res = await fetch(`${server.url}/api/v1/research-jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(spec(question)),
  });
  assert.is(res.status, 202);
  const job = ((await res.json()) as { data: { jobId: string; state: string } }).data;
  assert.is(job.state, 'queued');
  return job.jobId;
}

async function readJob(server: DevServer, token: string, jobId: string) {
  const res = await fetch(`${server.url}/api/v1/research-jobs/${jobId}`, { headers: { authorization: `Bearer ${token}` } });
  assert.is(res.status, 200);
  return ((await res.json()) as { data: any }).data;
}

async function decide(server: DevServer, reviewRef: string, decision: 'accept' | 'reject') {
  const res = await fetch(`${server.url}/operator/v1/reviews/${reviewRef}/decisions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ decision, person: 'Test Person' }),
  });
  assert.is(res.status, 200, await res.clone().text());
}

const terminal = (e: Event) => ['job.succeeded', 'job.failed', 'job.cancelled'].includes(e.kind);

test('fixture runner: start → SSE through every phase → waiting for review → accept → succeeded, report readable', async () => {
  const server = await serve({ port: 0, storage: 'memory', researchRunner: 'fixture', fixturePhaseMs: 20 });
  try {
    const token = await tokenOf(server);
    const jobId = await startJob(server, token, 'How do CRDTs keep concurrent edits convergent?');
    const first = await follow(server, token, jobId, null, (e) => e.kind === 'job.waiting');
    const phases = first.filter((e) => e.kind === 'job.phase').map((e) => e.phase);
    assert.equal(phases, ['planning', 'retrieving', 'extracting', 'proposing', 'synthesizing', 'requesting-review']);
    assert.is(first[0]!.kind, 'job.created');
    assert.is(first[1]!.state, 'running');
    assert.ok(first.some((e) => e.kind === 'job.artifact'), 'the report and the proposal are artifacts');
    assert.ok(first.some((e) => e.kind === 'job.progress'));
    assert.is(first.at(-1)!.state, 'waiting');

    const waiting = await readJob(server, token, jobId);
    assert.is(waiting.state, 'waiting');
    assert.is(waiting.phase, 'requesting-review');
    assert.is(waiting.requiredAction, 'review-in-browser');
    assert.ok(waiting.artifacts.review?.reviewRef, 'artifacts.review is set');
    assert.ok(waiting.artifacts.proposal?.proposalRef);
    assert.ok(waiting.artifacts.report?.documentRef);

    await decide(server, waiting.artifacts.review.reviewRef, 'accept');
    const rest = await follow(server, token, jobId, first.at(-1)!.eventId, terminal);
    assert.is(rest.at(-1)!.kind, 'job.succeeded');
    assert.is(rest.at(-1)!.phase, 'complete');

    const done = await readJob(server, token, jobId);
    assert.is(done.state, 'succeeded');
    assert.is(done.phase, 'complete');
    assert.is(done.requiredAction, null);
    assert.ok(done.artifacts.inquiry?.inquiryId, 'the accepted inquiry is named');
    const report = await fetch(`${server.url}/api/v1/research-jobs/${jobId}/report?format=markdown`, { headers: { authorization: `Bearer ${token}` } });
    assert.is(report.status, 200);
    assert.match(await report.text(), /How do CRDTs keep concurrent edits convergent\?/);
  } finally {
    await server.close();
  }
});

test('fixture runner: a rejected review fails the job with JOB_FAILED', async () => {
  const server = await serve({ port: 0, storage: 'memory', researchRunner: 'fixture', fixturePhaseMs: 10 });
  try {
    const token = await tokenOf(server);
    const jobId = await startJob(server, token, 'Is *this* [question] `odd` # | enough?');
    await follow(server, token, jobId, null, (e) => e.kind === 'job.waiting');
    const waiting = await readJob(server, token, jobId);
    await decide(server, waiting.artifacts.review.reviewRef, 'reject');
    const events = await follow(server, token, jobId, null, terminal);
    assert.is(events.at(-1)!.kind, 'job.failed');
    const job = await readJob(server, token, jobId);
    assert.is(job.state, 'failed');
    assert.is(job.error.code, 'JOB_FAILED');
    assert.is(job.error.retryable, false);
  } finally {
    await server.close();
  }
});

test('fixture runner: a question with the word "fail" fails in phase retrieving, retryable', async () => {
  const server = await serve({ port: 0, storage: 'memory', researchRunner: 'fixture', fixturePhaseMs: 10 });
  try {
    const token = await tokenOf(server);
    const jobId = await startJob(server, token, 'Please fail this research job');
    const events = await follow(server, token, jobId, null, terminal);
    assert.is(events.at(-1)!.kind, 'job.failed');
    assert.is(events.at(-1)!.phase, 'retrieving');
    const job = await readJob(server, token, jobId);
    assert.is(job.state, 'failed');
    assert.is(job.phase, 'retrieving');
    assert.is(job.error.code, 'JOB_FAILED');
    assert.is(job.error.retryable, true);
    assert.is(job.artifacts.report, null);
  } finally {
    await server.close();
  }
});

test('fixture runner: a job waiting for its review survives a restart and succeeds when accepted after it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-fixture-'));
  try {
    const options = { port: 0, data: dir, researchRunner: 'fixture', fixturePhaseMs: 10, operatorKey: 'fixture-restart-operator-key' } as const;
    const first = await serve(options);
    let token: string;
    let jobId: string;
    let reviewRef: string;
    try {
      token = await tokenOf(first);
      jobId = await startJob(first, token, 'Does a waiting job survive a restart?');
      await follow(first, token, jobId, null, (e) => e.kind === 'job.waiting');
      reviewRef = (await readJob(first, token, jobId)).artifacts.review.reviewRef;
    } finally {
      await first.close();
    }
    const second = await serve(options);
    try {
      assert.is((await readJob(second, token, jobId)).state, 'waiting');
      await decide(second, reviewRef, 'accept');
      const events = await follow(second, token, jobId, null, terminal);
      assert.is(events.at(-1)!.kind, 'job.succeeded');
      assert.equal(events.filter((e) => e.kind === 'job.phase').map((e) => e.phase), ['planning', 'retrieving', 'extracting', 'proposing', 'synthesizing', 'requesting-review', 'requesting-review'], 'nothing was redone');
    } finally {
      await second.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('without --research-runner a fresh start answers 410', async () => {
  const server = await serve({ port: 0, storage: 'memory' });
  try {
    const token = await tokenOf(server);
    const res = await fetch(`${server.url}/api/v1/research-jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify(spec('Anything')),
    });
    assert.is(res.status, 410);
  } finally {
    await server.close();
  }
});

test.run();
