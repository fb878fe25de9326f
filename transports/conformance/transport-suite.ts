/**
 * The transport-conformance suite: one list of requests sent through every transport (node:http,
 * in-process fetch, worker thread …), each over its own fresh service built the same way, and the
 * answers compared: status, the headers the API sets (transport-level headers, request ids and
 * dates set aside) and the body (JSON with `meta.requestId` set aside, or text).
 * @remarks Steps read what they need (token, documentRef, revision, block ids) from the answers of
 * their own transport, so the list also runs where ids are random; with deterministic engines
 * (seeded ids, fixed clock) the bodies must match byte for byte apart from request ids.
 *
 * Where it does not apply, and what covers those transports instead:
 * - MCP (transports/mcp) is not a transport of requests and answers but a set of tools over them:
 *   a tool result keeps the status, seven of the answer's headers (revision, ETag, Location,
 *   Retry-After, loss count, remaining budget, request id) and the body, and some tools act on an
 *   answer (a remembered revision, `replan` after a 412, a refusal before sending), so its answers
 *   are not the API's answers byte for byte by design. transports/mcp/mcp.test.ts drives the tools
 *   with the SDK's own client over the in-process handler and checks them against the API's answers
 *   (documents in every representation, the guards, scopes and budget, jobs, reports, library);
 *   http.test.ts and resume.test.ts hold the streamable HTTP mount.
 * - Live co-editing (transports/sync) speaks y-websocket, not HTTP requests: there is no answer to
 *   compare. transports/sync/*.test.ts and app/postgres-live.test.ts hold it with real y-websocket
 *   clients (convergence, versions, refusals, limits, across processes).
 * @example
 * transportConformance({ operatorKey, transports: [inproc, http, worker] });
 * @module
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { conformanceSteps, type RecordedAnswer, type StepState } from './transport-steps.ts';

export type { RecordedAnswer } from './transport-steps.ts';

/** A running service as the suite reaches it. */
export interface TransportTarget {
  fetch: typeof fetch;
  /** Origin without a trailing slash. */
  baseUrl: string;
  close(): Promise<void>;
}

/** A transport under test: starts a fresh service (memory storage, no seed, the suite's operator key). */
export interface TransportUnderTest {
  name: string;
  start(): Promise<TransportTarget>;
}

/** Headers that belong to the transport or the moment, not to the API's answer. */
const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'x-request-id']);

/** The random secret of a bearer token (never derived from the engine's ids): masked before comparing. */
const TOKEN_SECRET = /(svc_agent_v1_scred_[a-f0-9]{24}_)[A-Za-z0-9_-]{32,}/g;

function maskSecrets(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(TOKEN_SECRET, '$1<secret>');
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskSecrets(v)]));
  return value;
}

/** Normalize an answer: relevant headers, and JSON without the request id, or text. */
export async function recordAnswer(response: Response): Promise<RecordedAnswer> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!TRANSPORT_HEADERS.has(name)) headers[name] = value;
  });
  const text = await response.text();
  let body: unknown = text;
  if (/json/i.test(response.headers.get('content-type') ?? '') && text !== '') {
    const parsed = JSON.parse(text) as { meta?: { requestId?: unknown } };
    if (parsed.meta && typeof parsed.meta === 'object') delete parsed.meta.requestId;
    body = parsed;
  }
  return { status: response.status, headers, body };
}

/** Run every step against one transport, in order; the answers by step name, token secrets masked. */
async function runAll(target: TransportTarget, operatorKey: string): Promise<Map<string, RecordedAnswer>> {
  const out = new Map<string, RecordedAnswer>();
  const state: StepState = { operatorKey, values: new Map() };
  for (const step of conformanceSteps) {
    const spec = step.request(state);
    const init: RequestInit = { method: spec.method, headers: spec.headers ?? {} };
    if (spec.body !== undefined) init.body = typeof spec.body === 'string' || spec.body instanceof Uint8Array ? (spec.body as BodyInit) : JSON.stringify(spec.body);
    const response = await target.fetch(`${target.baseUrl}${spec.path}`, init);
    const answer = await recordAnswer(response);
    step.after?.(answer, state);
    out.set(step.name, { ...answer, body: maskSecrets(answer.body) });
  }
  return out;
}

/** Options of {@link transportConformance}. */
export interface TransportConformanceOptions {
  /** The operator key every transport's service is started with. */
  operatorKey: string;
  /** The first is the reference the others are compared with. */
  transports: readonly TransportUnderTest[];
}

/** Register the suite: one test per step, comparing every transport's answer with the reference's. */
export function transportConformance(options: TransportConformanceOptions): void {
  const s = suite(`transport conformance: ${options.transports.map((t) => t.name).join(' = ')}`);
  const answers = new Map<string, Map<string, RecordedAnswer>>();
  s.before(async () => {
    for (const transport of options.transports) {
      const target = await transport.start();
      try {
        answers.set(transport.name, await runAll(target, options.operatorKey));
      } finally {
        await target.close();
      }
    }
  });
  const [reference, ...others] = options.transports;
  if (!reference) throw new Error('transportConformance needs at least one transport');
  for (const step of conformanceSteps) {
    s(`${step.name}: the same answer over every transport`, () => {
      const expected = answers.get(reference.name)!.get(step.name)!;
      if (step.expectStatus !== undefined) assert.is(expected.status, step.expectStatus, `${reference.name} answers ${step.name} with ${step.expectStatus}`);
      for (const other of others) {
        const actual = answers.get(other.name)!.get(step.name)!;
        assert.equal(actual, expected, `${other.name} answers ${step.name} like ${reference.name}`);
      }
    });
  }
  s.run();
}
