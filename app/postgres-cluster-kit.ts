/**
 * Kit of the several-processes tests and benchmark: `kw serve --storage postgres` children on one
 * database, and a small HTTP client for them.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The repository root: the bench's KW_BENCH_ROOT (the checkout it was built from), else above this
 * file in the sources, above the bundle's cache folder in the bench.
 */
function findRoot(): string {
  const given = process.env.KW_BENCH_ROOT;
  if (given && existsSync(join(given, 'app', 'cli.ts'))) return given;
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'app', 'cli.ts'))) return dir;
    if (dirname(dir) === dir) return resolve(import.meta.dirname, '..');
  }
}
const root = findRoot();

/** One running `kw serve` child. */
export interface ServerProcess {
  url: string;
  operatorKey: string;
  demoToken: string | null;
  child: ChildProcess;
  /** Everything it wrote on stderr so far. */
  stderr(): string;
  /** Ends it (SIGTERM, or `SIGKILL`) and waits for its exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `n` processes on `databaseUrl` (null: each on its own memory storage) at once; resolves when each printed its `--json` line. */
export async function startProcesses(n: number, databaseUrl: string | null, options: { operatorKey?: string; seed?: boolean; extra?: string[]; root?: string } = {}): Promise<ServerProcess[]> {
  const operatorKey = options.operatorKey ?? randomBytes(24).toString('base64url');
  const storage = databaseUrl === null ? ['--storage', 'memory'] : ['--storage', 'postgres', '--database-url', databaseUrl];
  const started = await Promise.allSettled(Array.from({ length: n }, () => startOne(storage, operatorKey, options.seed ?? true, options.extra ?? [], options.root ?? root)));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(started.flatMap((s) => (s.status === 'fulfilled' ? [s.value.stop('SIGKILL')] : [])));
    throw (failed as PromiseRejectedResult).reason;
  }
  return started.map((s) => (s as PromiseFulfilledResult<ServerProcess>).value);
}

/** One `kw serve` child on a lowdb data folder (no seed); resolves when it printed its `--json` line. */
export function startLowdbProcess(data: string, operatorKey: string = randomBytes(24).toString('base64url')): Promise<ServerProcess> {
  return startOne(['--storage', 'lowdb', '--data', data], operatorKey, false, [], root);
}

/**
 * One child with `storage` (its `--storage …` arguments). `from` is the checkout whose `app/cli.ts`
 * runs (the bench compares two).
 */
async function startOne(storage: string[], operatorKey: string, seed: boolean, extra: string[], from: string): Promise<ServerProcess> {
  // KW_BENCH_SERVE_NODE_ARGS: node options for every child (e.g. `--cpu-prof --cpu-prof-dir=DIR`, which NODE_OPTIONS refuses).
  const nodeArgs = (process.env.KW_BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const args = [...nodeArgs, '--import', 'tsx', 'app/cli.ts', 'serve', ...storage, '--port', '0', '--json', '--quiet', '--seed', seed ? 'demo' : 'none', ...extra];
  const child = spawn(process.execPath, args, { cwd: from, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KW_OPERATOR_KEY: operatorKey } });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    new Promise<string>((done) => lines.once('line', done)),
    exited.then(() => Promise.reject(new Error(`kw serve exited before its first line: ${stderr}`))),
    new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`kw serve printed no line within 120 s: ${stderr}`)), 120_000).unref()),
  ]).catch(async (error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  const line = JSON.parse(first) as { url: string; operatorKey: string; demo: { token: string } | null };
  return {
    url: line.url,
    operatorKey: line.operatorKey,
    demoToken: line.demo?.token ?? null,
    child,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** An answer of {@link call}. */
export interface Answer {
  status: number;
  headers: Headers;
  json: any;
}

/** One JSON request; `token` as bearer. A network failure rejects. */
export async function call(base: string, method: string, path: string, token: string, init: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: init.body === undefined ? null : JSON.stringify(init.body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text === '' ? null : JSON.parse(text) };
}

/** A fresh idempotency key. */
export const idemKey = () => `k_${randomBytes(12).toString('hex')}`;

/** Creates a document through `base`; resolves with its ref. */
export async function createDocument(base: string, token: string, title: string): Promise<string> {
  const r = await call(base, 'POST', '/api/v1/documents', token, { headers: { 'idempotency-key': idemKey() }, body: { v: 1, title } });
  if (r.status !== 201) throw new Error(`create answered ${r.status}: ${JSON.stringify(r.json)}`);
  return r.json.data.documentRef as string;
}

/** The mutation body that appends one paragraph of `text` at the end. */
export const appendParagraph = (text: string) => ({
  v: 1,
  intent: 'append a paragraph',
  mutation: { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks: [{ type: 'paragraph', markdown: text }] },
});

/** What one edit took: the answer that ended it and the attempts (412 answers retried). */
export interface EditResult {
  status: number;
  resultingVersion: number | null;
  attempts: number;
  ms: number;
}

/**
 * Appends a paragraph through `bases[i % n]`: read the revision (HEAD), mutate with it; a stale
 * revision (412) or a lost race is read again. A network error or 503 moves to the next process
 * with the same idempotency key (its outcome was not acknowledged). Resolves with the final answer.
 */
export async function editOnce(bases: () => string[], start: number, token: string, ref: string, text: string): Promise<EditResult> {
  const began = performance.now();
  const key = idemKey();
  let revision: string | null = null;
  for (let attempt = 1; attempt <= 500; attempt++) {
    const list = bases();
    const base = list[(start + attempt) % list.length]!;
    try {
      if (revision === null) {
        const head = await fetch(`${base}/api/v1/documents/${ref}`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
        if (head.status !== 200) continue;
        revision = head.headers.get('service-revision');
      }
      const r = await call(base, 'POST', `/api/v1/documents/${ref}/mutations`, token, {
        headers: { 'idempotency-key': key, 'service-if-revision': revision! },
        body: appendParagraph(text),
      });
      if (r.status === 200) return { status: 200, resultingVersion: r.json.data.receipt.resultingVersion as number, attempts: attempt, ms: performance.now() - began };
      if (r.status === 412 || r.status === 409) {
        // Another writer got there first: a new intent with a new key, on the new revision.
        revision = null;
        return editOnce(bases, start + 1, token, ref, text).then((next) => ({ ...next, attempts: next.attempts + attempt, ms: performance.now() - began }));
      }
      if (r.status !== 503) return { status: r.status, resultingVersion: null, attempts: attempt, ms: performance.now() - began };
    } catch {
      // The process went away: retry elsewhere with the same key.
    }
    await new Promise((done) => setTimeout(done, 20));
  }
  return { status: 0, resultingVersion: null, attempts: 500, ms: performance.now() - began };
}
