/**
 * `npm run bench -- sync`: live co-editing under load. 50 editors (y-websocket clients in this
 * process, one credential each, as people are) and 10 agents (HTTP mutations) on one document, all on
 * loopback.
 * - agent → editors: from an agent's 200 answer until every editor's fragment shows the edit (p50,
 *   p99; negative delays — the update arrived before the answer — count as 0). Target p99 < 200 ms.
 * - person → API: from a typist's last keystroke until the API's version holds the text (includes the
 *   1 s pause of the rhythm). Target < 2 s.
 * - no lost update: every agent's last edit and every typist's text are in the final version, and
 *   every editor's fragment equals it.
 *
 * `npm run bench -- sync --storage postgres`: the same across processes. Two `kw serve --storage
 * postgres` children on a fresh database at 127.0.0.1:5432 (skipped, with the reason, when none
 * answers): editors connect to process A, agents send their mutations to process B, typists' versions
 * are read from B over HTTP. First a serial phase (one agent, nothing else writing) splits the delay:
 * agent's 200 → the NOTIFY seen by a plain LISTEN connection of this process → the first editor → the
 * last, with the agent on B and, for comparison, on A (the editors' own process).
 * Meanwhile (the agents and typists are the load) two people probe live editing: a keystroke of an
 * editor on A reaching a second editor (on B across processes: forwarded to A's room), one on B
 * reaching A, a cursor (awareness) on A reaching B; p50/p99 each. Across processes the same run
 * measures one NOTIFY hop between two storages of this process, the floor a relay of Yjs updates
 * through the database would have (docs/co-editing.md, "Several processes").
 * Counts: KW_BENCH_SYNC_EDITORS, KW_BENCH_SYNC_AGENTS, KW_BENCH_SYNC_EDITS (per agent),
 * KW_BENCH_SYNC_TYPISTS, KW_BENCH_SYNC_SERIAL (edits per serial case), KW_BENCH_SYNC_PROBES (keystroke
 * and cursor probes).
 */
import pg from 'pg';
import * as Y from 'yjs';
import { memoryStorage } from '../adapters/memory/index.ts';
import { freshDatabase, serverUnavailableReason, type FreshDatabase } from '../adapters/postgres/postgres-kit.ts';
import { CHANGE_CHANNEL } from '../adapters/postgres/schema.ts';
import { postgresStorage } from '../adapters/postgres/index.ts';
import { startProcesses, type ServerProcess } from '../app/postgres-cluster-kit.ts';
import { createApiHandler } from '../src/api/handler.ts';
import { createEngine } from '../src/engine.ts';
import { listen } from '../transports/http/listener.ts';
import { attachSync } from '../transports/sync/attach.ts';
import { findContainer, plainText, SyncClient } from '../transports/sync/sync-kit.ts';
import { recordTable } from './report.ts';

const count = (name: string, fallback: number, max: number) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`${name} must be an integer from 1 to ${max}`);
  return n;
};
const EDITORS = count('KW_BENCH_SYNC_EDITORS', 50, 100);
const AGENTS = count('KW_BENCH_SYNC_AGENTS', 10, 50);
const TYPISTS = Math.min(EDITORS, count('KW_BENCH_SYNC_TYPISTS', 5, 20));
const EDITS_PER_AGENT = count('KW_BENCH_SYNC_EDITS', 30, 1000);
const SERIAL_EDITS = count('KW_BENCH_SYNC_SERIAL', 30, 1000);
/** Keystroke and cursor probes between an editor on A and one on B, during the concurrent phase. */
const PROBES = count('KW_BENCH_SYNC_PROBES', 100, 10_000);
/** An edit that does not reach every editor within this fails the run. */
const ARRIVAL_MS = 5000;
/** At most this many 412 re-plans for one edit (the loop stays bounded). */
const MAX_ATTEMPTS = 200;
/** The typists' poll of the API in the postgres mode (one GET per poll): the resolution of that figure. */
const READ_POLL_MS = 20;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');

function textOf(fragment: Y.XmlFragment, id: string): string {
  const c = findContainer(fragment, id);
  const content = c?.get(0);
  if (!(content instanceof Y.XmlElement)) return '';
  return content
    .toArray()
    .map((t) => (t instanceof Y.XmlText ? t.toString().replace(/<[^>]*>/g, '') : ''))
    .join('');
}

/** Where the bench runs: the editors' process, the agents' process, how typists' versions are read. */
interface World {
  storage: 'memory' | 'postgres';
  /** Base URL of the process the editors connect to (A). */
  editorBase: string;
  /** Base URL of the process the agents send to (B; A itself on memory storage). */
  agentBase: string;
  operatorKey: string;
  /** The document's Markdown as the API serves it where the agents are. */
  markdown(ref: string, token: string): Promise<string>;
  /** Commit the rooms' pending edits (in-process only; a no-op across processes). */
  flush(): Promise<void>;
  /** LISTENs on the database's change channel (postgres only): each payload with its arrival time. */
  listenChanges?(onPayload: (payload: string, at: number) => void): Promise<() => Promise<void>>;
  /**
   * One hop through the database between two storages of this process (postgres only): publish →
   * the other storage's listener, for `count` keystroke-sized payloads; the delays (ms). The floor
   * of a relay of Yjs updates between rooms (option b of docs/co-editing.md), measured beside
   * the forwarding the service does.
   */
  hops?(count: number): Promise<number[]>;
  close(): Promise<void>;
}

async function memoryWorld(): Promise<World> {
  const engine = createEngine({ storage: memoryStorage() });
  const operatorKey = 'bench-operator-key-0123456789abcdef';
  const server = await listen(createApiHandler({ engine, operatorKey }), { port: 0 });
  const sync = attachSync(server.server, engine, { prefix: '/api/v1' });
  return {
    storage: 'memory',
    editorBase: server.url,
    agentBase: server.url,
    operatorKey,
    async markdown(ref) {
      const read = await engine.documents.read({ accountId: 'bench', credentialRef: null, documentRef: null }, ref, 'markdown');
      return read.format === 'markdown' ? read.markdown : '';
    },
    flush: () => sync.flush(),
    async close() {
      await sync.close();
      await server.close();
      await engine.close();
    },
  };
}

async function postgresWorld(): Promise<World | string> {
  const reason = await serverUnavailableReason();
  if (reason !== null) return reason;
  const db: FreshDatabase = await freshDatabase();
  let procs: ServerProcess[] = [];
  try {
    // A short budget window, as in bench/postgres.ts: the run must not end on a spent budget.
    procs = await startProcesses(2, db.url, { seed: false, extra: ['--budget-window', '200ms'] });
  } catch (error) {
    await db.drop();
    throw error;
  }
  const [a, b] = procs as [ServerProcess, ServerProcess];
  return {
    storage: 'postgres',
    editorBase: a.url,
    agentBase: b.url,
    operatorKey: a.operatorKey,
    async markdown(ref, token) {
      const res = await fetch(`${b.url}/api/v1/documents/${ref}?format=markdown`, { headers: { authorization: `Bearer ${token}` } });
      return res.status === 200 ? res.text() : '';
    },
    flush: async () => {},
    async listenChanges(onPayload) {
      const client = new pg.Client({ connectionString: db.url });
      client.on('error', () => {});
      await client.connect();
      client.on('notification', (n) => onPayload(n.payload ?? '', performance.now()));
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
      return () => client.end().catch(() => {});
    },
    async hops(count) {
      const [from, to] = [await postgresStorage({ url: db.url }), await postgresStorage({ url: db.url })];
      try {
        let arrived = -1;
        to.subscribeEphemeral!('bench-hop', (p) => (arrived = p[0]!));
        const payload = (k: number) => new Uint8Array(120).fill(k % 256);
        for (let t = 0; arrived === -1 && t < 500; t++) {
          await from.publishEphemeral!('bench-hop', payload(255));
          await sleep(10);
        }
        const delays: number[] = [];
        for (let k = 0; k < count; k++) {
          const mark = k % 200;
          const sent = performance.now();
          await from.publishEphemeral!('bench-hop', payload(mark));
          while (arrived !== mark && performance.now() - sent < ARRIVAL_MS) await sleep(0.2);
          delays.push(performance.now() - sent);
          await sleep(20 + Math.random() * 30);
        }
        return delays;
      } finally {
        await from.close();
        await to.close();
      }
    },
    async close() {
      await Promise.all(procs.map((p) => p.stop('SIGTERM')));
      await db.drop();
    },
  };
}

/** Run the benchmark and print (and record) its figures; `storage: 'postgres'` runs it across two processes. */
export async function runSyncBench(options: { storage?: 'memory' | 'postgres' } = {}): Promise<void> {
  const made = options.storage === 'postgres' ? await postgresWorld() : await memoryWorld();
  if (typeof made === 'string') {
    console.log(`\nLive co-editing across processes: skipped (${made})`);
    return;
  }
  const world = made;
  const api = async (base: string, path: string, init: { method?: string; token: string; headers?: Record<string, string>; body?: unknown }) => {
    const res = await fetch(`${base}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${init.token}`, 'content-type': 'application/json', ...init.headers },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    return { status: res.status, revision: res.headers.get('service-revision'), json: (await res.json()) as any };
  };
  let n = 0;
  const key = () => `bench-sync-${Date.now()}-${++n}-${Math.random().toString(36).slice(2)}`;
  const credential = async (label: string) => {
    const cred = await api(world.agentBase, '/operator/v1/credentials', {
      method: 'POST',
      token: world.operatorKey,
      body: { label, account: 'bench', scopes: ['document:create', 'document:read', 'document:write'] },
    });
    if (cred.status !== 201) throw new Error(`credential answered ${cred.status}: ${JSON.stringify(cred.json)}`);
    return cred.json.data.token as string;
  };
  const editors: SyncClient[] = [];
  let stopListening: (() => Promise<void>) | null = null;
  try {
    const token = await credential('bench agents');
    // One credential per editor, as people are: a credential holds at most 32 live connections.
    const editorTokens = await Promise.all(Array.from({ length: EDITORS }, (_, i) => credential(`bench editor ${i}`)));
    const created = await api(world.agentBase, '/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Live bench' } });
    const ref: string = created.json.data.documentRef;
    const blocks = [
      ...Array.from({ length: AGENTS }, (_, i) => ({ type: 'paragraph', markdown: `agent block ${i}` })),
      ...Array.from({ length: TYPISTS }, (_, i) => ({ type: 'paragraph', markdown: `typist block ${i}` })),
      ...Array.from({ length: 20 }, (_, i) => ({ type: 'paragraph', markdown: `filler paragraph ${i} with some text in it` })),
    ];
    const setup = await api(world.agentBase, `/api/v1/documents/${ref}/mutations`, {
      method: 'POST',
      token,
      headers: { 'idempotency-key': key(), 'service-if-revision': created.revision! },
      body: { v: 1, intent: 'bench', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks } },
    });
    if (setup.status !== 200) throw new Error(`setup answered ${setup.status}: ${JSON.stringify(setup.json)}`);
    const ids: string[] = setup.json.data.receipt.affectedBlockIds;
    const agentIds = ids.slice(0, AGENTS);
    const typistIds = ids.slice(AGENTS, AGENTS + TYPISTS);

    const url = `${world.editorBase.replace('http', 'ws')}/api/v1/documents/${ref}/sync`;
    for (let i = 0; i < EDITORS; i++) editors.push(await SyncClient.connect(url, editorTokens[i]));

    // Arrival time of each marker at each editor.
    const pending = new Map<string, { id: string; arrivals: number[] }>();
    editors.forEach((editor, e) => {
      editor.doc.on('update', () => {
        for (const [marker, p] of pending) {
          if (p.arrivals[e] === undefined && textOf(editor.fragment, p.id) === marker) p.arrivals[e] = performance.now();
        }
      });
    });
    /** Wait (at most ARRIVAL_MS after `from`) until every editor holds `marker`; the first and last arrival. */
    const arrivals = async (marker: string, entry: { arrivals: number[] }, from: number) => {
      const deadline = from + ARRIVAL_MS;
      while (entry.arrivals.filter((x) => x !== undefined).length < EDITORS && performance.now() < deadline) await sleep(2);
      const got = entry.arrivals.filter((x) => x !== undefined);
      if (got.length < EDITORS) throw new Error(`${marker} reached ${got.length} of ${EDITORS} editors within ${ARRIVAL_MS} ms`);
      pending.delete(marker);
      return { first: Math.min(...got), last: Math.max(...got) };
    };
    let retries = 0;
    /** One agent's edit of block `blockId` through `base` (HEAD, POST, again on 412): request sent and 200 times, the version. */
    const edit = async (base: string, blockId: string, marker: string) => {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const sent = performance.now();
        const head = await fetch(`${base}/api/v1/documents/${ref}`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
        const r = await api(base, `/api/v1/documents/${ref}/mutations`, {
          method: 'POST',
          token,
          headers: { 'idempotency-key': key(), 'service-if-revision': head.headers.get('service-revision')! },
          body: { v: 1, intent: 'bench', mutation: { kind: 'edit', blockId, block: { type: 'paragraph', markdown: marker } } },
        });
        if (r.status === 200) return { sent, answered: performance.now(), version: r.json.data.receipt.resultingVersion as number };
        if (r.status !== 412) throw new Error(`agent mutation answered ${r.status}: ${JSON.stringify(r.json)}`);
        retries++;
      }
      throw new Error(`${marker}: ${MAX_ATTEMPTS} attempts answered 412`);
    };
    const agentVersions: number[] = [];

    // Serial phase (postgres): one agent alone, on B and on A; the NOTIFY seen by a LISTEN connection of this process.
    const serialRows: string[][] = [];
    if (world.listenChanges) {
      const notes: { payload: string; at: number }[] = [];
      stopListening = await world.listenChanges((payload, at) => {
        if (payload.endsWith(ref)) notes.push({ payload, at });
      });
      for (const [where, base] of [
        ['B (other process)', world.agentBase],
        ['A (the editors’ process)', world.editorBase],
      ] as const) {
        const toNotify: number[] = [];
        const toFirst: number[] = [];
        const toLast: number[] = [];
        const sentToLast: number[] = [];
        for (let k = 0; k < SERIAL_EDITS; k++) {
          const marker = `serial ${where[0]} edit ${k}`;
          const entry = { id: agentIds[0]!, arrivals: [] as number[] };
          pending.set(marker, entry);
          const seen = notes.length;
          const { sent, answered, version } = await edit(base, agentIds[0]!, marker);
          agentVersions.push(version);
          const { first, last } = await arrivals(marker, entry, answered);
          const deadline = performance.now() + ARRIVAL_MS;
          while (notes.length === seen && performance.now() < deadline) await sleep(1);
          const note = notes[seen];
          if (note === undefined) throw new Error(`${marker}: no NOTIFY within ${ARRIVAL_MS} ms`);
          toNotify.push(note.at - answered);
          toFirst.push(first - answered);
          toLast.push(last - answered);
          sentToLast.push(last - sent);
          await sleep(20);
        }
        serialRows.push(
          [`serial, agent on ${where}: 200 → NOTIFY at a LISTEN client, p50 / p99 (ms)`, `${ms(pct(toNotify, 50))} / ${ms(pct(toNotify, 99))}`, ''],
          [`serial, agent on ${where}: 200 → first editor, p50 / p99 (ms)`, `${ms(pct(toFirst, 50))} / ${ms(pct(toFirst, 99))}`, ''],
          [`serial, agent on ${where}: 200 → all ${EDITORS} editors, p50 / p99 / max (ms)`, `${ms(pct(toLast, 50))} / ${ms(pct(toLast, 99))} / ${ms(Math.max(...toLast))}`, ''],
          [`serial, agent on ${where}: request sent → all editors, p50 / p99 (ms)`, `${ms(pct(sentToLast, 50))} / ${ms(pct(sentToLast, 99))}`, ''],
        );
      }
    }

    // Concurrent phase: agents, typists.
    const delays: number[] = [];
    const firstDelays: number[] = [];
    /** From the agent's last (successful) request going out, so the request's own time is included. */
    const sendDelays: number[] = [];
    const agent = async (a: number) => {
      let last = '';
      for (let k = 0; k < EDITS_PER_AGENT; k++) {
        const marker = `agent ${a} edit ${k}`;
        const entry = { id: agentIds[a]!, arrivals: [] as number[] };
        pending.set(marker, entry);
        proberMarkers.set(marker, agentIds[a]!);
        const { sent, answered, version } = await edit(world.agentBase, agentIds[a]!, marker);
        agentVersions.push(version);
        const { first, last: lastArrival } = await arrivals(marker, entry, answered);
        delays.push(Math.max(0, lastArrival - answered));
        firstDelays.push(Math.max(0, first - answered));
        sendDelays.push(lastArrival - sent);
        // The second prober's editor (on B across processes: forwarded to A's room) gets it too.
        const deadline = performance.now() + ARRIVAL_MS;
        while (!proberArrivals.has(marker) && performance.now() < deadline) await sleep(2);
        const atProber = proberArrivals.get(marker);
        if (atProber === undefined) throw new Error(`${marker} never reached the prober's editor`);
        proberDelays.push(Math.max(0, atProber - answered));
        proberMarkers.delete(marker);
        proberArrivals.delete(marker);
        last = marker;
        await sleep(20 + Math.random() * 30);
      }
      return last;
    };
    const personDelays: number[] = [];
    const typist = async (t: number) => {
      const editor = editors[t]!;
      const typed: string[] = [];
      for (let burst = 0; burst < 3; burst++) {
        const word = `typist${t}burst${burst} `;
        let lastKey = 0;
        for (let c = 0; c < word.length; c++) {
          if (c > 0) await sleep(40);
          editor.type(typistIds[t]!, word[c]!, Number.MAX_SAFE_INTEGER);
          lastKey = performance.now();
        }
        typed.push(word);
        for (;;) {
          if ((await world.markdown(ref, token)).includes(word.trim())) break;
          if (performance.now() - lastKey > 10_000) throw new Error(`typist ${t}'s burst ${burst} never became a version`);
          await sleep(world.storage === 'postgres' ? READ_POLL_MS : 10);
        }
        personDelays.push(performance.now() - lastKey);
        await sleep(200);
      }
      return typed;
    };
    // Keystrokes and cursors between two people, one on each process (postgres: editors[0] on A, a
    // second editor on B; memory: both on the one process), measured while the agents and typists run.
    const probeBlock = ids[AGENTS + TYPISTS]!;
    // Two people of their own (the typists' rhythm must not wait for the probe's keystrokes).
    const peerA = await SyncClient.connect(url, await credential('bench prober A'));
    editors.push(peerA);
    const peerB = await SyncClient.connect(`${world.agentBase.replace('http', 'ws')}/api/v1/documents/${ref}/sync`, await credential('bench prober B'));
    editors.push(peerB);
    const keyDelays: number[] = [];
    const hopDelays: number[] = [];
    /** Agents' markers (and their blocks) to note at the prober on B; when each arrived there. */
    const proberMarkers = new Map<string, string>();
    const proberArrivals = new Map<string, number>();
    const proberDelays: number[] = [];
    peerB.doc.on('update', () => {
      for (const [marker, id] of proberMarkers) if (!proberArrivals.has(marker) && textOf(peerB.fragment, id) === marker) proberArrivals.set(marker, performance.now());
    });
    const keyBackDelays: number[] = [];
    const cursorDelays: number[] = [];
    const probe = async () => {
      const onA = peerA;
      for (let k = 0; k < PROBES; k++) {
        // A keystroke on A → B's editor, then one on B → A's.
        for (const [from, to, out] of [
          [onA, peerB, keyDelays],
          [peerB, onA, keyBackDelays],
        ] as const) {
          const marker = `${from === onA ? 'a' : 'b'}${k};`;
          const sent = performance.now();
          from.type(probeBlock, marker, Number.MAX_SAFE_INTEGER);
          await to.until(() => textOf(to.fragment, probeBlock).includes(marker), `keystroke ${marker}`, ARRIVAL_MS);
          out.push(performance.now() - sent);
        }
        // A cursor move on A → B.
        const sent = performance.now();
        onA.awareness.setLocalStateField('cursor', { k });
        await peerB.until(() => (peerB.awareness.getStates().get(onA.awareness.clientID) as { cursor?: { k: number } } | undefined)?.cursor?.k === k, `cursor ${k}`, ARRIVAL_MS);
        cursorDelays.push(performance.now() - sent);
        await sleep(30 + Math.random() * 40);
      }
    };
    const started = performance.now();
    const [lastEdits, typed] = await Promise.all([
      Promise.all(Array.from({ length: AGENTS }, (_, a) => agent(a))),
      Promise.all(Array.from({ length: TYPISTS }, (_, t) => typist(t))),
      probe(),
      world.hops?.(PROBES) ?? Promise.resolve([] as number[]),
    ]).then(([edits, words, , hopped]) => {
      hopDelays.push(...hopped);
      return [edits, words] as const;
    });
    const seconds = (performance.now() - started) / 1000;
    await world.flush();
    // The probers' last keystrokes become a version after their pause.
    for (const until = performance.now() + 10_000; performance.now() < until; await sleep(50)) {
      if ((await world.markdown(ref, token)).includes(`b${PROBES - 1};`)) break;
    }
    const final = await api(world.agentBase, `/api/v1/documents/${ref}`, { token });
    const finalText = plainText(final.json.data.document.blocks);
    let lost = 0;
    for (const m of lastEdits) if (!finalText.includes(m)) lost++;
    for (const words of typed) for (const w of words) if (!finalText.includes(w.trim())) lost++;
    // Each agent's 200 made its own version; the others are the people's: none missing, none twice.
    const versionsMade = final.json.data.version - setup.json.data.document.version;
    const distinct = new Set(agentVersions).size === agentVersions.length && agentVersions.every((v) => v > setup.json.data.document.version && v <= final.json.data.version);
    const peopleVersions = versionsMade - agentVersions.length;
    if (!distinct || peopleVersions < 1) lost++;
    // Where the editors are (A) serves the same version.
    const onA = await api(world.editorBase, `/api/v1/documents/${ref}`, { token });
    if (onA.json.data.version !== final.json.data.version) lost++;
    // Every editor converges on the final version.
    const deadline = performance.now() + 5000;
    let diverged = EDITORS;
    while (performance.now() < deadline) {
      diverged = editors.filter((e) => plainText(e.blocks().slice(0, -1)) !== finalText).length;
      if (diverged === 0) break;
      await sleep(20);
    }
    const across = world.storage === 'postgres';
    const rows = [
      ['figure', 'value', 'target'],
      ...serialRows,
      [`agent 200 → first editor, p50 / p99 (ms)`, `${ms(pct(firstDelays, 50))} / ${ms(pct(firstDelays, 99))}`, ''],
      [`agent 200 → all ${EDITORS} editors, p50 (ms)`, ms(pct(delays, 50)), ''],
      [`agent 200 → all ${EDITORS} editors, p99 (ms)`, ms(pct(delays, 99)), '< 200'],
      [`agent 200 → all ${EDITORS} editors, max (ms)`, ms(Math.max(...delays)), ''],
      [`agent 200 → the prober's editor${across ? ' on B (forwarded)' : ''}, p50 / p99 (ms)`, `${ms(pct(proberDelays, 50))} / ${ms(pct(proberDelays, 99))}`, '< 200'],
      [`agent request sent → all ${EDITORS} editors, p50 (ms)`, ms(pct(sendDelays, 50)), ''],
      [`agent request sent → all ${EDITORS} editors, p99 (ms)`, ms(pct(sendDelays, 99)), ''],
      [`keystroke on ${across ? 'A → editor on B' : 'one editor → another'}, p50 / p99 (ms)`, `${ms(pct(keyDelays, 50))} / ${ms(pct(keyDelays, 99))}`, '< 200'],
      [`keystroke on ${across ? 'B → editor on A' : 'the other → the one'}, p50 / p99 (ms)`, `${ms(pct(keyBackDelays, 50))} / ${ms(pct(keyBackDelays, 99))}`, '< 200'],
      [`cursor (awareness) ${across ? 'A → B' : 'one → other'}, p50 / p99 (ms)`, `${ms(pct(cursorDelays, 50))} / ${ms(pct(cursorDelays, 99))}`, '< 200'],
      ...(across ? [[`one NOTIFY hop between two storages (a relay's floor), p50 / p99 (ms)`, `${ms(pct(hopDelays, 50))} / ${ms(pct(hopDelays, 99))}`, '']] : []),
      [`last keystroke → API version${across ? ' read on B' : ''}, p50 (ms)`, pct(personDelays, 50).toFixed(0), ''],
      [`last keystroke → API version${across ? ' read on B' : ''}, max (ms)`, Math.max(...personDelays).toFixed(0), '< 2000'],
      ['agent edits / typing bursts', `${delays.length} / ${personDelays.length}`, ''],
      ['pause of the rhythm (ms)', '1000', ''],
      ['agent 412 retries', String(retries), ''],
      ['versions made (agents + people)', `${versionsMade} (${agentVersions.length} + ${peopleVersions})`, ''],
      ['lost updates', String(lost), '0'],
      ['editors not converged', String(diverged), '0'],
      ['concurrent phase run time (s)', seconds.toFixed(1), ''],
    ];
    const title = across
      ? `Live co-editing across processes (PostgreSQL): ${EDITORS} editors on A, ${AGENTS} agents on B, ${TYPISTS} typists`
      : `Live co-editing: ${EDITORS} editors, ${AGENTS} agents, ${TYPISTS} typists`;
    console.log(`\n${title}`);
    for (const r of rows) console.log(`  ${r[0]!.padEnd(70)} ${r[1]!.padStart(22)}  ${r[2]}`);
    recordTable(title, rows, 1);
    if (lost > 0 || diverged > 0) throw new Error(`sync bench: ${lost} lost updates, ${diverged} editors diverged`);
  } finally {
    await Promise.all(editors.map((e) => e.close()));
    await stopListening?.();
    await world.close();
  }
}
