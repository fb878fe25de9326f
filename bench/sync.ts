/**
 * `npm run bench -- sync`: live co-editing under load. 50 editors (y-websocket clients in this
 * process) and 10 agents (HTTP mutations) on one document, all on loopback.
 * - agent → editors: from an agent's 200 answer until every editor's fragment shows the edit (p50,
 *   p99; negative delays — the update arrived before the answer — count as 0). Target p99 < 200 ms.
 * - person → API: from a typist's last keystroke until the API's version holds the text (includes the
 *   1 s pause of the rhythm). Target < 2 s.
 * - no lost update: every agent's last edit and every typist's text are in the final version, and
 *   every editor's fragment equals it.
 */
import { memoryStorage } from '../adapters/memory/index.ts';
import { createApiHandler } from '../src/api/handler.ts';
import { createEngine } from '../src/engine.ts';
import { listen } from '../transports/http/listener.ts';
import { attachSync } from '../transports/sync/attach.ts';
import { findContainer, plainText, SyncClient } from '../transports/sync/sync-kit.ts';
import * as Y from 'yjs';
import { recordTable } from './report.ts';

const EDITORS = 50;
const AGENTS = 10;
const TYPISTS = 5;
const EDITS_PER_AGENT = 30;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function textOf(fragment: Y.XmlFragment, id: string): string {
  const c = findContainer(fragment, id);
  const content = c?.get(0);
  if (!(content instanceof Y.XmlElement)) return '';
  return content
    .toArray()
    .map((t) => (t instanceof Y.XmlText ? t.toString().replace(/<[^>]*>/g, '') : ''))
    .join('');
}

/** Run the benchmark and print (and record) its figures. */
export async function runSyncBench(): Promise<void> {
  const engine = createEngine({ storage: memoryStorage() });
  const operatorKey = 'bench-operator-key-0123456789abcdef';
  const server = await listen(createApiHandler({ engine, operatorKey }), { port: 0 });
  const sync = attachSync(server.server, engine, { prefix: '/api/v1' });
  const api = async (path: string, init: { method?: string; token: string; headers?: Record<string, string>; body?: unknown }) => {
    const res = await fetch(`${server.url}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${init.token}`, 'content-type': 'application/json', ...init.headers },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    return { status: res.status, revision: res.headers.get('service-revision'), json: (await res.json()) as any };
  };
  let n = 0;
  const key = () => `bench-sync-${Date.now()}-${++n}-${Math.random().toString(36).slice(2)}`;
  try {
    const cred = await api('/operator/v1/credentials', {
      method: 'POST',
      token: operatorKey,
      body: { label: 'bench', account: 'bench', scopes: ['document:create', 'document:read', 'document:write'] },
    });
    const token: string = cred.json.data.token;
    const created = await api('/api/v1/documents', { method: 'POST', token, headers: { 'idempotency-key': key() }, body: { v: 1, title: 'Live bench' } });
    const ref: string = created.json.data.documentRef;
    const blocks = [
      ...Array.from({ length: AGENTS }, (_, i) => ({ type: 'paragraph', markdown: `agent block ${i}` })),
      ...Array.from({ length: TYPISTS }, (_, i) => ({ type: 'paragraph', markdown: `typist block ${i}` })),
      ...Array.from({ length: 20 }, (_, i) => ({ type: 'paragraph', markdown: `filler paragraph ${i} with some text in it` })),
    ];
    const made = await api(`/api/v1/documents/${ref}/mutations`, {
      method: 'POST',
      token,
      headers: { 'idempotency-key': key(), 'service-if-revision': created.revision! },
      body: { v: 1, intent: 'bench', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks } },
    });
    const ids: string[] = made.json.data.receipt.affectedBlockIds;
    const agentIds = ids.slice(0, AGENTS);
    const typistIds = ids.slice(AGENTS, AGENTS + TYPISTS);

    const url = `${server.url.replace('http', 'ws')}/api/v1/documents/${ref}/sync`;
    const editors: SyncClient[] = [];
    for (let i = 0; i < EDITORS; i++) editors.push(await SyncClient.connect(url, token));

    // Arrival time of each marker at each editor.
    const pending = new Map<string, { id: string; arrivals: number[] }>();
    editors.forEach((editor, e) => {
      editor.doc.on('update', () => {
        for (const [marker, p] of pending) {
          if (p.arrivals[e] === undefined && textOf(editor.fragment, p.id) === marker) p.arrivals[e] = performance.now();
        }
      });
    });
    const delays: number[] = [];
    /** From the agent's last (successful) request going out, so the request's own time is included. */
    const sendDelays: number[] = [];
    let retries = 0;
    const agent = async (a: number) => {
      let last = '';
      for (let k = 0; k < EDITS_PER_AGENT; k++) {
        const marker = `agent ${a} edit ${k}`;
        const entry = { id: agentIds[a]!, arrivals: [] as number[] };
        pending.set(marker, entry);
        let sent = 0;
        for (;;) {
          sent = performance.now();
          const head = await fetch(`${server.url}/api/v1/documents/${ref}`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
          const r = await api(`/api/v1/documents/${ref}/mutations`, {
            method: 'POST',
            token,
            headers: { 'idempotency-key': key(), 'service-if-revision': head.headers.get('service-revision')! },
            body: { v: 1, intent: 'bench', mutation: { kind: 'edit', blockId: agentIds[a], block: { type: 'paragraph', markdown: marker } } },
          });
          if (r.status === 200) break;
          if (r.status !== 412) throw new Error(`agent mutation answered ${r.status}: ${JSON.stringify(r.json)}`);
          retries++;
        }
        const answered = performance.now();
        const deadline = answered + 5000;
        while (entry.arrivals.filter((x) => x !== undefined).length < EDITORS && performance.now() < deadline) await sleep(2);
        const got = entry.arrivals.filter((x) => x !== undefined);
        if (got.length < EDITORS) throw new Error(`${marker} reached ${got.length} of ${EDITORS} editors within 5 s`);
        delays.push(Math.max(0, Math.max(...got) - answered));
        sendDelays.push(Math.max(...got) - sent);
        pending.delete(marker);
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
          const read = await engine.documents.read({ accountId: 'bench', credentialRef: null, documentRef: null }, ref, 'markdown');
          if (read.format === 'markdown' && read.markdown.includes(word.trim())) break;
          if (performance.now() - lastKey > 10_000) throw new Error(`typist ${t}'s burst ${burst} never became a version`);
          await sleep(10);
        }
        personDelays.push(performance.now() - lastKey);
        await sleep(200);
      }
      return typed;
    };
    const started = performance.now();
    const [lastEdits, typed] = await Promise.all([Promise.all(Array.from({ length: AGENTS }, (_, a) => agent(a))), Promise.all(Array.from({ length: TYPISTS }, (_, t) => typist(t)))]);
    const seconds = (performance.now() - started) / 1000;
    await sync.flush();
    const final = await api(`/api/v1/documents/${ref}`, { token });
    const finalText = plainText(final.json.data.document.blocks);
    let lost = 0;
    for (const m of lastEdits) if (!finalText.includes(m)) lost++;
    for (const words of typed) for (const w of words) if (!finalText.includes(w.trim())) lost++;
    // Every editor converges on the final version.
    const deadline = performance.now() + 5000;
    let diverged = EDITORS;
    while (performance.now() < deadline) {
      diverged = editors.filter((e) => plainText(e.blocks().slice(0, -1)) !== finalText).length;
      if (diverged === 0) break;
      await sleep(20);
    }
    const rows = [
      ['figure', 'value', 'target'],
      ['agent 200 → all 50 editors, p50 (ms)', pct(delays, 50).toFixed(1), ''],
      ['agent 200 → all 50 editors, p99 (ms)', pct(delays, 99).toFixed(1), '< 200'],
      ['agent 200 → all 50 editors, max (ms)', Math.max(...delays).toFixed(1), ''],
      ['agent request sent → all 50 editors, p50 (ms)', pct(sendDelays, 50).toFixed(1), ''],
      ['agent request sent → all 50 editors, p99 (ms)', pct(sendDelays, 99).toFixed(1), ''],
      ['last keystroke → API version, p50 (ms)', pct(personDelays, 50).toFixed(0), ''],
      ['last keystroke → API version, max (ms)', Math.max(...personDelays).toFixed(0), '< 2000'],
      ['agent edits / typing bursts', `${delays.length} / ${personDelays.length}`, ''],
      ['pause of the rhythm (ms)', '1000', ''],
      ['agent 412 retries', String(retries), ''],
      ['versions made', String(final.json.data.version - made.json.data.document.version), ''],
      ['lost updates', String(lost), '0'],
      ['editors not converged', String(diverged), '0'],
      ['run time (s)', seconds.toFixed(1), ''],
    ];
    console.log(`\nLive co-editing: ${EDITORS} editors + ${AGENTS} agents + ${TYPISTS} typists on one document`);
    for (const r of rows) console.log(`  ${r[0]!.padEnd(48)} ${r[1]!.padStart(10)}  ${r[2]}`);
    recordTable(`Live co-editing: ${EDITORS} editors, ${AGENTS} agents, ${TYPISTS} typists`, rows, 1);
    if (lost > 0 || diverged > 0) throw new Error(`sync bench: ${lost} lost updates, ${diverged} editors diverged`);
    await Promise.all(editors.map((e) => e.close()));
  } finally {
    await sync.close();
    await server.close();
    await engine.close();
  }
}
