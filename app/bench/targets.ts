/**
 * Where `kw bench` sends its operations, behind one interface: the engine in this process (memory,
 * lowdb, postgres; no HTTP), a running service over HTTP, and the two same-run baselines (raw Yjs
 * doing the same operations; a bare node:http server answering the same sizes).
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as Y from 'yjs';
import { lowdbStorage } from '../../adapters/lowdb/index.ts';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { postgresStorage } from '../../adapters/postgres/index.ts';
import { statusOf } from '../../src/api/status.ts';
import type { Actor } from '../../src/actor.ts';
import { createEngine, type Engine } from '../../src/engine.ts';
import { ServiceError } from '../../src/errors.ts';
import type { Storage } from '../../src/ports.ts';
import { leanHttpClient, type RawResponse } from './http-client.ts';
import type { TargetSpec } from './options.ts';
import type { Operation } from './workloads.ts';

/** One answer of the target, reduced to what the bench keeps. */
export interface Answer {
  /** HTTP status (in-process: the status the API would answer); 0 for a network failure. */
  status: number;
  /** The error code of an error answer, or a network error's code (`ECONNRESET`, `timeout`). */
  code?: string;
  /** Size of the answer's body in bytes. */
  bytes: number;
  /** The document's revision after the operation (Service-Revision). */
  revision?: string;
  /** Ids of the blocks a create made (create, append). */
  created?: string[];
  /** Top-level block ids, in order (a `blocks` read). */
  blockIds?: string[];
  /** X-Service-Requests-Remaining of the answer, when the server sends it. */
  remaining?: number;
}

/** The body of a mutation request (DocumentMutationRequest). */
export interface MutationBody {
  v: 1;
  intent: string;
  mutation: Record<string, unknown>;
}

/** A refusal of the target before or during the run (exit 1): a token refused, a scope missing, storage unreachable. */
export class TargetRefused extends Error {
  override readonly name = 'TargetRefused';
}

export interface BenchTarget {
  /** `http://…` or `in-process memory` and the like, for the report. */
  readonly label: string;
  readonly kind: 'http' | 'memory' | 'lowdb' | 'postgres' | 'raw-yjs' | 'bare-http';
  /** Whether documents made outlive the run (so cleanup empties them). */
  readonly persistent: boolean;
  /** Check the target will take the run (token, scopes); throws {@link TargetRefused}. */
  preflight(needs: { write: boolean }): Promise<{ notes: string[] }>;
  createDocument(title: string, key: string): Promise<Answer & { ref?: string }>;
  read(ref: string, format: 'rich-json' | 'blocks'): Promise<Answer>;
  mutate(ref: string, op: Operation, revision: string, key: string, body: MutationBody): Promise<Answer>;
  close(options: { keep: boolean }): Promise<string[]>;
}

// ---------------------------------------------------------------------------------------------
// In-process: the engine, no HTTP

const ACTOR: Actor = { accountId: 'bench', credentialRef: null, documentRef: null };

function failure(error: unknown): Answer {
  if (error instanceof ServiceError) return { status: statusOf(error.code), code: error.code, bytes: 0 };
  throw error;
}

/** The engine over a storage adapter, called as an embedding program calls it. */
/** A run's own lowdb data folder at its end: kept with --keep (and said so), else removed. */
export async function dropDataFolder(tempDir: string | null, keep: boolean): Promise<string[]> {
  if (tempDir === null) return [];
  if (keep) return [`kept the lowdb data folder ${tempDir}`];
  await rm(tempDir, { recursive: true, force: true });
  return [];
}

export async function engineTarget(spec: Exclude<TargetSpec, { kind: 'http' }>): Promise<BenchTarget> {
  let storage: Storage;
  let tempDir: string | null = null;
  try {
    if (spec.kind === 'memory') storage = memoryStorage();
    else if (spec.kind === 'lowdb') {
      const dir = spec.data ?? (tempDir = await mkdtemp(join(tmpdir(), 'kw-bench-')));
      storage = await lowdbStorage({ dir });
    } else storage = await postgresStorage({ url: spec.databaseUrl });
  } catch (error) {
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
    throw new TargetRefused(`cannot open ${spec.kind} storage: ${(error as Error).message}`);
  }
  return engineTargetOver(createEngine({ storage }), spec.kind, tempDir, spec.kind === 'lowdb' && spec.data !== undefined ? `in-process lowdb (${spec.data})` : `in-process ${spec.kind}`);
}

/** {@link engineTarget} over an engine the caller made (the project's own benches). */
export function engineTargetOver(engine: Engine, kind: 'memory' | 'lowdb' | 'postgres', tempDir: string | null = null, label = `in-process ${kind}`): BenchTarget {
  return {
    label,
    kind,
    persistent: kind === 'postgres' || (kind === 'lowdb' && tempDir === null),
    async preflight() {
      return { notes: [] };
    },
    async createDocument(title, key) {
      try {
        const out = await engine.documents.create(ACTOR, { idempotencyKey: key, body: { v: 1, title } });
        return { status: 201, bytes: 0, ref: out.document.documentRef, revision: out.document.revision };
      } catch (error) {
        return failure(error);
      }
    },
    async read(ref, format) {
      try {
        const out = await engine.documents.read(ACTOR, ref, format);
        if (out.format === 'blocks') return { status: 200, bytes: 0, revision: out.revision, blockIds: out.blocks.filter((b) => b.parentBlockId === null).map((b) => b.id) };
        // The canonical JSON as the API would send it (rendered on first use, then cached by version).
        const json = out.format === 'rich-json' ? out.document.documentJson : '';
        return { status: 200, bytes: json.length, revision: out.revision };
      } catch (error) {
        return failure(error);
      }
    },
    async mutate(ref, _op, revision, key, body) {
      try {
        const out = await engine.documents.mutate(ACTOR, ref, { idempotencyKey: key, ifRevision: revision, body });
        const kind = body.mutation.kind;
        return { status: 200, bytes: 0, revision: out.document.revision, ...(kind === 'create' ? { created: [...out.receipt.affectedBlockIds] } : {}) };
      } catch (error) {
        return failure(error);
      }
    },
    async close({ keep }) {
      await engine.close();
      return dropDataFolder(tempDir, keep);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP: any running service

type Raw = RawResponse;

/** The client of the HTTP targets (app/bench/http-client.ts: lighter than node:http, as a load generator must be). */
export const httpClient = leanHttpClient;

function networkFailure(error: unknown): Answer {
  return { status: 0, code: (error as NodeJS.ErrnoException).code ?? (error as Error).message, bytes: 0 };
}

function errorCode(body: Buffer): string | undefined {
  try {
    return (JSON.parse(body.toString('utf8')) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

function answerOf(raw: Raw): Answer {
  const remaining = Number(raw.headers['x-service-requests-remaining']);
  const revision = raw.headers['service-revision'];
  return {
    status: raw.status,
    bytes: raw.body.byteLength,
    ...(typeof revision === 'string' ? { revision } : {}),
    ...(Number.isFinite(remaining) && raw.headers['x-service-requests-remaining'] !== undefined ? { remaining } : {}),
    ...(raw.status >= 400 ? { code: errorCode(raw.body) ?? `HTTP ${raw.status}` } : {}),
  };
}

/** A running service over HTTP, with a bearer token. */
export function httpTarget(base: string, token: string, sockets: number): BenchTarget {
  const client = httpClient(base, sockets);
  const auth = `Bearer ${token}`;
  return {
    label: base,
    kind: 'http',
    persistent: true,
    async preflight(needs) {
      let raw: Raw;
      try {
        raw = await client.send('GET', '/api/v1/auth', { authorization: auth }, undefined, 10_000);
      } catch (error) {
        throw new TargetRefused(`cannot reach ${base}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      const code = errorCode(raw.body);
      if (raw.status === 401) throw new TargetRefused(`${base} refused the token (401 ${code ?? ''}): give a valid token with --token or KW_TOKEN`);
      if (raw.status !== 200) throw new TargetRefused(`${base} answered GET /api/v1/auth with ${raw.status}${code ? ` ${code}` : ''}; is it a knowledge-workspace API?`);
      let principal: { scopes?: string[]; documentRef?: string | null; remainingBudget?: number };
      try {
        principal = (JSON.parse(raw.body.toString('utf8')) as { data: typeof principal }).data;
      } catch {
        throw new TargetRefused(`${base} answered GET /api/v1/auth with a body that is not the API's JSON`);
      }
      const scopes = new Set(principal.scopes ?? []);
      // Every workload writes: the bench makes its own documents and their blocks (then empties them).
      const needed = ['document:create', 'document:read', 'document:write'];
      const missing = needed.filter((s) => !scopes.has(s));
      if (missing.length > 0) throw new TargetRefused(`the token lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, which kw bench needs (it makes its own documents, writes their blocks${needs.write ? ', edits' : ''} and reads them)`);
      if (principal.documentRef) throw new TargetRefused('the token is bound to one document; kw bench makes its own documents: use an account-wide token');
      const notes: string[] = [];
      if (typeof principal.remainingBudget === 'number') notes.push(`the token's request budget: ${principal.remainingBudget} requests left in its window (answers 429 when spent)`);
      return { notes };
    },
    async createDocument(title, key) {
      try {
        const raw = await client.send('POST', '/api/v1/documents', { authorization: auth, 'content-type': 'application/json', 'idempotency-key': key }, JSON.stringify({ v: 1, title }));
        const answer = answerOf(raw);
        if (raw.status !== 201 && raw.status !== 200) return answer;
        return { ...answer, ref: (JSON.parse(raw.body.toString('utf8')) as { data: { documentRef: string } }).data.documentRef };
      } catch (error) {
        return networkFailure(error);
      }
    },
    async read(ref, format) {
      try {
        const raw = await client.send('GET', `/api/v1/documents/${encodeURIComponent(ref)}${format === 'blocks' ? '?format=blocks' : ''}`, { authorization: auth });
        const answer = answerOf(raw);
        if (format === 'blocks' && raw.status === 200) {
          const blocks = (JSON.parse(raw.body.toString('utf8')) as { data: { blocks: { id: string; parentBlockId: string | null }[] } }).data.blocks;
          answer.blockIds = blocks.filter((b) => b.parentBlockId === null).map((b) => b.id);
        }
        return answer;
      } catch (error) {
        return networkFailure(error);
      }
    },
    async mutate(ref, _op, revision, key, body) {
      try {
        const raw = await client.send(
          'POST',
          `/api/v1/documents/${encodeURIComponent(ref)}/mutations`,
          { authorization: auth, 'content-type': 'application/json', 'idempotency-key': key, 'service-if-revision': revision },
          JSON.stringify(body),
        );
        const answer = answerOf(raw);
        // Only a create needs the body (the new block ids); the others read the revision header alone.
        if (raw.status === 200 && body.mutation.kind === 'create') {
          answer.created = (JSON.parse(raw.body.toString('utf8')) as { data: { receipt: { affectedBlockIds: string[] } } }).data.receipt.affectedBlockIds;
        }
        return answer;
      } catch (error) {
        return networkFailure(error);
      }
    },
    async close() {
      client.close();
      return [];
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Baselines

/**
 * Text of the n-th block of a document of `size` blocks, the same in the engine's documents and the
 * raw Yjs baseline. From 5,000 blocks on it is short plain text: 10,000 blocks of the richer text
 * (~305 bytes of rich-json each) would pass the API's 2 MB response limit, which every mutation keeps.
 */
export const blockText = (n: number, size: number) => (size >= 5000 ? `Block ${n}` : `Block ${n} with some **text** in it.`);

/**
 * The in-process baseline: raw Yjs doing the same operations. A document is a Y.Map of block records
 * (type, parent, order key, Markdown); an operation is one transaction whose update is captured; a
 * read serializes the map to JSON. No validation, ids, revisions, idempotency or storage: the floor.
 */
export function rawYjsTarget(): BenchTarget {
  const docs = new Map<string, { doc: Y.Doc; map: Y.Map<Record<string, unknown>>; version: number; last: Uint8Array | null }>();
  let seq = 0;
  return {
    label: 'raw Yjs (in-process)',
    kind: 'raw-yjs',
    persistent: false,
    async preflight() {
      return { notes: [] };
    },
    async createDocument() {
      const doc = new Y.Doc();
      const entry = { doc, map: doc.getMap<Record<string, unknown>>('blocks'), version: 1, last: null as Uint8Array | null };
      doc.on('update', (u: Uint8Array) => {
        entry.last = u;
      });
      const ref = `raw${docs.size}`;
      docs.set(ref, entry);
      return { status: 201, bytes: 0, ref, revision: '1' };
    },
    async read(ref, format) {
      const d = docs.get(ref)!;
      if (format === 'blocks') return { status: 200, bytes: 0, revision: String(d.version), blockIds: [...d.map.keys()] };
      return { status: 200, bytes: JSON.stringify(d.map.toJSON()).length, revision: String(d.version) };
    },
    async mutate(ref, _op, _revision, _key, body) {
      const d = docs.get(ref)!;
      const m = body.mutation as { kind: string; blockId?: string; blockIds?: string[]; block?: { markdown: string }; blocks?: { type: string; markdown: string }[]; beforeBlockId?: string | null };
      let created: string[] | undefined;
      d.doc.transact(() => {
        seq++;
        if (m.kind === 'edit') d.map.set(m.blockId!, { ...d.map.get(m.blockId!), md: m.block!.markdown });
        else if (m.kind === 'move') for (const id of m.blockIds!) d.map.set(id, { ...d.map.get(id), o: `m${seq}` });
        else if (m.kind === 'delete') for (const id of m.blockIds!) d.map.delete(id);
        else {
          created = m.blocks!.map((b, i) => {
            const id = `b${seq}_${i}`;
            d.map.set(id, { t: b.type, p: null, o: `c${seq}_${i}`, md: b.markdown });
            return id;
          });
        }
      });
      d.version++;
      return { status: 200, bytes: d.last?.byteLength ?? 0, revision: String(d.version), ...(created ? { created } : {}) };
    },
    async close() {
      docs.clear();
      return [];
    },
  };
}

/** The bare server of the HTTP baseline: answers every request with `?bytes=N` bytes of JSON, after reading its body. */
const BARE_SERVER = `
const http = require('node:http');
const bodies = new Map();
const server = http.createServer((req, res) => {
  const n = Math.max(2, Number(new URL(req.url, 'http://x').searchParams.get('bytes')) || 2);
  let body = bodies.get(n);
  if (!body) bodies.set(n, (body = Buffer.from('"' + 'x'.repeat(n - 2) + '"')));
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.byteLength, 'service-revision': '"r"' });
    res.end(body);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

/**
 * The HTTP baseline: a bare node:http server on loopback (its own process, as the target is) that
 * answers each request with a body of the size the target answered that operation with (mean bytes
 * per operation, from the measured run); requests carry the same bodies as the target's.
 */
export async function bareHttpTarget(sizes: Partial<Record<Operation | 'read-blocks', number>>, sockets: number): Promise<BenchTarget> {
  const child: ChildProcess = spawn(process.execPath, ['-e', BARE_SERVER], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((done, fail) => {
    let text = '';
    child.stdout!.on('data', (c: Buffer) => {
      text += c.toString('utf8');
      if (text.includes('\n')) done((JSON.parse(text) as { port: number }).port);
    });
    child.once('exit', (code) => fail(new Error(`the bare node:http baseline server exited with ${code}`)));
  });
  const client = httpClient(`http://127.0.0.1:${port}`, sockets);
  let docs = 0;
  const bytes = (op: Operation | 'read-blocks') => Math.round(sizes[op] ?? 2);
  return {
    label: `bare node:http (loopback, port ${port})`,
    kind: 'bare-http',
    persistent: false,
    async preflight() {
      return { notes: [] };
    },
    async createDocument() {
      return { status: 201, bytes: 0, ref: `bare${docs++}`, revision: '"r"' };
    },
    async read(_ref, format) {
      try {
        const raw = await client.send('GET', `/?bytes=${bytes(format === 'blocks' ? 'read-blocks' : 'read')}`, { authorization: 'Bearer x' });
        return { ...answerOf(raw), ...(format === 'blocks' ? { blockIds: [] } : {}) };
      } catch (error) {
        return networkFailure(error);
      }
    },
    async mutate(_ref, op, revision, key, body) {
      try {
        const raw = await client.send('POST', `/?bytes=${bytes(op)}`, { authorization: 'Bearer x', 'content-type': 'application/json', 'idempotency-key': key, 'service-if-revision': revision }, JSON.stringify(body));
        return { ...answerOf(raw), ...(body.mutation.kind === 'create' ? { created: [`bare${key}`] } : {}) };
      } catch (error) {
        return networkFailure(error);
      }
    },
    async close() {
      client.close();
      child.stdin!.end();
      await new Promise((done) => (child.exitCode !== null ? done(null) : child.once('exit', done)));
      return [];
    },
  };
}

/** The target of a command line. */
export function targetOf(spec: TargetSpec, clients: number): Promise<BenchTarget> {
  return spec.kind === 'http' ? Promise.resolve(httpTarget(spec.url, spec.token, clients)) : engineTarget(spec);
}
