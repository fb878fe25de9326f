/**
 * `npm run bench -- agreement [rounds]`: do `kw bench`'s figures agree with an independent load
 * generator? autocannon and kw bench's load engine (app/bench/runner.ts) take turns on the same
 * server — `kw serve --storage memory --quiet`, started as a user starts it — and the same workloads:
 * GET of a 10-block document (rich-json), single-block edits of 10-block documents (one document
 * per connection, each request the current revision and a new idempotency key), and a bare
 * node:http server's 1 KB answer. Each round runs every case with both tools; the table gives req/s
 * and p50 per tool, the ratio kw bench / autocannon, and the spread of each tool's req/s over the
 * rounds (the noise).
 * @module
 */
import { createRequire } from 'node:module';
import { startProcesses } from '../app/postgres-cluster-kit.ts';
import { runWorkload, type RunSettings } from '../app/bench/runner.ts';
import { bareHttpTarget, httpTarget } from '../app/bench/targets.ts';
import { BUILT_IN } from '../app/bench/workloads.ts';
import { fmt, table } from './mutations.ts';

interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
interface CannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: CannonRequest, context: Record<string, unknown>) => CannonRequest;
  onResponse?: (status: number, body: string, context: Record<string, unknown>, headers?: Record<string, string>) => void;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: { url: string; connections: number; duration: number; pipelining: number; requests?: CannonRequest[]; headers?: Record<string, string> },
  callback: (error: Error | null, result: CannonResult) => void,
) => unknown;
const cannon = (options: Parameters<typeof autocannon>[0]) => new Promise<CannonResult>((done, fail) => autocannon(options, (e, r) => (e ? fail(e) : done(r))));

/** `kw serve --storage memory --quiet` in its own process (a short budget window: one token, many requests). */
async function startApi(): Promise<{ url: string; token: string; stop(): Promise<void> }> {
  const [server] = await startProcesses(1, null, { extra: ['--budget-window', '100ms'] });
  return { url: server!.url, token: server!.demoToken!, stop: () => server!.stop() };
}

/** Documents of 10 blocks made through the API, for autocannon's requests. */
async function makeDocs(url: string, token: string, n: number): Promise<{ ref: string; revision: string; ids: string[] }[]> {
  const docs = [];
  for (let d = 0; d < n; d++) {
    const h = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const made = await fetch(`${url}/api/v1/documents`, { method: 'POST', headers: { ...h, 'idempotency-key': `agreement-doc-${Date.now()}-${d}` }, body: JSON.stringify({ v: 1, title: `agreement ${d}` }) });
    const ref = ((await made.json()) as { data: { documentRef: string } }).data.documentRef;
    const blocks = Array.from({ length: 10 }, (_, i) => ({ type: 'paragraph', markdown: `Block ${i} with some **text** in it.` }));
    const out = await fetch(`${url}/api/v1/documents/${ref}/mutations`, {
      method: 'POST',
      headers: { ...h, 'idempotency-key': `agreement-blk-${Date.now()}-${d}`, 'service-if-revision': made.headers.get('service-revision')! },
      body: JSON.stringify({ v: 1, intent: 'setup', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks } }),
    });
    const json = (await out.json()) as { data: { receipt: { affectedBlockIds: string[] } } };
    docs.push({ ref, revision: out.headers.get('service-revision')!, ids: json.data.receipt.affectedBlockIds });
  }
  return docs;
}

let counter = 0;
/** The first few non-200 answers autocannon met on edits (printed, to tell a race from a failure). */
export const statuses = new Set<string>();
/**
 * autocannon edits of one document on one connection: each request its current revision (from the
 * last answer's Service-Revision; autocannon calls onResponse before it builds the next request of
 * the connection) and a new key. One autocannon instance per connection and document, all at once:
 * autocannon's request context is reset before every request, so one instance with many
 * connections cannot keep a document to a connection, and connections then race for revisions (412).
 */
function editRequests(doc: { ref: string; revision: string; ids: string[] }, token: string): CannonRequest[] {
  return [
    {
      method: 'POST',
      setupRequest: (req) => {
        const n = ++counter;
        return {
          ...req,
          path: `/api/v1/documents/${doc.ref}/mutations`,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `agreement-edit-${String(n).padStart(10, '0')}-${doc.ref.slice(-8)}`, 'service-if-revision': doc.revision },
          body: JSON.stringify({ v: 1, intent: 'kw bench edit', mutation: { kind: 'edit', blockId: doc.ids[n % doc.ids.length], block: { type: 'paragraph', markdown: `Edited ${n} with some **text**.` } } }),
        };
      },
      onResponse: (status, body, _context, headers) => {
        if (status !== 200 && statuses.size < 3) statuses.add(`${status} ${body.slice(0, 200)}`);
        if (headers?.['service-revision']) doc.revision = headers['service-revision'];
      },
    },
  ];
}

/** autocannon on `docs.length` connections, one instance per connection and document; the results summed. */
async function cannonEdits(url: string, docs: { ref: string; revision: string; ids: string[] }[], token: string, seconds: number): Promise<CannonResult> {
  // The current revisions first: autocannon ends a run with a request in flight whose answer it drops
  // (the server may have applied it), and autocannon has no read → retry after a 412.
  for (const doc of docs) {
    const head = await fetch(`${url}/api/v1/documents/${doc.ref}`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
    doc.revision = head.headers.get('service-revision') ?? doc.revision;
  }
  const results = await Promise.all(docs.map((doc) => cannon({ url, connections: 1, duration: seconds, pipelining: 1, requests: editRequests(doc, token) })));
  const total = results.reduce((s, r) => s + r.requests.total, 0);
  const p50s = results.map((r) => r.latency.p50).sort((a, b) => a - b);
  return {
    requests: { average: total / seconds, total },
    // (the median of the connections' medians: autocannon gives no merged histogram)
    latency: { p50: p50s[Math.floor(p50s.length / 2)]!, p99: Math.max(...results.map((r) => r.latency.p99)) },
    non2xx: results.reduce((s, r) => s + r.non2xx, 0),
    errors: results.reduce((s, r) => s + r.errors, 0),
  };
}

const spread = (xs: number[]) => (xs.length < 2 ? 0 : (Math.max(...xs) - Math.min(...xs)) / (xs.reduce((s, x) => s + x, 0) / xs.length));

export async function runAgreementBench(rounds = 3): Promise<void> {
  const seconds = Number(process.env.KW_BENCH_SECONDS ?? 5);
  const connections = Number(process.env.KW_BENCH_CONNECTIONS ?? 10);
  console.log(`kw bench vs autocannon: ${connections} connections, ${seconds} s per case, ${rounds} rounds taking turns, loopback`);
  const api = await startApi();
  const bare = await bareHttpTarget({ read: 1024, edit: 1024 }, connections);
  const bareUrl = bare.label.replace(/^.*port (\d+)\)$/, 'http://127.0.0.1:$1');
  const docs = await makeDocs(api.url, api.token, connections);
  const target = httpTarget(api.url, api.token, connections);
  const settings = (workload: (typeof BUILT_IN)[string]): RunSettings => ({ workload, clients: connections, rate: null, durationS: seconds, warmupS: 1, documents: connections, blocks: 10, distribution: 'partitioned', keep: true });
  const figures: Record<string, { kw: number[]; ac: number[]; kwP50: number[]; acP50: number[] }> = {};
  const add = (name: string, kw: number, kwP50: number, ac: CannonResult) => {
    const f = (figures[name] ??= { kw: [], ac: [], kwP50: [], acP50: [] });
    f.kw.push(kw);
    f.kwP50.push(kwP50);
    // Successful requests only, as kw bench counts them.
    f.ac.push((ac.requests.total - ac.non2xx) / Number(process.env.KW_BENCH_SECONDS ?? 5));
    f.acP50.push(ac.latency.p50);
    if (ac.non2xx || ac.errors) console.log(`  autocannon ${name}: ${ac.non2xx} non-2xx, ${ac.errors} errors`);
  };
  try {
    for (let round = 0; round < rounds; round++) {
      // Alternate which tool goes first, so neither always meets the warmer (or busier) machine.
      const first = round % 2 === 0;
      const base = { connections, duration: seconds, pipelining: 1 };
      const cases: [string, () => Promise<{ kw: number; p50: number }>, () => Promise<CannonResult>][] = [
        ['bare node:http, 1 KB GET', async () => {
          const m = await runWorkload(bare, settings(BUILT_IN.read!));
          return { kw: m.throughput, p50: m.latencyMs.p50 };
        }, () => cannon({ ...base, url: `${bareUrl}/?bytes=1024` })],
        ['API GET, 10-block document', async () => {
          const m = await runWorkload(target, settings(BUILT_IN.read!));
          return { kw: m.throughput, p50: m.latencyMs.p50 };
        }, () => cannon({ ...base, url: `${api.url}/api/v1/documents/${docs[0]!.ref}`, headers: { authorization: `Bearer ${api.token}` } })],
        ['API edit, 10-block documents', async () => {
          const m = await runWorkload(target, settings(BUILT_IN.edit!));
          return { kw: m.throughput, p50: m.latencyMs.p50 };
        }, () => cannonEdits(api.url, docs, api.token, seconds)],
      ];
      for (const [name, kw, ac] of cases) {
        let k: { kw: number; p50: number };
        let a: CannonResult;
        if (first) {
          k = await kw();
          a = await ac();
        } else {
          a = await ac();
          k = await kw();
        }
        add(name, k.kw, k.p50, a);
      }
    }
  } finally {
    await target.close({ keep: true });
    await bare.close({ keep: false });
    await api.stop();
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const rows = [['case', 'kw bench req/s', 'autocannon req/s', 'kw/autocannon', 'kw spread', 'autocannon spread', 'kw p50 ms', 'autocannon p50 ms']];
  for (const [name, f] of Object.entries(figures)) {
    rows.push([name, fmt(mean(f.kw)), fmt(mean(f.ac)), `${((mean(f.kw) / mean(f.ac)) * 100).toFixed(1)}%`, `${(spread(f.kw) * 100).toFixed(0)}%`, `${(spread(f.ac) * 100).toFixed(0)}%`, mean(f.kwP50).toFixed(2), mean(f.acP50).toFixed(2)]);
  }
  for (const s of statuses) console.log(`  autocannon edit answer: ${s}`);
  table(rows, 'kw bench vs autocannon (same server, same workload, taking turns)', 3);
  console.log('spread: (max - min) / mean of the rounds; the tools agree when kw/autocannon is within the spreads');
}
