/**
 * The contract fuzzer (no tests of its own): requests generated from the published OpenAPI document
 * (`/openapi.json`) with fast-check, valid ones derived from the schemas and mutated ones (wrong types,
 * missing and extra fields, bad path ids, bad headers, wrong methods, oversized bodies), sent over
 * HTTP to a real `kw` dev server on 127.0.0.1, every answer checked against the document.
 * @remarks Used by app/fuzz.test.ts (a bounded run with a fixed seed) and `npm run bench -- fuzz`
 * (a longer run). The schema → arbitrary translation covers the subset the document uses: `$ref`,
 * `const`, `enum`, `oneOf`/`anyOf`, `type` (one or several), objects with `required`,
 * `additionalProperties` and `propertyNames`, arrays with `minItems`/`maxItems`, strings with
 * `pattern` (fast-check's `stringMatching`) and lengths, integers and numbers with bounds.
 * @module
 */
import http from 'node:http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { serve, type DevServer } from './serve.ts';

type Json = Record<string, any>;

/** One answer that does not match the document. */
export interface FuzzViolation {
  operationId: string;
  method: string;
  path: string;
  status: number;
  problem: string;
  /** What the request was (for reproducing it). */
  request: string;
}

/** Which credential a request carries. */
export type TokenKind = 'demo' | 'noScopes' | 'documentBound' | 'none' | 'garbage';

/** One generated request. */
export interface FuzzRequest {
  operationId: string;
  /** The path template of the operation. */
  template: string;
  method: string;
  /** True when the method is not one of the path's (the answer must be 405 or an earlier refusal). */
  wrongMethod: boolean;
  path: string;
  token: TokenKind;
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  /** What was mutated, for the report. */
  mutation: string;
}

/** Options of {@link runFuzz}. */
export interface FuzzOptions {
  seed: number;
  /** How many requests. */
  runs: number;
  /** Per-request timeout (an answer slower than this is reported as a hang); default 5000 ms. */
  timeoutMs?: number;
  /** Called after each request (progress of long runs). */
  onRequest?: (index: number, request: FuzzRequest, status: number) => void;
}

/** What a run saw. */
export interface FuzzReport {
  requests: number;
  /** How many answers per status. */
  statuses: Record<number, number>;
  /** How many requests per operation. */
  operations: Record<string, number>;
  violations: FuzzViolation[];
}

const MAX_STRING = 24;
const MAX_DEPTH = 3;

/** Resolves `#/...` references inside the document. */
function resolver(doc: Json): (node: Json) => Json {
  const resolve = (node: Json): Json => {
    if (typeof node?.$ref !== 'string') return node;
    return resolve(node.$ref.slice(2).split('/').reduce((n: Json, key: string) => n[key], doc));
  };
  return resolve;
}

/** A fast-check arbitrary of values valid against `schema` (the subset the document uses). */
export function arbitraryOf(schema: Json, doc: Json, depth = 0): fc.Arbitrary<unknown> {
  const resolve = resolver(doc);
  const of = (s: Json, d: number): fc.Arbitrary<unknown> => {
    if (typeof s?.$ref === 'string') return of(resolve(s), d + 1);
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
    const alternatives = s.oneOf ?? s.anyOf;
    if (Array.isArray(alternatives)) {
      // Past the depth limit, prefer alternatives that do not recurse.
      const options = d > MAX_DEPTH ? alternatives.filter((a: Json) => !JSON.stringify(a).includes('$ref')) : alternatives;
      return fc.oneof(...(options.length ? options : alternatives).map((a: Json) => of(a, d + 1)));
    }
    if (Array.isArray(s.type)) return fc.oneof(...s.type.map((t: string) => of({ ...s, type: t }, d)));
    switch (s.type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1_000_000 });
      case 'number':
        return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
      case 'string': {
        const min = s.minLength ?? 0;
        const max = Math.max(min, Math.min(s.maxLength ?? MAX_STRING, min + MAX_STRING));
        if (typeof s.pattern === 'string') {
          const re = new RegExp(s.pattern, 'u');
          // One character class repeated: characters of the class, as many as the lengths ask.
          const repeated = /^\^(\[(?:[^\]\\]|\\.)*\])[*+]\$$/.exec(s.pattern);
          if (repeated) return fc.string({ minLength: Math.max(min, 1), maxLength: max, unit: fc.stringMatching(new RegExp(`^${repeated[1]}$`, 'u')) }).filter((x) => re.test(x));
          // fast-check cannot generate from lookaheads: generate without them, keep what the whole pattern accepts.
          const generating = new RegExp(s.pattern.replace(/\(\?[=!][^()]*\)/g, ''), 'u');
          return fc.stringMatching(generating).filter((x) => [...x].length >= min && [...x].length <= (s.maxLength ?? Infinity) && re.test(x));
        }
        return fc.string({ minLength: min, maxLength: max, unit: 'grapheme' });
      }
      case 'array': {
        const min = s.minItems ?? 0;
        const max = d > MAX_DEPTH ? min : Math.min(s.maxItems ?? min + 3, min + 3);
        if (max === 0) return fc.constant([]);
        return fc.array(of(s.items ?? {}, d + 1), { minLength: min, maxLength: max });
      }
      case 'object':
      case undefined: {
        if (!s.properties && !s.additionalProperties && s.type === undefined) return fc.jsonValue({ maxDepth: 2 });
        const props: Record<string, fc.Arbitrary<unknown>> = {};
        const required: string[] = s.required ?? [];
        // Past the depth limit only the required properties (a recursive schema ends).
        for (const [name, p] of Object.entries<Json>(s.properties ?? {})) if (d <= MAX_DEPTH || required.includes(name)) props[name] = of(p, d + 1);
        const record = fc.record(props, { requiredKeys: required });
        if (s.additionalProperties && typeof s.additionalProperties === 'object' && !s.properties) {
          const key = s.propertyNames ? (of({ type: 'string', ...s.propertyNames }, d + 1) as fc.Arbitrary<string>) : fc.string({ maxLength: 12 });
          return fc.dictionary(key, of(s.additionalProperties, d + 1), { maxKeys: d > MAX_DEPTH ? 0 : 3 });
        }
        return record;
      }
      default:
        return fc.jsonValue({ maxDepth: 1 });
    }
  };
  return of(schema, depth);
}

/** A value of the wrong JSON type for `schema`. */
function wrongType(schema: Json, doc: Json): fc.Arbitrary<unknown> {
  const s = resolver(doc)(schema);
  const t = s.type ?? (s.properties ? 'object' : s.items ? 'array' : undefined);
  const pool: fc.Arbitrary<unknown>[] = [fc.constant(null), fc.integer(), fc.boolean(), fc.string({ maxLength: 8 }), fc.constant([]), fc.constant({}), fc.double()];
  return fc.oneof(...pool).filter((x) => {
    const kind = x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x === 'number' ? (Number.isInteger(x) ? 'integer' : 'number') : typeof x;
    if (t === undefined) return true;
    const types = Array.isArray(t) ? t : [t];
    return !types.includes(kind) && !(kind === 'integer' && types.includes('number'));
  });
}

interface OperationEntry {
  operationId: string;
  template: string;
  method: string;
  op: Json;
  allowed: string[];
}

interface Context {
  doc: Json;
  documentRef: string;
  jobIds: string[];
  artifact: { kind: string; id: string; revision: string } | null;
  revisions: Map<string, string>;
}

const WRONG_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Header values that are wrong in some way. */
const badHeaderValue = fc.oneof(
  fc.constant(''),
  fc.constant(' '),
  fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom('a', '-', '_', '0', ' ', '!', '"', '/') }),
  fc.constant('x'.repeat(300)),
  fc.constant('W/"nope"'),
  fc.constant('*'),
  fc.constant('ünïcode'),
  fc.constant('0'),
);

/** Path segments that are not ids of anything (valid grammar or not). */
const badSegment = fc.oneof(
  fc.string({ minLength: 1, maxLength: 20 }).map(encodeURIComponent),
  fc.constantFrom('%', '%zz', '%00', '..', '.', '%2F', 'a%2Fb', 'x'.repeat(400), '%F0%9F%98%80', '-1', '0', 'null', 'doc_', '%C3%28'),
);

/** Values for a path parameter: the known ids mostly, generated ones and bad ones sometimes. */
function pathValue(name: string, schema: Json, ctx: Context): fc.Arbitrary<string> {
  const known: string[] = [];
  if (name === 'documentRef') known.push(ctx.documentRef);
  if (name === 'jobId') known.push(...ctx.jobIds);
  if (ctx.artifact && name === 'kind') known.push(ctx.artifact.kind);
  if (ctx.artifact && name === 'artifactId') known.push(ctx.artifact.id);
  if (ctx.artifact && name === 'revision') known.push(ctx.artifact.revision);
  const generated = arbitraryOf(schema, ctx.doc).map((x) => encodeURIComponent(String(x)));
  return known.length ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: generated, weight: 1 }) : generated;
}

const idempotencyKey = fc.stringMatching(/^[A-Za-z0-9_-]{16,40}$/);

/** The arbitrary of one request to `entry`, valid or mutated. */
function requestOf(entry: OperationEntry, ctx: Context): fc.Arbitrary<FuzzRequest> {
  const { op, doc } = { op: entry.op, doc: ctx.doc };
  const resolve = resolver(doc);
  const params: Json[] = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const headerParams = params.filter((p) => p.in === 'header');
  const bodySchema: Json | undefined = op.requestBody?.content?.['application/json']?.schema;
  const bytes = op.requestBody?.content?.['application/octet-stream'] !== undefined;

  const segments = fc.tuple(...pathParams.map((p) => pathValue(p.name, p.schema, ctx)));
  const query = fc.record(
    Object.fromEntries(queryParams.map((p) => [p.name, arbitraryOf(p.schema, doc).map(String)])),
    { requiredKeys: queryParams.filter((p) => p.required).map((p) => p.name) },
  ) as fc.Arbitrary<Record<string, string>>;
  const headers = fc.record(
    Object.fromEntries(
      headerParams.map((p) => {
        if (p.name === 'Idempotency-Key') return [p.name, idempotencyKey];
        if (p.name === 'Service-If-Revision') return [p.name, fc.constant('\u0000current')];
        if (p.name === 'Accept') return [p.name, fc.constantFrom('application/json', 'text/event-stream')];
        return [p.name, arbitraryOf(p.schema, doc).map(String)];
      }),
    ),
    { requiredKeys: headerParams.filter((p) => p.required).map((p) => p.name) },
  ) as fc.Arbitrary<Record<string, string>>;
  const validBody: fc.Arbitrary<unknown> = bodySchema ? arbitraryOf(bodySchema, doc) : fc.constant(undefined);
  const token = fc.constantFrom<TokenKind>('demo', 'demo', 'demo', 'demo', 'noScopes', 'documentBound', 'documentBound', 'none', 'garbage');

  type Mutation = { name: string; apply: (r: Draft) => fc.Arbitrary<Draft> };
  interface Draft {
    segments: string[];
    query: Record<string, string>;
    headers: Record<string, string>;
    body: unknown;
    raw?: string | Uint8Array;
    method: string;
    wrongMethod: boolean;
  }
  const same = (r: Draft) => fc.constant(r);
  const mutations: Mutation[] = [{ name: 'valid', apply: same }];
  if (pathParams.length) {
    mutations.push({
      name: 'bad path id',
      apply: (r) => fc.tuple(fc.nat(pathParams.length - 1), badSegment).map(([i, seg]) => ({ ...r, segments: r.segments.map((s, j) => (j === i ? seg : s)) })),
    });
  }
  if (queryParams.length) {
    mutations.push({
      name: 'bad query',
      apply: (r) => fc.tuple(fc.constantFrom(...queryParams.map((p) => p.name)), badHeaderValue).map(([name, value]) => ({ ...r, query: { ...r.query, [name]: value } })),
    });
  }
  mutations.push({
    name: 'bad header',
    apply: (r) =>
      fc
        .tuple(fc.constantFrom('X-Request-Id', 'Idempotency-Key', 'Service-If-Revision', 'If-None-Match', 'Accept', 'Content-Type', 'Last-Event-ID'), badHeaderValue, fc.boolean())
        .map(([name, value, drop]) => {
          const headers = { ...r.headers };
          if (drop) delete headers[name];
          else headers[name] = name === 'Accept' ? (value.length % 2 ? 'text/html' : 'application/xml;q=1, */*;q=0') : value;
          return { ...r, headers };
        }),
  });
  mutations.push({
    name: 'wrong method',
    apply: (r) => {
      const others = WRONG_METHODS.filter((m) => !entry.allowed.includes(m));
      return others.length ? fc.constantFrom(...others).map((method) => ({ ...r, method, wrongMethod: true })) : same(r);
    },
  });
  if (bodySchema) {
    const root = resolve(bodySchema);
    const props = Object.keys(root.properties ?? {});
    mutations.push({ name: 'body of the wrong type', apply: (r) => wrongType(bodySchema, doc).map((body) => ({ ...r, body })) });
    if (props.length) {
      mutations.push({
        name: 'field of the wrong type',
        apply: (r) =>
          fc.constantFrom(...props).chain((name) => wrongType(root.properties[name], doc).map((x) => ({ ...r, body: { ...(r.body as Json), [name]: x } }))),
      });
      mutations.push({
        name: 'missing field',
        apply: (r) =>
          fc.constantFrom(...props).map((name) => {
            const body = { ...(r.body as Json) };
            delete body[name];
            return { ...r, body };
          }),
      });
    }
    mutations.push({
      name: 'extra field',
      apply: (r) => fc.tuple(fc.string({ minLength: 1, maxLength: 10 }), fc.jsonValue({ maxDepth: 1 })).map(([k, x]) => ({ ...r, body: { ...(r.body as Json), [k]: x } })),
    });
    mutations.push({
      name: 'not JSON',
      apply: (r) => fc.constantFrom('{', '', 'null', '[]', '{"a":', '\u0000', '"text"', '{"__proto__":{"x":1}}', '{"a":1,"a":2}').map((raw) => ({ ...r, body: undefined, raw })),
    });
  }
  if (bodySchema || bytes) {
    mutations.push({
      name: 'oversized body',
      apply: (r) => fc.constantFrom(256 * 1024 + 1, 400 * 1024, 2 * 1024 * 1024).map((n) => ({ ...r, body: undefined, raw: bytes ? new Uint8Array(n) : JSON.stringify({ pad: 'x'.repeat(n) }) })),
    });
  }

  const base = fc.record({ segments, query, headers, body: validBody, token });
  return fc.tuple(base, fc.constantFrom(...mutations)).chain(([b, mutation]) => {
    const draft: Draft = { segments: b.segments as string[], query: b.query, headers: b.headers, body: b.body, method: entry.method, wrongMethod: false };
    return mutation.apply(draft).map((d): FuzzRequest => {
      let i = 0;
      const path = entry.template.replace(/\{[^}]+\}/g, () => d.segments[i++] ?? 'x');
      const qs = new URLSearchParams(d.query).toString();
      const headers = { ...d.headers };
      let body: string | Uint8Array | undefined = d.raw;
      if (body === undefined && bodySchema && d.body !== undefined) body = JSON.stringify(d.body);
      if (body === undefined && bytes && mutation.name !== 'oversized body') body = new TextEncoder().encode('fuzz upload bytes');
      if (body !== undefined && headers['Content-Type'] === undefined) headers['Content-Type'] = bytes ? 'application/octet-stream' : 'application/json';
      return {
        operationId: entry.operationId,
        template: entry.template,
        method: d.method,
        wrongMethod: d.wrongMethod,
        path: qs ? `${path}?${qs}` : path,
        token: b.token,
        headers,
        body,
        mutation: mutation.name,
      };
    });
  });
}

/** Send one request; SSE answers are read up to their first chunk, then closed. */
function send(base: string, r: FuzzRequest, authorization: string | undefined, timeoutMs: number): Promise<Answer | 'timeout'> {
  const headers: Record<string, string> = {};
  // Header values node can send (HTAB, visible ASCII, Latin-1): anything else generated becomes '?'.
  for (const [k, x] of Object.entries(r.headers)) if (x !== '\u0000current') headers[k] = x.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
  if (authorization) headers.Authorization = authorization;
  if (r.body !== undefined) headers['Content-Length'] = String(typeof r.body === 'string' ? Buffer.byteLength(r.body) : r.body.byteLength);
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${r.path}`, { method: r.method, headers, agent: false });
    const timer = setTimeout(() => {
      req.destroy();
      resolve('timeout');
    }, timeoutMs);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      const done = () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      };
      const sse = /^text\/event-stream/.test(String(res.headers['content-type'] ?? ''));
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (sse) {
          req.destroy();
          done();
        }
      });
      res.on('end', done);
      res.on('error', () => done());
      if (sse && res.statusCode !== 200) res.resume();
    });
    req.on('error', (e) => {
      clearTimeout(timer);
      // The server may answer (413/400) and close before the whole body was written.
      if ((e as NodeJS.ErrnoException).code === 'EPIPE' || (e as NodeJS.ErrnoException).code === 'ECONNRESET') resolve({ status: -1, headers: {}, text: String(e) });
      else reject(e);
    });
    if (r.body !== undefined) req.write(r.body);
    req.end();
  });
}

/** An answer as the checker sees it. */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * Checks answers against the document (one Ajv validator per schema): the status is declared for the
 * operation (a method the path lacks: 405 or an earlier refusal), never a 5xx other than 503, the body
 * validates against the schema of its status and media type (errors: the ErrorEnvelope), X-Request-Id
 * always, the headers the document marks required (and Service-Revision on declared successes),
 * Retry-After on 429 and 503, Allow on 405, and the value of every declared header present valid
 * against its schema.
 */
export class AnswerChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly resolve: (node: Json) => Json;
  constructor(private readonly doc: Json) {
    this.ajv.addSchema({ $id: 'https://kw.fuzz/openapi.json', components: { schemas: doc.components.schemas } });
    this.resolve = resolver(doc);
  }
  private validator(schema: Json): ValidateFunction {
    const text = JSON.stringify(schema).replaceAll('"#/components/schemas/', '"https://kw.fuzz/openapi.json#/components/schemas/');
    let fn = this.validators.get(text);
    if (!fn) this.validators.set(text, (fn = this.ajv.compile(JSON.parse(text))));
    return fn;
  }
  /** The problems of `answer` to `r` (empty when it matches the document). */
  check(r: FuzzRequest, op: Json, answer: Answer): string[] {
    const problems: string[] = [];
    const { status, headers, text } = answer;
    if (status === -1) return problems; // the server closed early on an oversized body: nothing to check
    if (status >= 500 && status !== 503) problems.push(`status ${status}: ${text.slice(0, 300)}`);
    if (!headers['x-request-id']) problems.push('no X-Request-Id');
    if ((status === 429 || status === 503) && headers['retry-after'] === undefined) problems.push(`${status} without Retry-After`);
    if (status === 405 && headers.allow === undefined) problems.push('405 without Allow');
    const type = String(headers['content-type'] ?? '');
    const media = type.split(';')[0]!.trim();
    let spec: Json | undefined;
    if (r.wrongMethod) {
      if (![400, 401, 403, 404, 405, 429, 503].includes(status)) problems.push(`status ${status} to a method the path does not have`);
      if (status < 400) return problems;
      spec = this.resolve(this.doc.components.responses.MethodNotAllowed);
    } else {
      const declared = op.responses[String(status)];
      if (declared === undefined) {
        problems.push(`status ${status} is not declared`);
        if (status < 400) return problems;
        spec = { content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } };
      } else spec = this.resolve(declared);
      for (const [name, h] of Object.entries<Json>(spec.headers ?? {})) {
        const header = this.resolve(h);
        const required = header.required === true || (name === 'Service-Revision' && status >= 200 && status < 300);
        const value = headers[name.toLowerCase()];
        if (required && value === undefined) problems.push(`the header ${name} is missing`);
        if (typeof value === 'string' && header.schema) {
          const schema = this.resolve(header.schema);
          const parsed = schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
          if (!this.validator(header.schema)(parsed)) problems.push(`the header ${name} does not validate: ${value.slice(0, 80)}`);
        }
      }
    }
    if (text === '' || r.method === 'HEAD') {
      if (status >= 400) problems.push(`an error ${status} without a body`);
      return problems;
    }
    const content = spec.content?.[media];
    if (content === undefined) {
      problems.push(`${media || '(no content type)'} is not a declared media type of ${status}`);
      return problems;
    }
    if (media === 'application/json') {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        problems.push('the body is not JSON');
        return problems;
      }
      const fn = this.validator(content.schema);
      if (!fn(body)) {
        const e = fn.errors?.[0];
        problems.push(`the body does not validate: ${e ? `${e.instancePath || '$'} ${e.message}` : 'invalid'}`);
      }
    }
    return problems;
  }
}

/** A server and the credentials a fuzz run uses. */
interface Rig {
  server: DevServer;
  tokens: Record<TokenKind, string | undefined>;
  ctx: Context;
}

async function operatorCredential(server: DevServer, spec: Json): Promise<string> {
  const res = await fetch(`${server.url}/operator/v1/credentials`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.operatorKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: 'fuzz', ...spec }),
  });
  const json = (await res.json()) as Json;
  if (res.status !== 201) throw new Error(`credential creation failed: ${res.status} ${JSON.stringify(json)}`);
  return json.data.token;
}

async function rig(): Promise<Rig> {
  const server = await serve({ port: 0, storage: 'memory', seed: 'demo', researchRunner: 'fixture', browserApp: false });
  try {
    const demo = server.demo!;
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;
    const noScopes = await operatorCredential(server, { scopes: [] }).catch(() => operatorCredential(server, { scopes: ['library:read'] }));
    const documentBound = await operatorCredential(server, { scopes: ['document:read', 'document:write'], documentRef: demo.documentRef });
    const jobIds = demo.jobs ? Object.values(demo.jobs) : [];
    const ctx: Context = { doc, documentRef: demo.documentRef, jobIds, artifact: null, revisions: new Map() };
    return {
      server,
      ctx,
      tokens: { demo: demo.token, noScopes, documentBound, none: undefined, garbage: 'svc_agent_v1_scred_000000000000000000000000_nope' },
    };
  } catch (e) {
    await server.close();
    throw e;
  }
}

/**
 * Run `runs` generated requests (seeded) against a fresh `kw` server (memory storage, demo seed,
 * fixture research runner) and check every answer against its `/openapi.json`.
 */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const { server, tokens, ctx } = await rig();
  const report: FuzzReport = { requests: 0, statuses: {}, operations: {}, violations: [] };
  try {
    const entries: OperationEntry[] = [];
    for (const [template, item] of Object.entries<Json>(ctx.doc.paths)) {
      const allowed = Object.keys(item).map((m) => m.toUpperCase());
      for (const [method, op] of Object.entries<Json>(item)) entries.push({ operationId: op.operationId, template, method: method.toUpperCase(), op, allowed });
    }
    const arb = fc.constantFrom(...entries).chain((e) => requestOf(e, ctx));
    const requests = fc.sample(arb, { seed: options.seed, numRuns: options.runs });
    const checker = new AnswerChecker(ctx.doc);
    const byId = new Map(entries.map((e) => [e.operationId, e]));
    for (const [index, r] of requests.entries()) {
      const entry = byId.get(r.operationId)!;
      if (r.headers['Service-If-Revision'] === '\u0000current') {
        const known = ctx.revisions.get(r.path.split('?')[0]!.split('/').slice(0, 5).join('/'));
        if (known) r.headers['Service-If-Revision'] = known;
        else r.headers['Service-If-Revision'] = 'r_unknown';
      }
      const token = tokens[r.token];
      const answer = await send(server.url, r, token === undefined ? undefined : `Bearer ${token}`, options.timeoutMs ?? 5000);
      report.requests++;
      report.operations[r.operationId] = (report.operations[r.operationId] ?? 0) + 1;
      const describe = `${r.method} ${r.path.slice(0, 160)} [${r.mutation}; token ${r.token}; headers ${JSON.stringify(r.headers).slice(0, 200)}; body ${typeof r.body === 'string' ? r.body.slice(0, 200) : r.body ? `${r.body.byteLength} bytes` : '-'}]`;
      if (answer === 'timeout') {
        report.violations.push({ operationId: r.operationId, method: r.method, path: r.path, status: 0, problem: `no answer within ${options.timeoutMs ?? 5000} ms`, request: describe });
        continue;
      }
      report.statuses[answer.status] = (report.statuses[answer.status] ?? 0) + 1;
      const revision = answer.headers['service-revision'];
      if (typeof revision === 'string' && r.template.startsWith('/api/v1/documents/{documentRef}')) ctx.revisions.set(r.path.split('?')[0]!.split('/').slice(0, 5).join('/'), revision);
      for (const problem of checker.check(r, entry.op, answer)) {
        report.violations.push({ operationId: r.operationId, method: r.method, path: r.path, status: answer.status, problem, request: describe });
      }
      options.onRequest?.(index, r, answer.status);
    }
  } finally {
    await server.close();
  }
  return report;
}

/** Violations grouped by operation and problem (the problem text up to its first colon), with counts. */
export function summarize(violations: readonly FuzzViolation[]): string {
  const groups = new Map<string, { count: number; example: FuzzViolation }>();
  for (const x of violations) {
    const key = `${x.operationId} ${x.status} ${x.problem.split(':')[0]}`;
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { count: 1, example: x });
  }
  return [...groups.entries()].map(([key, g]) => `${g.count}× ${key}\n    ${g.example.problem}\n    e.g. ${g.example.request}`).join('\n');
}
