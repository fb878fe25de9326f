/**
 * The `coedit` workload of `kw bench`: N editors (y-websocket clients over
 * `/documents/{ref}/sync`, ./editor-client.ts) typing and M agents (HTTP mutations, read → retry on
 * 412) on one document. It measures what people and agents see of each other:
 * - `edit`: an agent's mutation, from sending it until its 200 (retries after 412 included);
 * - `agent-to-editors`: from an agent's 200 until every editor's document holds the edit (an update
 *   that arrives before the answer counts 0);
 * - `keystroke-to-editors`: from an editor's keystroke until every other editor holds it;
 * - `keystroke-to-version`: from an editor's last keystroke of a word until the API's current
 *   version holds the word (includes the rhythm's 1 s pause; read by polling the document).
 * Editors type in rounds: each types a word (a key every {@link KEY_MS} ms), then all wait until the
 * API holds every word, then the next round. Rounds keep the figure meaningful when the editors share
 * one token (`--url`): the server's rhythm is per credential, so one credential's typing that never
 * paused would be committed only every 5 s. At the end every editor must equal the API's document.
 * @module
 */
import { measuredSeconds, newHistogram, operationFigures, percentilesOf, round1, SecondTicker, type Histogram } from './seconds.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type DevServer } from '../serve.ts';
import { BenchEditor, plainTextOf, UpgradeRefused } from './editor-client.ts';
import { leanHttpClient } from './http-client.ts';
import type { TargetSpec } from './options.ts';
import { errorKey, MAX_ATTEMPTS, SetupFailed, type Measured, type RunSettings } from './runner.ts';
import { blockText, dropDataFolder, httpTarget, TargetRefused, type Answer, type BenchTarget } from './targets.ts';
import type { EditorBlock } from '../../src/blocks/editor-fragment.ts';

/** Milliseconds between two keystrokes of an editor (~10 characters a second, a fast typist). */
export const KEY_MS = 100;
/** An agent's edit or a keystroke not at every editor within this is an error. */
export const ARRIVAL_MS = 5000;
/** A word not in the API's version within this after its last keystroke is an error (the rhythm commits at least every 5 s). */
export const VERSION_MS = 15_000;
/** How often the API's document is read while waiting for the editors' words (the resolution of keystroke-to-version). */
export const POLL_MS = 25;

/** Where coedit runs: an API base for the agents, a sync URL for the editors, and their tokens. */
export interface CoeditWorld {
  label: string;
  kind: string;
  /** The API's base URL (`…/api/v1/…` paths are appended). */
  base: string;
  agentToken: string;
  /** One token per editor (the same one repeated when the user gave one token). */
  editorTokens: string[];
  /** Whether the document made outlives the run (so cleanup empties it). */
  persistent: boolean;
  notes: string[];
  close(keep: boolean): Promise<string[]>;
}

const SCOPES = ['document:create', 'document:read', 'document:write'];

/**
 * The world of a command line's target: a running service over HTTP (every editor uses the one
 * token), or — for `--storage` — the dev server `kw serve` runs, started in this process on
 * loopback over that storage (an editor needs a WebSocket, so coedit always goes over the network),
 * with a credential of its own for the agents and for each editor (people are distinct).
 */
export async function coeditWorld(spec: TargetSpec, editors: number): Promise<CoeditWorld> {
  if (spec.kind === 'http') {
    return {
      label: spec.url,
      kind: 'http',
      base: spec.url,
      agentToken: spec.token,
      editorTokens: Array.from({ length: editors }, () => spec.token),
      persistent: true,
      notes: editors > 1 ? ['every editor uses the one token: to the server they are one person, whose edits become versions when all of them pause (the rounds make them pause together)'] : [],
      close: async () => [],
    };
  }
  let tempDir: string | null = null;
  let server: DevServer;
  try {
    if (spec.kind === 'lowdb' && spec.data === undefined) tempDir = await mkdtemp(join(tmpdir(), 'kw-bench-'));
    server = await serve({
      host: '127.0.0.1',
      port: 0,
      storage: spec.kind,
      ...(spec.kind === 'lowdb' ? { data: spec.data ?? tempDir! } : {}),
      ...(spec.kind === 'postgres' ? { databaseUrl: spec.databaseUrl } : {}),
      seed: 'none',
      browserApp: false,
      // Many requests a second from one token: a short budget window (10,000 requests per second).
      budgetWindowMs: 1000,
      log: () => undefined,
    });
  } catch (error) {
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
    throw new TargetRefused(`cannot start a server over ${spec.kind} storage: ${(error as Error).message}`);
  }
  const token = async (label: string) => (await server.engine.credentials.create({ accountId: 'bench', label, scopes: SCOPES })).token;
  const agentToken = await token('kw bench agents');
  const editorTokens: string[] = [];
  for (let e = 0; e < editors; e++) editorTokens.push(await token(`kw bench editor ${e + 1}`));
  const where = spec.kind === 'lowdb' && spec.data !== undefined ? `lowdb (${spec.data})` : spec.kind;
  return {
    label: `in-process ${where}, served on ${server.url}`,
    kind: spec.kind,
    base: server.url,
    agentToken,
    editorTokens,
    persistent: spec.kind === 'postgres' || (spec.kind === 'lowdb' && tempDir === null),
    notes: [`coedit needs a WebSocket: the engine over ${spec.kind} storage is served in this process on loopback, as kw serve serves it (${server.url}); agents and editors go through it`],
    async close(keep) {
      await server.close();
      return dropDataFolder(tempDir, keep);
    },
  };
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
const us = (msValue: number) => Math.max(1, Math.round(msValue * 1000));

/** The figures of coedit, in the order of the table. */
export const COEDIT_FIGURES = ['edit', 'agent-to-editors', 'keystroke-to-editors', 'keystroke-to-version'] as const;
type Figure = (typeof COEDIT_FIGURES)[number];

interface AgentPending {
  blockId: string;
  marker: string;
  arrivals: (number | undefined)[];
  seen: number;
  done: (() => void) | null;
}

interface Keystroke {
  /** Length of the typist's block text once this keystroke is in. */
  length: number;
  sentAt: number;
  seen: number;
  last: number;
  measured: boolean;
}

/**
 * Run coedit in `world`: make the document, connect the editors, run agents and typing rounds for
 * the warm-up and the measured window, check that every editor converged on the API's document, clean up.
 * @throws SetupFailed when the document cannot be made; TargetRefused when an editor is refused.
 */
export async function runCoedit(world: CoeditWorld, settings: RunSettings & { editors: number }): Promise<Measured> {
  const agents = settings.clients;
  const editorCount = settings.editors;
  const api: BenchTarget = httpTarget(world.base, world.agentToken, agents + 1);
  const poller = leanHttpClient(world.base, 1);
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  let keySeq = 0;
  const key = () => `kwbench-${run}-${(++keySeq).toString(36).padStart(8, '0')}`;
  const editors: BenchEditor[] = [];
  const notes: string[] = [...world.notes];
  let ref = '';
  let revision = '';
  try {
    // The document: one block per agent, one per editor, then --blocks paragraphs.
    const made = await api.createDocument(`kw bench ${run} coedit`, key());
    if (!made.ref || !made.revision) throw new SetupFailed(`creating a document answered ${errorKey(made)}`);
    ref = made.ref;
    revision = made.revision;
    const texts = [
      ...Array.from({ length: agents }, (_, a) => `Agent block ${a + 1}`),
      ...Array.from({ length: editorCount }, (_, e) => `Editor ${e + 1} types here:`),
      ...Array.from({ length: settings.blocks }, (_, n) => blockText(n, settings.blocks)),
    ];
    const ids: string[] = [];
    for (let n = 0; n < texts.length; n += 50) {
      const blocks = texts.slice(n, n + 50).map((markdown) => ({ type: 'paragraph', markdown }));
      const out = await api.mutate(ref, 'create', revision, key(), { v: 1, intent: 'kw bench setup', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks } });
      if (out.status !== 200 || !out.revision || !out.created) throw new SetupFailed(`adding blocks to the document answered ${errorKey(out)}`);
      revision = out.revision;
      ids.push(...out.created);
    }
    const agentIds = ids.slice(0, agents);
    const typistIds = ids.slice(agents, agents + editorCount);

    const syncUrl = `${world.base.replace(/^http/, 'ws')}/api/v1/documents/${encodeURIComponent(ref)}/sync`;
    settings.progress?.(`coedit: connecting ${editorCount} editor${editorCount === 1 ? '' : 's'} to ${syncUrl}`);
    for (let e = 0; e < editorCount; e++) {
      try {
        editors.push(await BenchEditor.connect(syncUrl, world.editorTokens[e]!));
      } catch (error) {
        if (error instanceof UpgradeRefused) {
          const hint = error.status === 429 ? ' (a credential may hold only so many live connections, 32 by default: try fewer --editors)' : error.status === 503 ? ' (the room is full: try fewer --editors)' : '';
          throw new TargetRefused(`editor ${e + 1} of ${editorCount}: ${error.message}${hint}`);
        }
        throw new TargetRefused(`editor ${e + 1} of ${editorCount} could not connect to ${syncUrl}: ${(error as Error).message}`);
      }
    }

    const histograms = new Map<Figure, { h: Histogram; count: number; errors: number }>(COEDIT_FIGURES.map((f) => [f, { h: newHistogram(), count: 0, errors: 0 }]));
    const errors: Record<string, number> = {};
    const fail = (figure: Figure, what: string) => {
      histograms.get(figure)!.count++;
      histograms.get(figure)!.errors++;
      errors[what] = (errors[what] ?? 0) + 1;
    };
    const t0 = performance.now();
    const measureFrom = t0 + settings.warmupS * 1000;
    const measureTo = measureFrom + settings.durationS * 1000;
    const measuring = (at: number) => at >= measureFrom && at < measureTo;
    const recordFigure = (figure: Figure, at: number, valueMs: number) => {
      if (!measuring(at)) return;
      const entry = histograms.get(figure)!;
      entry.count++;
      entry.h.recordValue(us(valueMs));
    };
    const stopped = () => performance.now() >= measureTo || settings.signal?.aborted === true;

    // What each editor sees, checked after every update it receives.
    const agentPending = new Set<AgentPending>();
    const keystrokes: Keystroke[][] = editors.map(() => []);
    /** next[f][e]: the first keystroke of editor e not yet seen by editor f. */
    const next: number[][] = editors.map(() => editors.map(() => 0));
    editors.forEach((editor, f) => {
      editor.onRemoteUpdate = () => {
        const now = performance.now();
        for (const p of agentPending) {
          if (p.arrivals[f] !== undefined || editor.text(p.blockId)?.toString() !== p.marker) continue;
          p.arrivals[f] = now;
          if (++p.seen === editorCount) p.done?.();
        }
        for (let e = 0; e < editorCount; e++) {
          if (e === f) continue;
          const list = keystrokes[e]!;
          if (next[f]![e]! >= list.length) continue;
          const length = editor.text(typistIds[e]!)?.length ?? 0;
          while (next[f]![e]! < list.length && list[next[f]![e]!]!.length <= length) {
            const k = list[next[f]![e]!++]!;
            k.last = now;
            if (++k.seen === editorCount - 1 && k.measured) recordFigure('keystroke-to-editors', k.sentAt, now - k.sentAt);
          }
        }
      };
    });

    // Progress and per-second samples (of the agents' edits, as the other workloads' samples are of their operations).
    const seconds = new SecondTicker(t0, measureFrom, measureTo);
    let secondKeys = 0;
    const tick = () => {
      const second = seconds.tick();
      const keys = secondKeys / second.span;
      secondKeys = 0;
      const toEditors = percentilesOf(histograms.get('agent-to-editors')!.h);
      settings.progress?.(
        `${SecondTicker.lead(second)}  ${second.rate.toFixed(0).padStart(5)} agent edits/s  p50 ${second.p50.toFixed(2)} ms  p99 ${second.p99.toFixed(2)} ms  ${keys.toFixed(0)} keys/s  to editors p99 ${toEditors.p99.toFixed(1)} ms  errors ${second.errors}`,
      );
    };
    const timer = setInterval(tick, 1000);

    let stale = 0;
    let requests = 0;
    let successes = 0;
    let remaining: number | null = null;
    let markerSeq = 0;
    /** One agent: edit its block (the latest revision any agent learned; 412 → read → retry), then wait for every editor to hold it. */
    const agent = async (a: number) => {
      while (!stopped()) {
        const marker = `Agent ${a + 1} edit ${++markerSeq}`;
        const pending: AgentPending = { blockId: agentIds[a]!, marker, arrivals: [], seen: 0, done: null };
        const arrived = new Promise<void>((done) => (pending.done = done));
        agentPending.add(pending);
        const startedAt = performance.now();
        let answer: Answer = { status: 0, bytes: 0 };
        let sent = 0;
        let seen412 = 0;
        for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
          answer = await api.mutate(ref, 'edit', revision, key(), { v: 1, intent: 'kw bench coedit', mutation: { kind: 'edit', blockId: agentIds[a]!, block: { type: 'paragraph', markdown: marker } } });
          sent++;
          if (answer.status === 200 && answer.revision) {
            revision = answer.revision;
            break;
          }
          if (answer.status !== 412) break;
          seen412++;
          const fresh = await api.read(ref, 'blocks');
          sent++;
          if (fresh.status !== 200 || !fresh.revision) {
            answer = fresh;
            break;
          }
          revision = fresh.revision;
        }
        const answeredAt = performance.now();
        if (answer.remaining !== undefined) remaining = answer.remaining;
        const ok = answer.status === 200;
        const inWindow = measuring(startedAt);
        if (ok) {
          seconds.success(us(answeredAt - startedAt));
        } else seconds.errors++;
        if (inWindow) {
          requests += sent;
          stale += seen412;
          if (ok) {
            successes++;
            recordFigure('edit', startedAt, answeredAt - startedAt);
          } else fail('edit', errorKey(answer));
        }
        if (!ok) {
          agentPending.delete(pending);
          await sleep(50); // a failing target is not hammered
          continue;
        }
        let timedOut = false;
        if (pending.seen < editorCount) {
          const timeout = setTimeout(() => {
            timedOut = true;
            pending.done?.();
          }, ARRIVAL_MS);
          await arrived;
          clearTimeout(timeout);
        }
        agentPending.delete(pending);
        if (timedOut) {
          if (inWindow) fail('agent-to-editors', `agent edit not at every editor within ${ARRIVAL_MS} ms`);
          continue;
        }
        const last = Math.max(...pending.arrivals.map((t) => t ?? 0));
        recordFigure('agent-to-editors', startedAt, Math.max(0, last - answeredAt));
      }
    };

    /** Typing rounds: every editor types a word, then all wait until the API's version holds every word. */
    const typing = async () => {
      const body = async () => {
        try {
          const raw = await poller.send('GET', `/api/v1/documents/${encodeURIComponent(ref)}`, { authorization: `Bearer ${world.agentToken}` });
          return raw.status === 200 ? raw.body.toString('utf8') : '';
        } catch {
          return '';
        }
      };
      for (let r = 1; !stopped(); r++) {
        // `w3r12;`: no word is part of another (a letter before, `;` after the numbers).
        const words = editors.map((_, e) => `w${e + 1}r${r};`);
        const lastKey: number[] = [];
        await Promise.all(
          editors.map(async (editor, e) => {
            await sleep(Math.random() * KEY_MS);
            const word = ` ${words[e]!}`;
            for (let c = 0; c < word.length; c++) {
              if (c > 0) await sleep(KEY_MS);
              if (editor.ended) return;
              const length = editor.type(typistIds[e]!, word[c]!);
              const sentAt = performance.now();
              keystrokes[e]!.push({ length, sentAt, seen: 0, last: 0, measured: editorCount > 1 && measuring(sentAt) });
              secondKeys++;
              lastKey[e] = sentAt;
            }
          }),
        );
        const versionAt: (number | undefined)[] = [];
        const deadline = Math.max(...lastKey.filter((t) => t !== undefined)) + VERSION_MS;
        while (versionAt.filter((t) => t !== undefined).length < editorCount && performance.now() < deadline && !settings.signal?.aborted) {
          const text = await body();
          const now = performance.now();
          words.forEach((w, e) => {
            if (versionAt[e] === undefined && text.includes(w)) versionAt[e] = now;
          });
          await sleep(POLL_MS);
        }
        editors.forEach((_, e) => {
          const at = versionAt[e];
          if (lastKey[e] === undefined) return;
          if (at === undefined) {
            if (measuring(lastKey[e]!) && !settings.signal?.aborted) fail('keystroke-to-version', `typing not in an API version within ${VERSION_MS} ms`);
          } else recordFigure('keystroke-to-version', lastKey[e]!, at - lastKey[e]!);
        });
        await sleep(100 + Math.random() * 200);
      }
    };

    let stoppedAt = Infinity;
    try {
      await Promise.all([...Array.from({ length: agents }, (_, a) => agent(a)), typing()]);
    } finally {
      stoppedAt = performance.now();
      clearInterval(timer);
    }
    if (seconds.samples.length === 0 || performance.now() - seconds.last > 500) tick();

    // Keystrokes that never reached every other editor.
    for (const list of keystrokes) for (const k of list) if (k.measured && k.seen < editorCount - 1) fail('keystroke-to-editors', `keystroke not at every other editor within the run`);

    // Converged: every editor holds the API's document (the trailing empty paragraph aside).
    let apiText = '';
    let diverged = editorCount;
    const ended = editors.filter((e) => e.ended !== null);
    for (const until = performance.now() + 10_000; performance.now() < until; await sleep(50)) {
      const raw = await poller.send('GET', `/api/v1/documents/${encodeURIComponent(ref)}`, { authorization: `Bearer ${world.agentToken}` }).catch(() => null);
      if (raw?.status !== 200) continue;
      apiText = plainTextOf((JSON.parse(raw.body.toString('utf8')) as { data: { document: { blocks: EditorBlock[] } } }).data.document.blocks);
      diverged = editors.filter((e) => plainTextOf(withoutTrailing(e.blocks())) !== apiText).length;
      if (diverged === 0) break;
    }
    if (diverged > 0) errors['editor not equal to the API document at the end'] = diverged;
    for (const e of ended) errors[`editor connection ended: ${e.ended}`] = (errors[`editor connection ended: ${e.ended}`] ?? 0) + 1;
    notes.push(diverged === 0 ? `all ${editorCount} editors converged on the API's last version (${apiText.split('\n').length} blocks)` : `${diverged} of ${editorCount} editors differ from the API's last version`);
    notes.push(`editors type a word (" w<editor>r<round>;") per round (a key every ${KEY_MS} ms), then wait for the API to hold it; keystroke-to-version includes the server's pause of its version rhythm (1 s by default); the API is read every ${POLL_MS} ms while waiting`);
    if (editorCount === 1) notes.push('one editor: keystroke-to-editors needs two (--editors 2 or more)');

    const durationS = measuredSeconds(settings, measureFrom, stoppedAt, notes);
    return {
      durationS,
      throughput: durationS > 0 ? round1(successes / durationS) : 0,
      latencyMs: percentilesOf(histograms.get('edit')!.h),
      operations: operationFigures(histograms, durationS),
      errors,
      stale,
      requests,
      successes,
      requestsPerSuccess: successes ? Math.round((requests / successes) * 1000) / 1000 : 0,
      samples: seconds.samples,
      scheduleLagMs: null,
      serverRequestsRemaining: remaining,
      documentRefs: [ref],
      notes,
    };
  } finally {
    await Promise.all(editors.map((e) => e.close()));
    if (ref && world.persistent && !settings.keep) {
      const emptied = await emptyDocument(api, ref, key);
      notes.push(emptied ? `emptied the document it made (the API deletes no documents: it keeps its title "kw bench ${run} coedit" and no blocks); --keep keeps it whole` : 'could not empty the document it made');
    } else if (ref && world.persistent) notes.push(`kept the document it made (title "kw bench ${run} coedit")`);
    poller.close();
    await api.close({ keep: true });
  }
}

/** The blocks without the editor's trailing empty paragraph (not an API block). */
function withoutTrailing(blocks: EditorBlock[]): EditorBlock[] {
  const last = blocks.at(-1);
  return last && last.type === 'paragraph' && Array.isArray(last.content) && last.content.length === 0 && last.children.length === 0 ? blocks.slice(0, -1) : blocks;
}

/** Delete every block of the document (cleanup). */
async function emptyDocument(api: BenchTarget, ref: string, key: () => string): Promise<boolean> {
  const read = await api.read(ref, 'blocks');
  if (read.status !== 200 || !read.revision) return false;
  let revision = read.revision;
  const ids = read.blockIds ?? [];
  for (let i = 0; i < ids.length; i += 64) {
    const out = await api.mutate(ref, 'delete', revision, key(), { v: 1, intent: 'kw bench cleanup', mutation: { kind: 'delete', blockIds: ids.slice(i, i + 64) } });
    if (out.status !== 200 || !out.revision) return false;
    revision = out.revision;
  }
  return true;
}
