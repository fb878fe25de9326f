/**
 * The request list of the transport-conformance suite: every route and every edge check the
 * handler makes (routing, 405, auth, request ids, idempotency, preconditions, body limits, formats,
 * conditional reads, blocked and retired surfaces), in an order where later steps use what earlier
 * answers returned.
 * @module
 */
/** One answer, normalized for comparison. */
export interface RecordedAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** What steps share within one transport's run. */
export interface StepState {
  operatorKey: string;
  values: Map<string, string>;
}

/** A request of a step. */
export interface StepRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** One step: a request, what to keep from its answer, and the status the reference must give. */
export interface Step {
  name: string;
  request(state: StepState): StepRequest;
  after?(answer: RecordedAnswer, state: StepState): void;
  expectStatus?: number;
}

const get = (state: StepState, name: string): string => {
  const value = state.values.get(name);
  if (value === undefined) throw new Error(`an earlier step did not provide ${name}`);
  return value;
};
const bearer = (state: StepState, name = 'token') => ({ authorization: `Bearer ${get(state, name)}` });
const json = { 'content-type': 'application/json' };
const data = (a: RecordedAnswer) => (a.body as { data: Record<string, unknown> }).data;
const doc = (state: StepState) => `/api/v1/documents/${get(state, 'ref')}`;
const JOB = `kjob_${'d'.repeat(48)}`;
const para = (markdown: string) => ({ type: 'paragraph', markdown });

function credential(name: string, scopes: string[]): Step {
  return {
    name: `operator creates the ${name} credential`,
    expectStatus: 201,
    request: (s) => ({ method: 'POST', path: '/operator/v1/credentials', headers: { authorization: `Bearer ${s.operatorKey}`, ...json }, body: { label: name, scopes } }),
    after: (a, s) => s.values.set(name, String(data(a).token)),
  };
}

function mutation(name: string, expectStatus: number, build: (s: StepState) => { key: string; revision?: string; body: unknown; token?: string }, after?: Step['after']): Step {
  const step: Step = {
    name,
    expectStatus,
    request: (s) => {
      const m = build(s);
      const headers: Record<string, string> = { ...bearer(s, m.token ?? 'token'), ...json, 'idempotency-key': m.key };
      if (m.revision !== undefined) headers['service-if-revision'] = m.revision;
      return { method: 'POST', path: `${doc(s)}/mutations`, headers, body: m.body };
    },
  };
  if (after) step.after = after;
  return step;
}

/**
 * Steps on the started job, when the service accepted it (a research runner is installed): follow
 * its events as a stream (which ends at the terminal event, so later steps see a finished job),
 * then every read of a terminal job.
 */
function jobSteps(): Step[] {
  const job = (s: StepState) => `/api/v1/research-jobs/${s.values.get('job') ?? JOB}`;
  return [
    { name: 'follow the job as an event stream (to its terminal event)', expectStatus: 200, request: (s) => ({ method: 'GET', path: `${job(s)}/events`, headers: { ...bearer(s), accept: 'text/event-stream' } }) },
    {
      name: 'read the job',
      expectStatus: 200,
      request: (s) => ({ method: 'GET', path: job(s), headers: bearer(s) }),
      after: (a, s) => {
        if (a.headers.etag) s.values.set('jobEtag', a.headers.etag);
      },
    },
    { name: 'read the job conditionally', expectStatus: 304, request: (s) => ({ method: 'GET', path: job(s), headers: { ...bearer(s), 'if-none-match': s.values.get('jobEtag') ?? '"none"' } }) },
    {
      name: 'the job events as a JSON page',
      expectStatus: 200,
      request: (s) => ({ method: 'GET', path: `${job(s)}/events?after=0`, headers: bearer(s) }),
      after: (a, s) => {
        const items = (a.body as { data?: { items?: { eventId: string }[] } }).data?.items;
        if (items?.length) s.values.set('lastEvent', items.at(-1)!.eventId);
      },
    },
    { name: 'resume the stream after the terminal event (204)', expectStatus: 204, request: (s) => ({ method: 'GET', path: `${job(s)}/events`, headers: { ...bearer(s), accept: 'text/event-stream', 'last-event-id': s.values.get('lastEvent') ?? '0' } }) },
    { name: 'export the report as Markdown', expectStatus: 200, request: (s) => ({ method: 'GET', path: `${job(s)}/report?format=markdown`, headers: bearer(s) }) },
    { name: 'export the report as rich-json', expectStatus: 200, request: (s) => ({ method: 'GET', path: `${job(s)}/report?format=rich-json`, headers: bearer(s) }) },
    { name: 'cancel a finished job', expectStatus: 409, request: (s) => ({ method: 'POST', path: `${job(s)}/cancellations`, headers: { ...bearer(s), ...json, 'idempotency-key': 'conformance-cancel-0002', 'service-if-revision': 'stale' }, body: { v: 1 } }) },
  ];
}

/** The steps, in order. */
export const conformanceSteps: readonly Step[] = [
  { name: 'GET /openapi.json', expectStatus: 200, request: () => ({ method: 'GET', path: '/openapi.json' }) },
  { name: 'an unknown path', expectStatus: 404, request: () => ({ method: 'GET', path: '/api/v1/nothing-here' }) },
  { name: 'a method the path lacks (405 with Allow)', expectStatus: 405, request: () => ({ method: 'DELETE', path: '/api/v1/documents' }) },
  { name: 'no bearer token', expectStatus: 401, request: () => ({ method: 'GET', path: '/api/v1/auth' }) },
  { name: 'a wrong operator key', expectStatus: 401, request: () => ({ method: 'POST', path: '/operator/v1/credentials', headers: { authorization: 'Bearer wrong', ...json }, body: { label: 'x', scopes: [] } }) },
  credential('token', ['document:create', 'document:read', 'document:write', 'research:read', 'research:run', 'inquiry:create', 'knowledge:propose', 'library:read', 'library:write', 'public:read', 'review:read']),
  credential('reader', ['document:read']),
  { name: 'a cookie with a bearer token', expectStatus: 401, request: (s) => ({ method: 'GET', path: '/api/v1/auth', headers: { ...bearer(s), cookie: 'session=1' } }) },
  { name: 'GET /api/v1/auth', expectStatus: 200, request: (s) => ({ method: 'GET', path: '/api/v1/auth', headers: bearer(s) }) },
  { name: 'a malformed X-Request-Id', expectStatus: 400, request: (s) => ({ method: 'GET', path: '/api/v1/auth', headers: { ...bearer(s), 'x-request-id': 'short' } }) },
  {
    name: 'create a document (with a client request id)',
    expectStatus: 201,
    request: (s) => ({ method: 'POST', path: '/api/v1/documents', headers: { ...bearer(s), ...json, 'idempotency-key': 'conformance-create-0001', 'x-request-id': 'conformance-request-01' }, body: { v: 1, title: 'Conformance' } }),
    after: (a, s) => {
      s.values.set('ref', String(data(a).documentRef));
      s.values.set('rev1', a.headers['service-revision']!);
    },
  },
  { name: 'replay the creation', expectStatus: 200, request: (s) => ({ method: 'POST', path: '/api/v1/documents', headers: { ...bearer(s), ...json, 'idempotency-key': 'conformance-create-0001' }, body: { v: 1, title: 'Conformance' } }) },
  { name: 'reuse the key for another body', expectStatus: 409, request: (s) => ({ method: 'POST', path: '/api/v1/documents', headers: { ...bearer(s), ...json, 'idempotency-key': 'conformance-create-0001' }, body: { v: 1, title: 'Other' } }) },
  { name: 'a write without Idempotency-Key', expectStatus: 400, request: (s) => ({ method: 'POST', path: '/api/v1/documents', headers: { ...bearer(s), ...json }, body: { v: 1, title: 'x' } }) },
  { name: 'a body that is not JSON', expectStatus: 400, request: (s) => ({ method: 'POST', path: '/api/v1/documents', headers: { ...bearer(s), ...json, 'idempotency-key': 'conformance-create-0002' }, body: '{"v":1,' }) },
  { name: 'a body sent as text/plain', expectStatus: 400, request: (s) => ({ method: 'POST', path: '/api/v1/documents', headers: { ...bearer(s), 'content-type': 'text/plain', 'idempotency-key': 'conformance-create-0003' }, body: '{"v":1,"title":"x"}' }) },
  {
    name: 'a body over 256 KB',
    expectStatus: 400,
    request: (s) => ({ method: 'POST', path: '/api/v1/documents', headers: { ...bearer(s), ...json, 'idempotency-key': 'conformance-create-0004' }, body: JSON.stringify({ v: 1, title: 'x'.repeat(300_000) }) }),
  },
  { name: 'a document-bound list', expectStatus: 200, request: (s) => ({ method: 'GET', path: '/api/v1/documents?limit=10', headers: bearer(s) }) },
  { name: 'a bad limit', expectStatus: 400, request: (s) => ({ method: 'GET', path: '/api/v1/documents?limit=500', headers: bearer(s) }) },
  {
    name: 'read rich-json',
    expectStatus: 200,
    request: (s) => ({ method: 'GET', path: doc(s), headers: bearer(s) }),
    after: (a, s) => s.values.set('etag', a.headers.etag!),
  },
  { name: 'a conditional read (304)', expectStatus: 304, request: (s) => ({ method: 'GET', path: doc(s), headers: { ...bearer(s), 'if-none-match': get(s, 'etag') } }) },
  { name: 'a bad format', expectStatus: 400, request: (s) => ({ method: 'GET', path: `${doc(s)}?format=pdf`, headers: bearer(s) }) },
  { name: 'an unknown document', expectStatus: 404, request: (s) => ({ method: 'GET', path: `/api/v1/documents/sdoc_${'0'.repeat(48)}`, headers: bearer(s) }) },
  mutation('a mutation without Service-If-Revision', 428, () => ({ key: 'conformance-mutate-0001', body: { v: 1, intent: 'x', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [para('x')] } } })),
  mutation(
    'a create mutation',
    200,
    (s) => ({ key: 'conformance-mutate-0002', revision: get(s, 'rev1'), body: { v: 1, intent: 'add', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [para('One *two*'), { type: 'heading', level: 2, markdown: 'Three' }] } } }),
    (a, s) => {
      s.values.set('rev2', a.headers['service-revision']!);
      s.values.set('block', String((data(a).receipt as { affectedBlockIds: string[] }).affectedBlockIds[0]));
    },
  ),
  mutation('replay the mutation', 200, (s) => ({ key: 'conformance-mutate-0002', revision: get(s, 'rev1'), body: { v: 1, intent: 'add', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [para('One *two*'), { type: 'heading', level: 2, markdown: 'Three' }] } } })),
  mutation('a stale revision (412)', 412, (s) => ({ key: 'conformance-mutate-0003', revision: get(s, 'rev1'), body: { v: 1, intent: 'edit', mutation: { kind: 'edit', blockId: get(s, 'block'), block: para('late') } } })),
  mutation('an edit with children (400)', 400, (s) => ({ key: 'conformance-mutate-0004', revision: get(s, 'rev2'), body: { v: 1, intent: 'edit', mutation: { kind: 'edit', blockId: get(s, 'block'), block: { ...para('x'), children: [] } } } })),
  mutation('a write without the scope (403)', 403, (s) => ({ key: 'conformance-mutate-0005', token: 'reader', revision: get(s, 'rev2'), body: { v: 1, intent: 'x', mutation: { kind: 'delete', blockIds: [get(s, 'block')] } } })),
  { name: 'read blocks', expectStatus: 200, request: (s) => ({ method: 'GET', path: `${doc(s)}?format=blocks`, headers: bearer(s) }) },
  { name: 'read markdown', expectStatus: 200, request: (s) => ({ method: 'GET', path: `${doc(s)}?format=markdown`, headers: bearer(s) }) },
  { name: "the person's page (401 HTML)", expectStatus: 401, request: (s) => ({ method: 'GET', path: `/documents/${get(s, 'ref')}` }) },
  { name: 'list research jobs', expectStatus: 200, request: (s) => ({ method: 'GET', path: '/api/v1/research-jobs', headers: bearer(s) }) },
  {
    name: 'start a research job',
    expectStatus: 202,
    request: (s) => ({
      method: 'POST',
      path: '/api/v1/research-jobs',
      headers: { ...bearer(s), ...json, 'idempotency-key': 'conformance-job-000001' },
      body: { v: 1, question: 'Does it conform?', profile: 'focused', visibilityIntent: 'private', deliverable: { kind: 'report', form: 'question-answer', language: 'en' }, spaceRef: { kind: 'new-document', title: 'Conformance report' } },
    }),
    after: (a, s) => {
      const jobId = (a.body as { data?: { jobId?: string } }).data?.jobId;
      if (jobId) s.values.set('job', jobId);
    },
  },
  ...jobSteps(),
  { name: 'an unknown job', expectStatus: 404, request: (s) => ({ method: 'GET', path: `/api/v1/research-jobs/${JOB}`, headers: bearer(s) }) },
  { name: 'job events as JSON', request: (s) => ({ method: 'GET', path: `/api/v1/research-jobs/${JOB}/events?after=0`, headers: bearer(s) }) },
  { name: 'job events as a stream', request: (s) => ({ method: 'GET', path: `/api/v1/research-jobs/${JOB}/events`, headers: { ...bearer(s), accept: 'text/event-stream', 'last-event-id': '3' } }) },
  { name: 'a bad event cursor', expectStatus: 400, request: (s) => ({ method: 'GET', path: `/api/v1/research-jobs/${JOB}/events?after=x`, headers: bearer(s) }) },
  { name: 'cancel an unknown job', request: (s) => ({ method: 'POST', path: `/api/v1/research-jobs/${JOB}/cancellations`, headers: { ...bearer(s), ...json, 'idempotency-key': 'conformance-cancel-0001', 'service-if-revision': 'r' }, body: { v: 1 } }) },
  { name: 'a report without format', expectStatus: 400, request: (s) => ({ method: 'GET', path: `/api/v1/research-jobs/${JOB}/report`, headers: bearer(s) }) },
  { name: 'a standalone proposal', request: (s) => ({ method: 'POST', path: '/api/v1/proposals', headers: { ...bearer(s), ...json, 'idempotency-key': 'conformance-proposal-01' }, body: { v: 1 } }) },
  { name: 'search (activation-blocked)', expectStatus: 503, request: (s) => ({ method: 'POST', path: '/api/v1/search', headers: { ...bearer(s), ...json }, body: { v: 1, scope: { kind: 'public' }, query: 'x' } }) },
  { name: 'a review read (activation-blocked)', expectStatus: 503, request: (s) => ({ method: 'GET', path: `/api/v1/reviews/krvw_${'e'.repeat(48)}`, headers: bearer(s) }) },
  { name: 'a library command', request: (s) => ({ method: 'POST', path: '/api/v1/library', headers: { ...bearer(s), ...json }, body: { type: 'save-link', url: 'https://example.org/', idempotencyKey: 'conformance-library-1' } }) },
  { name: 'a malformed public artifact locator', expectStatus: 400, request: () => ({ method: 'GET', path: `/api/v1/public/artifacts/entity/nope/${'a'.repeat(64)}` }) },
  { name: 'an unreleased public artifact', expectStatus: 404, request: () => ({ method: 'GET', path: `/api/v1/public/artifacts/entity/kent_${'a'.repeat(24)}/${'a'.repeat(64)}` }) },
  { name: 'GET /api/v1/auth after everything (the budget counted the same)', expectStatus: 200, request: (s) => ({ method: 'GET', path: '/api/v1/auth', headers: bearer(s) }) },
];
